package wire08

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/zeebo/xxh3"
)

// MessageHeaderSize is one message's header: checksum u64, id u128, offset u64, timestamp
// u64, origin timestamp u64, user-headers length u32, payload length u32, reserved u64. The
// payload follows, then the user headers.
const MessageHeaderSize = 64

// Field offsets inside a message header.
const (
	offChecksum       = 0
	offID             = 8
	offOffset         = 24
	offTimestamp      = 32
	offOriginTime     = 40
	offHeadersLength  = 48
	offPayloadLength  = 52
	indexSize         = 16 // one SendMessages index entry: [u32 offset 0][u32 cumulative end][u64 timestamp 0]
	sendMetadataFixed = 4  // the metadata length field itself
)

// MessageHeader is a message header as stored and polled.
type MessageHeader struct {
	Checksum        uint64
	ID              [16]byte
	Offset          uint64
	Timestamp       uint64
	OriginTimestamp uint64
	HeadersLength   uint32
	PayloadLength   uint32
}

// DecodeMessageHeader reads the header at the start of msg, which holds at least
// MessageHeaderSize bytes.
func DecodeMessageHeader(msg []byte) MessageHeader {
	le := binary.LittleEndian
	return MessageHeader{Checksum: le.Uint64(msg[offChecksum:]), ID: [16]byte(msg[offID : offID+16]),
		Offset: le.Uint64(msg[offOffset:]), Timestamp: le.Uint64(msg[offTimestamp:]), OriginTimestamp: le.Uint64(msg[offOriginTime:]),
		HeadersLength: le.Uint32(msg[offHeadersLength:]), PayloadLength: le.Uint32(msg[offPayloadLength:])}
}

// AppendMessageHeader appends a header (reserved zero).
func AppendMessageHeader(dst []byte, h MessageHeader) []byte {
	dst = iggywire.AppendU64(dst, h.Checksum)
	dst = append(dst, h.ID[:]...)
	dst = iggywire.AppendU64(dst, h.Offset)
	dst = iggywire.AppendU64(dst, h.Timestamp)
	dst = iggywire.AppendU64(dst, h.OriginTimestamp)
	dst = iggywire.AppendU32(dst, h.HeadersLength)
	dst = iggywire.AppendU32(dst, h.PayloadLength)
	return iggywire.AppendU64(dst, 0)
}

// MessageID is the 16 id bytes of the message msg starts with, in place.
func MessageID(msg []byte) []byte { return msg[offID : offID+16 : offID+16] }

// StampMessage writes what a server fills in when it stores a message: its offset and
// timestamp, then the checksum (SealMessage). msg is the whole message.
func StampMessage(msg []byte, offset, timestamp uint64) {
	binary.LittleEndian.PutUint64(msg[offOffset:], offset)
	binary.LittleEndian.PutUint64(msg[offTimestamp:], timestamp)
	SealMessage(msg)
}

// SealMessage writes a whole message's checksum: XXH3-64 of everything after the checksum
// field.
func SealMessage(msg []byte) {
	binary.LittleEndian.PutUint64(msg[offChecksum:], xxh3.Hash(msg[offID:]))
}

// SendMetadata is what a SendMessages (101) request says before its messages.
type SendMetadata struct {
	iggywire.TopicRef
	Partitioning iggywire.Partitioning
}

