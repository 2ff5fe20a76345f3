package wire08

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// Compression algorithms of CreateTopic: the server takes these two only.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// CreateTopic is the CreateTopic (302) request: the server assigns the id. Expiry (µs) and
// maximum size 0 mean the server's defaults; replication factor 0 is stored as 1.
type CreateTopic struct {
	StreamID          iggywire.Identifier
	PartitionsCount   uint32
	Compression       uint8
	MessageExpiry     uint64
	MaxTopicSize      uint64
	ReplicationFactor uint8
	Name              []byte
}

// AppendCreateTopic appends the payload.
func AppendCreateTopic(dst []byte, c CreateTopic) ([]byte, error) {
	if err := iggywire.CheckName("topic name", c.Name, 1); err != nil {
		return dst, err
	}
	dst, err := iggywire.AppendIdentifier(dst, c.StreamID)
	if err != nil {
		return dst, err
	}
	dst = iggywire.AppendU32(dst, c.PartitionsCount)
	dst = append(dst, c.Compression)
	dst = iggywire.AppendU64(dst, c.MessageExpiry)
	dst = iggywire.AppendU64(dst, c.MaxTopicSize)
	dst = append(dst, c.ReplicationFactor)
	return iggywire.AppendName8(dst, c.Name), nil
}

// DecodeCreateTopic decodes the payload. A compression other than none or gzip is
// InvalidCommand, as the server answers it.
func DecodeCreateTopic(payload []byte) (CreateTopic, error) {
	r := NewReader("create topic", payload)
	c := CreateTopic{StreamID: r.Identifier("stream id"), PartitionsCount: r.U32("partitions count"),
		Compression: r.U8("compression"), MessageExpiry: r.U64("message expiry"), MaxTopicSize: r.U64("max topic size"),
		ReplicationFactor: r.U8("replication factor"), Name: r.Name8("topic name", 1)}
	if r.Err() == nil && c.Compression != CompressionNone && c.Compression != CompressionGzip {
		r.Fail(iggywire.StatusInvalidCommand, "compression %d is neither none (1) nor gzip (2)", c.Compression)
	}
	return c, r.Err()
}

// DecodeTopicRef decodes a payload that starts with a topic reference: GetTopic (300),
// DeleteTopic (303), GetConsumerGroups (601).
func DecodeTopicRef(payload []byte) (iggywire.TopicRef, error) {
	r := NewReader("topic reference", payload)
	t := iggywire.TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")}
	return t, r.Err()
}

// Topic is the topic record (51 + n bytes).
type Topic struct {
	ID                uint32
	CreatedAt         uint64
	PartitionsCount   uint32
	MessageExpiry     uint64
	Compression       uint8
	MaxTopicSize      uint64
	ReplicationFactor uint8
	SizeBytes         uint64
	MessagesCount     uint64
	Name              []byte
}

// AppendTopic appends the record.
func AppendTopic(dst []byte, t Topic) []byte {
	dst = iggywire.AppendU32(dst, t.ID)
	dst = iggywire.AppendU64(dst, t.CreatedAt)
	dst = iggywire.AppendU32(dst, t.PartitionsCount)
	dst = iggywire.AppendU64(dst, t.MessageExpiry)
	dst = append(dst, t.Compression)
	dst = iggywire.AppendU64(dst, t.MaxTopicSize)
	dst = append(dst, t.ReplicationFactor)
	dst = iggywire.AppendU64(dst, t.SizeBytes)
	dst = iggywire.AppendU64(dst, t.MessagesCount)
	return iggywire.AppendName8(dst, t.Name)
}

// DecodeTopic decodes one record and returns the bytes after it (a topic's partition records
// in GetTopic and CreateTopic replies).
func DecodeTopic(b []byte) (Topic, []byte, error) {
	r := NewReader("topic", b)
	t := Topic{ID: r.U32("id"), CreatedAt: r.U64("created at"), PartitionsCount: r.U32("partitions count"),
		MessageExpiry: r.U64("message expiry"), Compression: r.U8("compression"), MaxTopicSize: r.U64("max topic size"),
		ReplicationFactor: r.U8("replication factor"), SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count"),
		Name: r.Name8("name", 0)}
	if r.Err() != nil {
		return Topic{}, nil, r.Err()
	}
	return t, r.Rest(), nil
}

// PartitionSize is the partition record's size.
const PartitionSize = 40

// Partition is the partition record.
type Partition struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// AppendPartition appends the record.
func AppendPartition(dst []byte, p Partition) []byte {
	dst = iggywire.AppendU32(dst, p.ID)
	dst = iggywire.AppendU64(dst, p.CreatedAt)
	dst = iggywire.AppendU32(dst, p.SegmentsCount)
	dst = iggywire.AppendU64(dst, p.CurrentOffset)
	dst = iggywire.AppendU64(dst, p.SizeBytes)
	return iggywire.AppendU64(dst, p.MessagesCount)
}

// DecodePartition decodes one record and returns the bytes after it.
func DecodePartition(b []byte) (Partition, []byte, error) {
	r := NewReader("partition", b)
	p := Partition{ID: r.U32("id"), CreatedAt: r.U64("created at"), SegmentsCount: r.U32("segments count"),
		CurrentOffset: r.U64("current offset"), SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count")}
	if r.Err() != nil {
		return Partition{}, nil, r.Err()
	}
	return p, r.Rest(), nil
}

// Partitions is the CreatePartitions (402) and DeletePartitions (403) request: a topic and a
// count of partitions to add, or to remove from the end.
type Partitions struct {
	iggywire.TopicRef
	Count uint32
}

// AppendPartitions appends the payload.
func AppendPartitions(dst []byte, p Partitions) ([]byte, error) {
	dst, err := iggywire.AppendTopicRef(dst, p.TopicRef)
	if err != nil {
		return dst, err
	}
	return iggywire.AppendU32(dst, p.Count), nil
}

// DecodePartitions decodes the payload.
func DecodePartitions(payload []byte) (Partitions, error) {
	r := NewReader("partitions", payload)
	p := Partitions{TopicRef: iggywire.TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")},
		Count: r.U32("partitions count")}
	return p, r.Err()
}
