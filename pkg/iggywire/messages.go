package iggywire

import (
	"encoding/binary"
	"strconv"
)

// PollPrefixSize is the size of the poll reply prefix; alone it is an empty poll.
const PollPrefixSize = 16

// PollPrefix starts every poll reply.
type PollPrefix struct {
	PartitionID   uint32
	CurrentOffset uint64
	MessagesCount uint32
}

// AppendPollPrefix appends the 16-byte prefix; the messages follow it.
func AppendPollPrefix(dst []byte, p PollPrefix) []byte {
	dst = AppendU32(dst, p.PartitionID)
	dst = AppendU64(dst, p.CurrentOffset)
	return AppendU32(dst, p.MessagesCount)
}

// DecodePollPrefix decodes the prefix and returns the messages after it.
func DecodePollPrefix(body []byte) (PollPrefix, []byte, error) {
	if len(body) < PollPrefixSize {
		return PollPrefix{}, nil, Malformed("poll reply: " + strconv.Itoa(len(body)) + " bytes, need the 16-byte prefix")
	}
	return PollPrefix{
		PartitionID:   binary.LittleEndian.Uint32(body),
		CurrentOffset: binary.LittleEndian.Uint64(body[4:]),
		MessagesCount: binary.LittleEndian.Uint32(body[12:]),
	}, body[PollPrefixSize:], nil
}

// Message is one message as a client sends it, before the server stamps it. Headers are the
// encoded user headers, written as given.
type Message struct {
	ID              [16]byte // u128 LE; the server never fills a zero id
	OriginTimestamp uint64   // µs
	Payload         []byte
	Headers         []byte
}

// PolledMessage is one message of a poll reply, as either protocol's iterator yields it. Payload
// and Headers alias the reply body.
type PolledMessage struct {
	Offset          uint64
	Timestamp       uint64 // the server's append time (µs)
	OriginTimestamp uint64 // the producer's (µs)
	ID              [16]byte
	Checksum        uint64 // as stored; not verified
	Payload         []byte
	Headers         []byte
}
