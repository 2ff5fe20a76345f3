package wire09

import (
	"encoding/binary"
	"strconv"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Topic option keys this package understands (§10.3).
const (
	OptionMessageExpiry        = "message_expiry"
	OptionMaxTopicSize         = "max_topic_size"
	OptionCompressionAlgorithm = "compression_algorithm"
)

// otherTopicOptions are accepted topic keys that carry no meaning for us.
var otherTopicOptions = map[string]bool{
	"segment_size": true, "enforce_fsync": true, "messages_required_to_save": true,
	"size_of_messages_required_to_save": true, "preallocate_segments": true,
}

// Compression algorithms of the topic element.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// TopicOptions are the topic settings carried as options. Zero means "server
// default" and is left out of an encoded block, as the Go SDK does.
type TopicOptions struct {
	MessageExpiry uint64 // µs; u64 max = never
	MaxTopicSize  uint64 // bytes; u64 max = unlimited
	Compression   uint8  // 0 = default, CompressionNone or CompressionGzip
}

// AppendTopicOptions appends the options block of o.
func AppendTopicOptions(dst []byte, o TopicOptions) ([]byte, error) {
	var err error
	if o.MessageExpiry != 0 {
		if dst, err = AppendOptionUint64(dst, OptionMessageExpiry, o.MessageExpiry); err != nil {
			return dst, err
		}
	}
	if o.MaxTopicSize != 0 {
		if dst, err = AppendOptionUint64(dst, OptionMaxTopicSize, o.MaxTopicSize); err != nil {
			return dst, err
		}
	}
	if o.Compression == CompressionGzip {
		return AppendOption(dst, OptionCompressionAlgorithm, iggywire.KindString, []byte("gzip"))
	}
	return dst, nil
}

// ParseTopicOptions validates a topic options block and reads the keys we
// use. An unknown key is iggywire.StatusUnsupportedOptionKey, a bad value
// iggywire.StatusInvalidOptionValue. message_expiry and max_topic_size must be Uint64
// (human-readable strings are not supported by this package).
func ParseTopicOptions(block []byte) (TopicOptions, error) {
	if _, err := ValidateOptions(block); err != nil {
		return TopicOptions{}, err
	}
	var o TopicOptions
	it := NewTLVIterator(block)
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		key := string(e.Key)
		switch key {
		case OptionMessageExpiry, OptionMaxTopicSize:
			if e.ValueKind != iggywire.KindUint64 {
				return TopicOptions{}, iggywire.Errorf(iggywire.StatusInvalidOptionValue, "option "+key+" has value kind "+strconv.Itoa(int(e.ValueKind))+", want Uint64 (12)")
			}
			v := binary.LittleEndian.Uint64(e.Value)
			if key == OptionMessageExpiry {
				o.MessageExpiry = v
			} else {
				o.MaxTopicSize = v
			}
		case OptionCompressionAlgorithm:
			switch {
			case e.ValueKind == iggywire.KindString && string(e.Value) == "none":
				o.Compression = CompressionNone
			case e.ValueKind == iggywire.KindString && string(e.Value) == "gzip":
				o.Compression = CompressionGzip
			default:
				return TopicOptions{}, iggywire.Errorf(iggywire.StatusInvalidOptionValue, "option compression_algorithm must be the string \"none\" or \"gzip\"")
			}
		default:
			if !otherTopicOptions[key] {
				return TopicOptions{}, iggywire.Errorf(iggywire.StatusUnsupportedOptionKey, "unsupported topic option "+strconv.Quote(key))
			}
		}
	}
	return o, nil
}

// CreateTopic is the CreateTopic (302 -> op 132) request.
type CreateTopic struct {
	StreamID        iggywire.Identifier
	PartitionsCount uint32
	Name            []byte
	Options         []byte
}

// AppendCreateTopic appends the request body.
func AppendCreateTopic(dst []byte, c CreateTopic) ([]byte, error) {
	if err := iggywire.CheckName("topic name", c.Name, 1); err != nil {
		return dst, err
	}
	dst, err := iggywire.AppendIdentifier(dst, c.StreamID)
	if err != nil {
		return dst, err
	}
	dst = iggywire.AppendU32(dst, c.PartitionsCount)
	dst = iggywire.AppendName8(dst, c.Name)
	return append(dst, c.Options...), nil
}

// DecodeCreateTopic decodes the request; the options block is validated as a
// block, ParseTopicOptions reads its keys.
func DecodeCreateTopic(body []byte) (CreateTopic, error) {
	r := iggywire.NewReader("create topic", body)
	c := CreateTopic{StreamID: r.Identifier("stream id"), PartitionsCount: r.U32("partitions count")}
	c.Name = r.Name8("topic name", 1)
	c.Options = r.Rest()
	if r.Err() != nil {
		return CreateTopic{}, r.Err()
	}
	if _, err := ValidateOptions(c.Options); err != nil {
		return CreateTopic{}, err
	}
	return c, nil
}