// AppendSendMessages appends a SendMessages payload holding msgs as a client sends them: the
// metadata (its length first), the message count, one index entry per message (offset and
// timestamp 0, the cumulative end of the message), then each message with checksum, offset and
// timestamp 0, its payload and its user headers.
func AppendSendMessages(dst []byte, md SendMetadata, msgs []iggywire.Message) ([]byte, error) {
	if len(msgs) == 0 {
		return dst, iggywire.Errorf(iggywire.StatusInvalidMessagesCount, "send messages: no messages")
	}
	start := len(dst)
	size := sendMetadataFixed + 2*(2+255) + 2 + len(md.Partitioning.Key) + 4 + len(msgs)*(indexSize+MessageHeaderSize)
	for i := range msgs {
		size += len(msgs[i].Payload) + len(msgs[i].Headers)
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, 0, 0, 0, 0) // the metadata length, below
	dst, err := iggywire.AppendTopicRef(dst, md.TopicRef)
	if err == nil {
		dst, err = iggywire.AppendPartitioning(dst, md.Partitioning)
	}
	if err != nil {
		return dst[:start], err
	}
	dst = iggywire.AppendU32(dst, uint32(len(msgs)))
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-sendMetadataFixed))
	index := len(dst)
	dst = dst[:index+indexSize*len(msgs)]
	clear(dst[index:])
	section := len(dst)
	le := binary.LittleEndian
	for i := range msgs {
		m := &msgs[i]
		at := len(dst)
		dst = dst[:at+MessageHeaderSize+len(m.Payload)+len(m.Headers)]
		h := dst[at : at+MessageHeaderSize]
		clear(h[:offID])
		copy(h[offID:], m.ID[:])
		clear(h[offOffset:offOriginTime])
		le.PutUint64(h[offOriginTime:], m.OriginTimestamp)
		le.PutUint32(h[offHeadersLength:], uint32(len(m.Headers)))
		le.PutUint32(h[offPayloadLength:], uint32(len(m.Payload)))
		clear(h[offPayloadLength+4:])
		n := copy(dst[at+MessageHeaderSize:], m.Payload)
		copy(dst[at+MessageHeaderSize+n:], m.Headers)
		le.PutUint32(dst[index+4:], uint32(len(dst)-section))
		index += indexSize
	}
	return dst, nil
}

// SendMessages is a decoded SendMessages payload. Messages aliases the payload: the messages
// back to back; Ends[i] is where message i ends inside it.
type SendMessages struct {
	SendMetadata
	Count    uint32
	Messages []byte
	Ends     []uint32
}

// DecodeSendMessages parses a SendMessages payload and checks every message's lengths as a 0.8
// server does, with its statuses; ends is reused for SendMessages.Ends.
func DecodeSendMessages(payload []byte, ends []uint32) (SendMessages, error) {
	r := NewReader("send messages", payload)
	metadataLen := r.U32("metadata length")
	var req SendMessages
	req.StreamID = r.Identifier("stream id")
	req.TopicID = r.Identifier("topic id")
	req.Partitioning = r.Partitioning()
	req.Count = r.U32("messages count")
	req.Ends = ends[:0]
	if r.Err() != nil {
		return req, r.Err()
	}
	if int(metadataLen) != r.Pos()-sendMetadataFixed {
		return req, iggywire.Errorf(iggywire.StatusInvalidCommand, fmt.Sprintf("send messages: metadata length %d, the metadata takes %d", metadataLen, r.Pos()-sendMetadataFixed))
	}
	if req.Count == 0 {
		return req, iggywire.StatusInvalidMessagesCount
	}
	indexBytes := uint64(req.Count) * indexSize
	if indexBytes > uint64(r.Remaining()) {
		return req, iggywire.StatusInvalidIndexesByteSize
	}
	indexes := r.Take(int(indexBytes), "index")
	req.Messages = r.Rest()
	pos := 0
	for i := range int(req.Count) {
		index := indexes[i*indexSize:]
		if binary.LittleEndian.Uint32(index) != 0 {
			return req, iggywire.StatusNonZeroOffset
		}
		if binary.LittleEndian.Uint64(index[8:]) != 0 {
			return req, iggywire.StatusNonZeroTimestamp
		}
		if len(req.Messages)-pos < MessageHeaderSize {
			return req, iggywire.StatusInvalidMessagesSize
		}
		h := req.Messages[pos:]
		headersLen := binary.LittleEndian.Uint32(h[offHeadersLength:])
		payloadLen := binary.LittleEndian.Uint32(h[offPayloadLength:])
		switch {
		case payloadLen == 0:
			return req, iggywire.StatusEmptyMessagePayload
		case payloadLen > MaxServerMessagePayload:
			return req, iggywire.StatusTooBigMessagePayload
		case headersLen > MaxUserHeadersSize:
			return req, iggywire.StatusTooBigUserHeaders
		}
		size := MessageHeaderSize + int(payloadLen) + int(headersLen)
		if len(req.Messages)-pos < size {
			return req, iggywire.StatusInvalidMessagesSize
		}
		pos += size
		if binary.LittleEndian.Uint32(index[4:]) != uint32(pos) {
			return req, iggywire.StatusInvalidMessagesSize
		}
		req.Ends = append(req.Ends, uint32(pos))
	}
	if pos != len(req.Messages) {
		return req, iggywire.StatusInvalidMessagesSize
	}
	return req, nil
}

