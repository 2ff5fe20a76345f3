package wire09

import "encoding/binary"

// SendMetadata is the metadata section of a SendMessages (101 -> op 160)
// body (§11.1); the batch record follows it.
type SendMetadata struct {
	StreamID      Identifier
	TopicID       Identifier
	Partitioning  Partitioning
	MessagesCount uint32
}

// AppendSendMetadata appends `[metadata_length u32]` and the four fields. The
// caller appends the batch record (AppendBatch) right after.
func AppendSendMetadata(dst []byte, m SendMetadata) ([]byte, error) {
	start := len(dst)
	dst = appendU32(dst, 0)
	dst, err := AppendIdentifier(dst, m.StreamID)
	if err != nil {
		return dst[:start], err
	}
	if dst, err = AppendIdentifier(dst, m.TopicID); err != nil {
		return dst[:start], err
	}
	if dst, err = AppendPartitioning(dst, m.Partitioning); err != nil {
		return dst[:start], err
	}
	dst = appendU32(dst, m.MessagesCount)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// DecodeSendMessages splits a SendMessages body into its metadata and the
// batch record, as the server admits it (§11.3 steps 1 and 3): the metadata
// must fill metadata_length exactly and count at least one message. The
// batch itself is checked by VerifyBatch.
func DecodeSendMessages(body []byte) (SendMetadata, []byte, error) {
	r := newReader("send messages", body)
	length := r.u32("metadata length")
	if r.err != nil {
		return SendMetadata{}, nil, r.err
	}
	if uint64(length) > uint64(r.remaining()) {
		return SendMetadata{}, nil, malformed("send messages: metadata length " + itoa(int(length)) + " exceeds the body")
	}
	m := newReader("send messages metadata", body[4:4+length])
	md := SendMetadata{StreamID: m.identifier("stream id"), TopicID: m.identifier("topic id"),
		Partitioning: m.partitioning(), MessagesCount: m.u32("messages count")}
	if err := m.end(); err != nil {
		return SendMetadata{}, nil, err
	}
	if md.MessagesCount == 0 {
		return SendMetadata{}, nil, errorf(StatusInvalidMessagesCount, "send messages: messages count is 0")
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
	dst = appendU32(dst, uint32(len(entries)))
	for _, c := range entries {
		dst = appendU32(dst, c.StreamID)
		dst = appendU32(dst, c.TopicID)
		dst = appendU32(dst, c.PartitionID)
		dst = appendU64(dst, c.BaseOffset)
	}
	return dst
}

// DecodeConfirmations appends the entries of a SendMessages reply to dst. An
// empty body is an error (a committed send always confirms); count 0 is valid.
func DecodeConfirmations(body []byte, dst []Confirmation) ([]Confirmation, error) {
	if len(body) == 0 {
		return dst, errorf(StatusInvalidCommand, "send messages reply: empty body")
	}
	r := newReader("send confirmations", body)
	n := r.u32("count")
	if r.err == nil && uint64(n)*confirmationSize != uint64(r.remaining()) {
		r.failf("%d confirmations need %d bytes, have %d", n, uint64(n)*confirmationSize, r.remaining())
	}
	if r.err != nil {
		return dst, r.err
	}
	for range n {
		dst = append(dst, Confirmation{StreamID: r.u32("stream id"), TopicID: r.u32("topic id"),
			PartitionID: r.u32("partition id"), BaseOffset: r.u64("base offset")})
	}
	return dst, r.end()
}

// PollMessages is the PollMessages (100) request.
type PollMessages struct {
	Consumer   Consumer
	StreamID   Identifier
	TopicID    Identifier
	Partition  OptionalPartition
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// AppendPollMessages appends the request body.
func AppendPollMessages(dst []byte, p PollMessages) ([]byte, error) {
	dst, err := appendOffsetRef(dst, ConsumerOffsetRef{Consumer: p.Consumer, StreamID: p.StreamID, TopicID: p.TopicID, Partition: p.Partition})
	if err != nil {
		return dst, err
	}
	dst = AppendPollingStrategy(dst, p.Strategy)
	dst = appendU32(dst, p.Count)
	if p.AutoCommit {
		return append(dst, 1), nil
	}
	return append(dst, 0), nil
}

// DecodePollMessages decodes the request body.
func DecodePollMessages(body []byte) (PollMessages, error) {
	r := newReader("poll messages", body)
	ref := r.offsetRef()
	p := PollMessages{Consumer: ref.Consumer, StreamID: ref.StreamID, TopicID: ref.TopicID, Partition: ref.Partition,
		Strategy: r.pollingStrategy(), Count: r.u32("count")}
	auto := r.u8("auto commit")
	if r.err == nil && auto > 1 {
		r.failf("auto commit %d is not 0 or 1", auto)
	}
	p.AutoCommit = auto == 1
	return p, r.end()
}

// PollPrefixSize is the size of the poll reply prefix; alone it is an empty poll.
const PollPrefixSize = 16

// PollPrefix starts every poll reply (§10.5).
type PollPrefix struct {
	PartitionID   uint32
	CurrentOffset uint64
	MessagesCount uint32
}

// AppendPollPrefix appends the 16-byte prefix; records follow it.
func AppendPollPrefix(dst []byte, p PollPrefix) []byte {
	dst = appendU32(dst, p.PartitionID)
	dst = appendU64(dst, p.CurrentOffset)
	return appendU32(dst, p.MessagesCount)
}

// DecodePollPrefix decodes the prefix and returns the records after it.
func DecodePollPrefix(body []byte) (PollPrefix, []byte, error) {
	if len(body) < PollPrefixSize {
		return PollPrefix{}, nil, malformed("poll reply: " + itoa(len(body)) + " bytes, need the 16-byte prefix")
	}
	return PollPrefix{
		PartitionID:   binary.LittleEndian.Uint32(body),
		CurrentOffset: binary.LittleEndian.Uint64(body[4:]),
		MessagesCount: binary.LittleEndian.Uint32(body[12:]),
	}, body[PollPrefixSize:], nil
}
