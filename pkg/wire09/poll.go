package wire09

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// PollIterator walks the records of a poll reply without allocating. It
// checks the layout (record headers, frames covering each record, the sum of
// frames equal to the prefix's messages_count) but not the checksums, as
// both SDKs do.
type PollIterator struct {
	prefix  iggywire.PollPrefix
	records []byte // records not yet entered
	frames  []byte // frames left in the current record
	left    uint32 // frames the current record still announces
	base    BatchHeader
	seen    uint32
	err     error
}

// NewPollIterator decodes the prefix of a poll reply body.
func NewPollIterator(body []byte) (PollIterator, error) {
	p, records, err := iggywire.DecodePollPrefix(body)
	if err != nil {
		return PollIterator{}, err
	}
	return PollIterator{prefix: p, records: records}, nil
}

// Prefix is the reply's prefix.
func (it *PollIterator) Prefix() iggywire.PollPrefix { return it.prefix }

// Next fills m with the next message and reports whether there was one. At
// the end (or on a fault) it returns false; Err tells which.
func (it *PollIterator) Next(m *iggywire.PolledMessage) bool {
	if it.err != nil {
		return false
	}
	for it.left == 0 {
		if len(it.frames) != 0 {
			it.err = iggywire.Malformed(fmt.Sprintf("poll reply: %d bytes after the announced frames of a record", len(it.frames)))
			return false
		}
		if len(it.records) == 0 {
			if it.seen != it.prefix.MessagesCount {
				it.err = iggywire.Malformed(fmt.Sprintf("poll reply: prefix counts %d messages, records hold %d", it.prefix.MessagesCount, it.seen))
			}
			return false
		}
		h, err := DecodeBatchHeader(it.records)
		if err != nil {
			it.err = err
			return false
		}
		if h.Length > uint64(len(it.records)) {
			it.err = iggywire.Malformed(fmt.Sprintf("poll reply: record of %d bytes, %d left", h.Length, len(it.records)))
			return false
		}
		if h.Count == 0 {
			it.err = iggywire.Malformed("poll reply: record with zero messages")
			return false
		}
		it.base = h
		it.frames = it.records[BatchHeaderSize:h.Length]
		it.records = it.records[h.Length:]
		it.left = h.Count
	}
	// The frame is read in place here rather than through nextFrame: this runs once per message
	// on a sink's hot path, and the inlined reads cost a third of the call. A frame that does not
	// fit goes to nextFrame, which names the fault.
	b := it.frames
	if len(b) < FrameHeaderSize {
		_, it.err = nextFrame(b)
		return false
	}
	h := b[:FrameHeaderSize:FrameHeaderSize]
	le := binary.LittleEndian
	payloadLen, headersLen := uint64(le.Uint32(h[offFramePayloadLen:])), uint64(le.Uint32(h[offFrameHeadersLen:]))
	size := FrameHeaderSize + payloadLen + headersLen
	if le.Uint64(h[offFrameReserved:]) != 0 || size > uint64(len(b)) {
		_, it.err = nextFrame(b)
		return false
	}
	it.frames = b[size:]
	it.left--
	it.seen++
	if it.seen > it.prefix.MessagesCount {
		it.err = tooManyMessages(it.prefix.MessagesCount)
		return false
	}
	m.Offset = it.base.BaseOffset + uint64(le.Uint32(h[offFrameOffsetDelta:]))
	m.Timestamp = it.base.BaseTimestamp
	m.OriginTimestamp = it.base.OriginTimestamp + uint64(le.Uint32(h[offFrameTimeDelta:]))
	m.ID = [16]byte(h[offFrameID : offFrameID+16])
	m.Checksum = le.Uint64(h)
	end := FrameHeaderSize + payloadLen
	m.Payload = b[FrameHeaderSize:end:end]
	m.Headers = b[end:size:size]
	return true
}

func tooManyMessages(count uint32) error {
	return iggywire.Malformed(fmt.Sprintf("poll reply: prefix counts %d messages, records hold more", count))
}

// Err is the layout fault that stopped the iteration, or nil.
func (it *PollIterator) Err() error { return it.err }