// PollMessages is the PollMessages (100) request.
type PollMessages struct {
	iggywire.ConsumerOffsetRef
	Strategy   iggywire.PollingStrategy
	Count      uint32
	AutoCommit bool
}

// AppendPollMessages appends the payload.
func AppendPollMessages(dst []byte, p PollMessages) ([]byte, error) {
	dst, err := iggywire.AppendConsumerOffsetRef(dst, p.ConsumerOffsetRef)
	if err != nil {
		return dst, err
	}
	dst = iggywire.AppendPollingStrategy(dst, p.Strategy)
	dst = iggywire.AppendU32(dst, p.Count)
	if p.AutoCommit {
		return append(dst, 1), nil
	}
	return append(dst, 0), nil
}

// DecodePollMessages decodes the payload; any non-zero auto-commit byte means on, as the server
// reads it.
func DecodePollMessages(payload []byte) (PollMessages, error) {
	r := NewReader("poll messages", payload)
	p := PollMessages{ConsumerOffsetRef: r.ConsumerOffsetRef(), Strategy: r.PollingStrategy(), Count: r.U32("count")}
	p.AutoCommit = r.U8("auto commit") != 0
	return p, r.Err()
}

// AppendPollReplyHead appends an OK reply head for a poll reply whose messages take
// messagesLen bytes, and the 16-byte poll prefix; the stored messages follow it.
func AppendPollReplyHead(dst []byte, p iggywire.PollPrefix, messagesLen int) []byte {
	dst = AppendReplyHead(dst, iggywire.StatusOK, iggywire.PollPrefixSize+messagesLen)
	return iggywire.AppendPollPrefix(dst, p)
}

// MaxPollReply is the largest poll reply count messages can make: the prefix and count messages
// of the largest size a server stores. A client refuses a reply announcing more.
func MaxPollReply(count uint32) uint64 {
	return iggywire.PollPrefixSize + uint64(count)*(MessageHeaderSize+MaxServerMessagePayload+MaxUserHeadersSize)
}

// PollIterator walks the messages of a poll reply without allocating, by the SDK v0.8.0's rules:
// the prefix's message count is not trusted, a message whose header or payload runs past the
// end ends the reply (that tail is dropped, as the SDK drops it), and user headers that run past
// the end make the reply malformed (the SDK panics there).
type PollIterator struct {
	prefix iggywire.PollPrefix
	rest   []byte
	err    error
}

// NewPollIterator decodes the prefix of a poll reply. An empty reply has no messages.
func NewPollIterator(payload []byte) (PollIterator, error) {
	if len(payload) == 0 {
		return PollIterator{}, nil
	}
	p, rest, err := iggywire.DecodePollPrefix(payload)
	if err != nil {
		return PollIterator{}, err
	}
	return PollIterator{prefix: p, rest: rest}, nil
}

// Prefix is the reply's prefix.
func (it *PollIterator) Prefix() iggywire.PollPrefix { return it.prefix }

// Next fills m with the next message and reports whether there was one; Err tells a fault from
// the end.
func (it *PollIterator) Next(m *iggywire.PolledMessage) bool {
	if it.err != nil || len(it.rest) <= MessageHeaderSize {
		return false
	}
	le := binary.LittleEndian
	h := it.rest[:MessageHeaderSize]
	body := it.rest[MessageHeaderSize:]
	p, n := uint64(le.Uint32(h[offPayloadLength:])), uint64(le.Uint32(h[offHeadersLength:]))
	if p > uint64(len(body)) {
		it.rest = nil
		return false
	}
	if n > uint64(len(body))-p {
		it.err = iggywire.Malformed(fmt.Sprintf("poll reply: user headers of %d bytes at offset %d run past the reply", n, le.Uint64(h[offOffset:])))
		return false
	}
	m.Checksum = le.Uint64(h[offChecksum:])
	m.ID = [16]byte(h[offID : offID+16])
	m.Offset = le.Uint64(h[offOffset:])
	m.Timestamp = le.Uint64(h[offTimestamp:])
	m.OriginTimestamp = le.Uint64(h[offOriginTime:])
	m.Payload = body[:p:p]
	m.Headers = body[p : p+n : p+n]
	it.rest = body[p+n:]
	return true
}

// Err is the fault that stopped the iteration, or nil.
func (it *PollIterator) Err() error { return it.err }
