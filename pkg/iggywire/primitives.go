package iggywire

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Identifier kinds.
const (
	IDNumeric uint8 = 1
	IDString  uint8 = 2
)

// Identifier names a stream, topic or group by number or by name. Name
// aliases the decoded body.
type Identifier struct {
	Kind uint8
	ID   uint32
	Name []byte
}

// NumericID is the identifier of a numeric id.
func NumericID(id uint32) Identifier { return Identifier{Kind: IDNumeric, ID: id} }

// NamedID is the identifier of a name; it must be 1..255 bytes when encoded.
func NamedID(name string) Identifier { return Identifier{Kind: IDString, Name: []byte(name)} }

// IsNumeric reports whether the identifier is a numeric id.
func (id Identifier) IsNumeric() bool { return id.Kind == IDNumeric }

func (id Identifier) String() string {
	if id.Kind == IDNumeric {
		return strconv.FormatUint(uint64(id.ID), 10)
	}
	return string(id.Name)
}

// AppendIdentifier appends `[kind][len][value]`. An invalid identifier (bad
// kind, name outside 1..255 bytes) is an error.
func AppendIdentifier(dst []byte, id Identifier) ([]byte, error) {
	switch id.Kind {
	case IDNumeric:
		dst = append(dst, IDNumeric, 4)
		return AppendU32(dst, id.ID), nil
	case IDString:
		if err := CheckName("identifier name", id.Name, 1); err != nil {
			return dst, err
		}
		dst = append(dst, IDString)
		return AppendName8(dst, id.Name), nil
	}
	return dst, fmt.Errorf("identifier kind %d is neither numeric (1) nor string (2): %w", id.Kind, StatusInvalidIdentifier)
}

func (r *Reader) Identifier(field string) Identifier {
	kind := r.u8(field, " kind")
	n := int(r.u8(field, " length"))
	value := r.Take(n, field)
	if r.err != nil {
		return Identifier{}
	}
	switch kind {
	case IDNumeric:
		if n != 4 {
			r.Failf("numeric %s has length %d, must be 4", field, n)
			return Identifier{}
		}
		return NumericID(binary.LittleEndian.Uint32(value))
	case IDString:
		if n == 0 {
			r.Failf("%s name is empty", field)
			return Identifier{}
		}
		return Identifier{Kind: IDString, Name: value}
	}
	r.Failf("%s kind %d is neither numeric (1) nor string (2)", field, kind)
	return Identifier{}
}

// Consumer kinds.
const (
	ConsumerKindSingle uint8 = 1
	ConsumerKindGroup  uint8 = 2
)

// Consumer is `[kind][identifier]`.
type Consumer struct {
	Kind uint8
	ID   Identifier
}

// AppendConsumer appends a consumer.
func AppendConsumer(dst []byte, c Consumer) ([]byte, error) {
	if c.Kind != ConsumerKindSingle && c.Kind != ConsumerKindGroup {
		return dst, fmt.Errorf("consumer kind %d is neither single (1) nor group (2): %w", c.Kind, StatusInvalidFormat)
	}
	return AppendIdentifier(append(dst, c.Kind), c.ID)
}

func (r *Reader) Consumer() Consumer {
	kind := r.U8("consumer kind")
	if r.err == nil && kind != ConsumerKindSingle && kind != ConsumerKindGroup {
		r.Fail(r.BadKind, "consumer kind %d is neither single (1) nor group (2)", kind)
	}
	return Consumer{Kind: kind, ID: r.Identifier("consumer id")}
}

// Partitioning kinds.
const (
	PartitionBalanced     uint8 = 1
	PartitionByID         uint8 = 2
	PartitionByMessageKey uint8 = 3
)

// Partitioning says where a send goes. Key aliases the decoded body.
type Partitioning struct {
	Kind        uint8
	PartitionID uint32
	Key         []byte
}

// AppendPartitioning appends `[kind][len][value]`.
func AppendPartitioning(dst []byte, p Partitioning) ([]byte, error) {
	switch p.Kind {
	case PartitionBalanced:
		return append(dst, PartitionBalanced, 0), nil
	case PartitionByID:
		dst = append(dst, PartitionByID, 4)
		return AppendU32(dst, p.PartitionID), nil
	case PartitionByMessageKey:
		if err := CheckName("message key", p.Key, 1); err != nil {
			return dst, err
		}
		return AppendName8(append(dst, PartitionByMessageKey), p.Key), nil
	}
	return dst, fmt.Errorf("partitioning kind %d is not 1..3: %w", p.Kind, StatusInvalidFormat)
}

func (r *Reader) Partitioning() Partitioning {
	kind := r.U8("partitioning kind")
	n := int(r.U8("partitioning length"))
	value := r.Take(n, "partitioning value")
	if r.err != nil {
		return Partitioning{}
	}
	switch kind {
	case PartitionBalanced:
		if n != 0 {
			r.Fail(r.BadKind, "balanced partitioning has length %d, must be 0", n)
		}
		return Partitioning{Kind: kind}
	case PartitionByID:
		if n != 4 {
			r.Fail(r.BadKind, "partition-id partitioning has length %d, must be 4", n)
			return Partitioning{}
		}
		return Partitioning{Kind: kind, PartitionID: binary.LittleEndian.Uint32(value)}
	case PartitionByMessageKey:
		if n == 0 {
			r.Fail(r.BadKind, "message-key partitioning has an empty key")
		}
		return Partitioning{Kind: kind, Key: value}
	}
	r.Fail(r.BadKind, "partitioning kind %d is not 1..3", kind)
	return Partitioning{}
}

// OptionalPartition is the 5-byte `[flag][u32]` field.
type OptionalPartition struct {
	ID  uint32
	Set bool
}

// SomePartition is a present partition id.
func SomePartition(id uint32) OptionalPartition { return OptionalPartition{ID: id, Set: true} }

// AppendOptionalPartition appends the field; an absent partition writes id 0.
func AppendOptionalPartition(dst []byte, p OptionalPartition) []byte {
	if !p.Set {
		return append(dst, 0, 0, 0, 0, 0)
	}
	return AppendU32(append(dst, 1), p.ID)
}

func (r *Reader) OptionalPartition() OptionalPartition {
	flag := r.U8("partition flag")
	id := r.U32("partition id")
	if flag == 1 {
		return OptionalPartition{ID: id, Set: true}
	}
	return OptionalPartition{}
}

// Polling strategy kinds.
const (
	PollOffset    uint8 = 1
	PollTimestamp uint8 = 2
	PollFirst     uint8 = 3
	PollLast      uint8 = 4
	PollNext      uint8 = 5
)

// PollingStrategy is `[kind][u64 value]`.
type PollingStrategy struct {
	Kind  uint8
	Value uint64
}

// AppendPollingStrategy appends the 9-byte strategy.
func AppendPollingStrategy(dst []byte, s PollingStrategy) []byte {
	return AppendU64(append(dst, s.Kind), s.Value)
}

func (r *Reader) PollingStrategy() PollingStrategy {
	kind := r.U8("polling strategy kind")
	value := r.U64("polling strategy value")
	if r.err == nil && (kind < PollOffset || kind > PollNext) {
		r.Fail(r.BadKind, "polling strategy kind %d is not 1..5", kind)
	}
	return PollingStrategy{Kind: kind, Value: value}
}
