package devbroker

import (
	"encoding/binary"
	"math"

	"github.com/iggy-connectors-go/runtime/pkg/wire08"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
	"github.com/zeebo/xxh3"
)

// Batches are stored in the format of the protocol that sent them (state.go);
// these convert between the two when the other protocol polls them. Offsets,
// ids, timestamps, payloads and user headers carry over unchanged; checksums
// are computed for the format written.

const (
	recordHeaderSize = wire09.BatchHeaderSize
	frameHdrSize     = wire09.FrameHeaderSize
)

// appendRecord stores a verified 0.9 batch record: it stamps partition,
// base offset and base timestamp (recomputing the batch checksum) and
// returns the base offset. Ids stay as sent: 0.9 never fills a zero id.
func (p *partition) appendRecord(record []byte, count uint32, now uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	stored := p.newBatchLocked(len(record), int(count))
	stored.record = true
	stored.data = append(stored.data, record...)
	for pos := recordHeaderSize; pos < len(stored.data); {
		f := stored.data[pos:]
		pos += frameHdrSize + int(binary.LittleEndian.Uint32(f[32:])) + int(binary.LittleEndian.Uint32(f[36:]))
		stored.ends = append(stored.ends, uint32(pos))
	}
	timestamp := max(now, p.lastTimestamp)
	p.lastTimestamp = timestamp
	stored.firstOffset = p.nextOffset
	stored.timestamp = timestamp
	wire09.StampBatch(stored.data, uint64(p.id), stored.firstOffset, timestamp)
	p.addBatchLocked(stored)
	return stored.firstOffset
}

// appendRecordAsMessages appends messages [first, last) of a record batch in
// the 0.8 layout (64-byte header, payload, user headers).
func appendRecordAsMessages(dst []byte, b *batch, first, last int) []byte {
	le := binary.LittleEndian
	base := le.Uint64(b.data[8:])
	origin := le.Uint64(b.data[24:])
	for i := first; i < last; i++ {
		f := b.data[b.messageStart(i):b.ends[i]]
		start := len(dst)
		dst = wire08.AppendMessageHeader(dst, wire08.MessageHeader{ID: [16]byte(f[8:24]),
			Offset: base + uint64(le.Uint32(f[24:])), Timestamp: b.timestamp, OriginTimestamp: origin + uint64(le.Uint32(f[28:])),
			HeadersLength: le.Uint32(f[32:]), PayloadLength: le.Uint32(f[36:])})
		dst = append(dst, f[frameHdrSize:]...) // payload then user headers, in both layouts
		wire08.SealMessage(dst[start:])
	}
	return dst
}

// appendRecordSlice appends messages [first, last) of a record batch as a poll
// reply carries them: the stored record whole, or a slice of it (§11.4).
func appendRecordSlice(dst []byte, b *batch, first, last int) []byte {
	if first == 0 && last == len(b.ends) {
		return append(dst, b.data...)
	}
	return wire09.AppendSlice(dst, b.data, first, last-first)
}

// appendMessagesAsRecords appends messages [first, last) of a 0.8 batch as
// 0.9 batch records based at the batch's first offset. Origin timestamps
// further apart than a u32 of microseconds go into separate records.
func appendMessagesAsRecords(dst []byte, b *batch, first, last int, partitionID uint32) []byte {
	origin := func(i int) uint64 { return wire08.DecodeMessageHeader(b.data[b.messageStart(i):]).OriginTimestamp }
	for s := first; s < last; {
		lo, hi := origin(s), origin(s)
		e := s + 1
		for ; e < last; e++ {
			o := origin(e)
			if max(hi, o)-min(lo, o) > math.MaxUint32 {
				break
			}
			lo, hi = min(lo, o), max(hi, o)
		}
		dst = appendMessagesRecord(dst, b, s, e, lo, partitionID)
		s = e
	}
	return dst
}

func appendMessagesRecord(dst []byte, b *batch, first, last int, origin uint64, partitionID uint32) []byte {
	le := binary.LittleEndian
	start := len(dst)
	dst = append(dst, make([]byte, recordHeaderSize)...)
	for i := first; i < last; i++ {
		m := b.data[b.messageStart(i):b.ends[i]]
		h := wire08.DecodeMessageHeader(m)
		fs := len(dst)
		dst = append(dst, make([]byte, frameHdrSize)...)
		f := dst[fs:]
		copy(f[8:24], h.ID[:])
		le.PutUint32(f[24:], uint32(i))
		le.PutUint32(f[28:], uint32(h.OriginTimestamp-origin))
		le.PutUint32(f[32:], h.HeadersLength)
		le.PutUint32(f[36:], h.PayloadLength)
		dst = append(dst, m[wire08.MessageHeaderSize:]...)
		le.PutUint64(dst[fs:], xxh3.Hash(dst[fs+8:]))
	}
	rec := dst[start:]
	le.PutUint64(rec[24:], origin)
	le.PutUint64(rec[32:], uint64(len(rec)))
	le.PutUint32(rec[48:], uint32(last-first))
	wire09.StampBatch(rec, uint64(partitionID), b.firstOffset, b.timestamp)
	return dst
}

// readRecordsLocked is readLocked for 0.9 polls: it appends the messages
// [from, to) as batch records and returns the offset after the last one.
func (p *partition) readRecordsLocked(from, to uint64, dst []byte) ([]byte, uint64) {
	for i := p.batchIndexLocked(from); i < len(p.batches) && from < to && len(dst) < maxPollBytes; i++ {
		b := &p.batches[i]
		first := int(from - b.firstOffset)
		last := int(min(to-b.firstOffset, uint64(len(b.ends))))
		if b.record {
			dst = appendRecordSlice(dst, b, first, last)
		} else {
			dst = appendMessagesAsRecords(dst, b, first, last, p.id)
		}
		from = b.firstOffset + uint64(last)
	}
	return dst, from
}