// Topic is the topic element (§10.3).
type Topic struct {
	ID              uint32
	CreatedAt       uint64
	PartitionsCount uint32
	MessageExpiry   uint64
	Compression     uint8
	MaxTopicSize    uint64
	SizeBytes       uint64
	MessagesCount   uint64
	Name            []byte
	Options         []byte // the keys the client set
	DerivedOptions  []byte // defaults the server resolved
}

// AppendTopic appends one topic element.
func AppendTopic(dst []byte, t Topic) []byte {
	dst = iggywire.AppendU32(dst, t.ID)
	dst = iggywire.AppendU64(dst, t.CreatedAt)
	dst = iggywire.AppendU32(dst, t.PartitionsCount)
	dst = iggywire.AppendU64(dst, t.MessageExpiry)
	dst = append(dst, t.Compression)
	dst = iggywire.AppendU64(dst, t.MaxTopicSize)
	dst = iggywire.AppendU64(dst, t.SizeBytes)
	dst = iggywire.AppendU64(dst, t.MessagesCount)
	dst = iggywire.AppendName8(dst, t.Name)
	dst = AppendOptionsPrefixed(dst, t.Options)
	return AppendOptionsPrefixed(dst, t.DerivedOptions)
}

// DecodeTopic decodes one topic element and returns the bytes after it.
func DecodeTopic(b []byte) (Topic, []byte, error) {
	r := iggywire.NewReader("topic", b)
	t := Topic{ID: r.U32("id"), CreatedAt: r.U64("created at"), PartitionsCount: r.U32("partitions count"),
		MessageExpiry: r.U64("message expiry"), Compression: r.U8("compression"), MaxTopicSize: r.U64("max topic size"),
		SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count")}
	t.Name = r.Name8("name", 1)
	t.Options = r.String32("options")
	t.DerivedOptions = r.String32("derived options")
	if r.Err() != nil {
		return Topic{}, nil, r.Err()
	}
	return t, r.Rest(), nil
}

// Partition is the 40-byte partition element.
type Partition struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// PartitionElementSize is the size of one partition element.
const PartitionElementSize = 40

// AppendPartition appends one partition element.
func AppendPartition(dst []byte, p Partition) []byte {
	dst = iggywire.AppendU32(dst, p.ID)
	dst = iggywire.AppendU64(dst, p.CreatedAt)
	dst = iggywire.AppendU32(dst, p.SegmentsCount)
	dst = iggywire.AppendU64(dst, p.CurrentOffset)
	dst = iggywire.AppendU64(dst, p.SizeBytes)
	return iggywire.AppendU64(dst, p.MessagesCount)
}

// DecodePartition decodes one partition element and returns the bytes after it.
func DecodePartition(b []byte) (Partition, []byte, error) {
	r := iggywire.NewReader("partition", b)
	p := Partition{ID: r.U32("id"), CreatedAt: r.U64("created at"), SegmentsCount: r.U32("segments count"),
		CurrentOffset: r.U64("current offset"), SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count")}
	if r.Err() != nil {
		return Partition{}, nil, r.Err()
	}
	return p, r.Rest(), nil
}

// DecodeTopicsCount reads the u32 count that starts a GetTopics (301) reply
// and returns the topic elements after it.
func DecodeTopicsCount(body []byte) (uint32, []byte, error) {
	r := iggywire.NewReader("topics", body)
	n := r.U32("count")
	if r.Err() != nil {
		return 0, nil, r.Err()
	}
	return n, r.Rest(), nil
}

// CreatePartitions is the CreatePartitions (402 -> op 136) request, and the
// DeletePartitions (403 -> op 137) one, laid out alike: a topic and how many
// partitions to add, or to remove from the end.
type CreatePartitions struct {
	iggywire.TopicRef
	PartitionsCount uint32
}

// AppendCreatePartitions appends the request body.
func AppendCreatePartitions(dst []byte, c CreatePartitions) ([]byte, error) {
	dst, err := iggywire.AppendTopicRef(dst, c.TopicRef)
	if err != nil {
		return dst, err
	}
	return iggywire.AppendU32(dst, c.PartitionsCount), nil
}

// DecodeCreatePartitions decodes the request body (of DeletePartitions too).
func DecodeCreatePartitions(body []byte) (CreatePartitions, error) {
	r := iggywire.NewReader("partitions", body)
	c := CreatePartitions{TopicRef: iggywire.TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")},
		PartitionsCount: r.U32("partitions count")}
	return c, r.End()
}
