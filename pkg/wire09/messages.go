package wire09

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// SendMetadata is the metadata section of a SendMessages (101 -> op 160)
// body (§11.1); the batch record follows it.
type SendMetadata struct {
	StreamID      iggywire.Identifier
	TopicID       iggywire.Identifier
	Partitioning  iggywire.Partitioning
	MessagesCount uint32
}

// AppendSendMetadata appends `[metadata_length u32]` and the four fields. The
// caller appends the batch record (AppendBatch) right after.
func AppendSendMetadata(dst []byte, m SendMetadata) ([]byte, error) {
	start := len(dst)
	dst = iggywire.AppendU32(dst, 0)
	dst, err := iggywire.AppendIdentifier(dst, m.StreamID)
	if err != nil {
		return dst[:start], err
	}
	if dst, err = iggywire.AppendIdentifier(dst, m.TopicID); err != nil {
		return dst[:start], err
	}
	if dst, err = iggywire.AppendPartitioning(dst, m.Partitioning); err != nil {
		return dst[:start], err
	}
	dst = iggywire.AppendU32(dst, m.MessagesCount)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// DecodeSendMessages splits a SendMessages body into its metadata and the
// batch record, as the server admits it (§11.3 steps 1 and 3): the metadata
// must fill metadata_length exactly and count at least one message. The
// batch itself is checked by VerifyBatch.
func DecodeSendMessages(body []byte) (SendMetadata, []byte, error) {
	r := iggywire.NewReader("send messages", body)
	length := r.U32("metadata length")
	if r.Err() != nil {
		return SendMetadata{}, nil, r.Err()
	}
	if uint64(length) > uint64(r.Remaining()) {
		return SendMetadata{}, nil, iggywire.Malformed("send messages: metadata length " + itoa(int(length)) + " exceeds the body")
	}
	m := iggywire.NewReader("send messages metadata", body[4:4+length])
	md := SendMetadata{StreamID: m.Identifier("stream id"), TopicID: m.Identifier("topic id"),
		Partitioning: m.Partitioning(), MessagesCount: m.U32("messages count")}
	if err := m.End(); err != nil {
		return SendMetadata{}, nil, err
	}
	if md.MessagesCount == 0 {
		return SendMetadata{}, nil, iggywire.Errorf(iggywire.StatusInvalidMessagesCount, "send messages: messages count is 0")
	}
	return md, body[4+length:], nil
}

// Confirmation is one entry of a SendMessages reply (§10.5).
type Confirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// confirmationSize is the size of one entry.
const confirmationSize = 20

// AppendConfirmations appends the SendMessages reply body.
func AppendConfirmations(dst []byte, entries ...Confirmation) []byte {
	dst = iggywire.AppendU32(dst, uint32(len(entries)))
	for _, c := range entries {
		dst = iggywire.AppendU32(dst, c.StreamID)
		dst = iggywire.AppendU32(dst, c.TopicID)
		dst = iggywire.AppendU32(dst, c.PartitionID)
		dst = iggywire.AppendU64(dst, c.BaseOffset)
	}
	return dst
}

// DecodeConfirmations appends the entries of a SendMessages reply to dst. An
// empty body is an error (a committed send always confirms); count 0 is valid.
func DecodeConfirmations(body []byte, dst []Confirmation) ([]Confirmation, error) {
	if len(body) == 0 {
		return dst, iggywire.Errorf(iggywire.StatusInvalidCommand, "send messages reply: empty body")
	}
	r := iggywire.NewReader("send confirmations", body)
	n := r.U32("count")
	if r.Err() == nil && uint64(n)*confirmationSize != uint64(r.Remaining()) {
		r.Failf("%d confirmations need %d bytes, have %d", n, uint64(n)*confirmationSize, r.Remaining())
	}
	if r.Err() != nil {
		return dst, r.Err()
	}
	for range n {
		dst = append(dst, Confirmation{StreamID: r.U32("stream id"), TopicID: r.U32("topic id"),
			PartitionID: r.U32("partition id"), BaseOffset: r.U64("base offset")})
	}
	return dst, r.End()
}

// PollMessages is the PollMessages (100) request.
type PollMessages struct {
	Consumer   iggywire.Consumer
	StreamID   iggywire.Identifier
	TopicID    iggywire.Identifier
	Partition  iggywire.OptionalPartition
	Strategy   iggywire.PollingStrategy
	Count      uint32
	AutoCommit bool
}

// AppendPollMessages appends the request body.
func AppendPollMessages(dst []byte, p PollMessages) ([]byte, error) {
	dst, err := iggywire.AppendConsumerOffsetRef(dst, iggywire.ConsumerOffsetRef{Consumer: p.Consumer, StreamID: p.StreamID, TopicID: p.TopicID, Partition: p.Partition})
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

// DecodePollMessages decodes the request body.
func DecodePollMessages(body []byte) (PollMessages, error) {
	r := iggywire.NewReader("poll messages", body)
	ref := r.ConsumerOffsetRef()
	p := PollMessages{Consumer: ref.Consumer, StreamID: ref.StreamID, TopicID: ref.TopicID, Partition: ref.Partition,
		Strategy: r.PollingStrategy(), Count: r.U32("count")}
	auto := r.U8("auto commit")
	if r.Err() == nil && auto > 1 {
		r.Failf("auto commit %d is not 0 or 1", auto)
	}
	p.AutoCommit = auto == 1
	return p, r.End()
}
