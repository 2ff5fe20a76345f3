package postcard

import (
	"errors"
	"strconv"
)

// ErrMalformed is wrapped by every decoding error, so callers can tell bad
// plugin bytes apart from other failures with errors.Is.
var ErrMalformed = errors.New("malformed postcard data")

// Schema is the payload schema enum shared with the SDK; its value is the
// postcard variant index.
type Schema uint32

// Schema variants in SDK declaration order (the order fixes the wire index).
const (
	SchemaJSON Schema = iota
	SchemaRaw
	SchemaText
	SchemaProto
	SchemaFlatBuffer
	SchemaAvro
)

// schemaCount is one past the last valid Schema index.
const schemaCount = 6

var schemaNames = [schemaCount]string{"json", "raw", "text", "proto", "flat_buffer", "avro"}

// String returns the configuration name of the schema ("json", "raw", ...),
// or "Schema(<n>)" for an index the SDK does not define.
func (s Schema) String() string {
	if s < schemaCount {
		return schemaNames[s]
	}
	return "Schema(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Valid reports whether s is an index the SDK defines.
func (s Schema) Valid() bool { return s < schemaCount }

// Uint128 is a Rust u128 (message ids) split into its high and low halves.
type Uint128 struct{ Hi, Lo uint64 }

// HeaderKind is the postcard variant index of a user header's type. It is
// the 0-based declaration index, which is one less than the code the Iggy
// binary protocol uses for the same kind (see IggyCode).
type HeaderKind uint32

// HeaderKind variants in declaration order (docs/plugin-abi.md §2.3).
const (
	HeaderKindRaw HeaderKind = iota
	HeaderKindString
	HeaderKindBool
	HeaderKindInt8
	HeaderKindInt16
	HeaderKindInt32
	HeaderKindInt64
	HeaderKindInt128
	HeaderKindUint8
	HeaderKindUint16
	HeaderKindUint32
	HeaderKindUint64
	HeaderKindUint128
	HeaderKindFloat32
	HeaderKindFloat64
)

// headerKindCount is one past the last valid HeaderKind index.
const headerKindCount = 15

var headerKindNames = [headerKindCount]string{
	"raw", "string", "bool", "int8", "int16", "int32", "int64", "int128",
	"uint8", "uint16", "uint32", "uint64", "uint128", "float32", "float64",
}

// String returns the lower-case kind name ("raw", "string", "uint32", ...),
// or "HeaderKind(<n>)" for an undefined index.
func (k HeaderKind) String() string {
	if k < headerKindCount {
		return headerKindNames[k]
	}
	return "HeaderKind(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// Valid reports whether k is an index the SDK defines.
func (k HeaderKind) Valid() bool { return k < headerKindCount }

// IggyCode returns the Iggy binary-protocol code of the kind (index + 1).
func (k HeaderKind) IggyCode() uint8 { return uint8(k) + 1 }

// HeaderKindFromIggyCode maps an Iggy binary-protocol header code (1..15)
// to its postcard kind; ok is false for any other code.
func HeaderKindFromIggyCode(code uint8) (kind HeaderKind, ok bool) {
	if code == 0 || code > headerKindCount {
		return 0, false
	}
	return HeaderKind(code - 1), true
}

// HeaderField is one header key or value: its kind and its raw bytes (the
// base64 text exists only on the wire).
type HeaderField struct {
	Kind  HeaderKind
	Value []byte
}

// HeaderEntry is one key/value pair of a HeaderMap.
type HeaderEntry struct{ Key, Value HeaderField }

// HeaderMap is the user-header map. The encoder emits entries in ascending
// (kind, value bytes) key order, as the SDK's BTreeMap does, keeping the last
// of duplicate keys; the decoder returns them in that same order, with a
// later duplicate key replacing an earlier one.
type HeaderMap []HeaderEntry

// TopicMetadata is the first buffer handed to iggy_sink_consume.
type TopicMetadata struct{ Stream, Topic string }

// MessagesMetadata is the second buffer handed to iggy_sink_consume.
type MessagesMetadata struct {
	PartitionID   uint32
	CurrentOffset uint64
	Schema        Schema
}

// RawMessage is one message delivered to a sink plugin. Headers holds a
// separately encoded HeaderMap (AppendHeaderMap) or is empty for "no headers".
type RawMessage struct {
	ID                                           Uint128
	Offset, Checksum, Timestamp, OriginTimestamp uint64
	Headers                                      []byte
	Payload                                      []byte
}

// RawMessages is the third buffer handed to iggy_sink_consume.
type RawMessages struct {
	Schema   Schema
	Messages []RawMessage
}

// ProducedMessage is one message a source plugin hands to the host. Nil
// pointers are postcard None.
type ProducedMessage struct {
	ID                                   *Uint128
	Checksum, Timestamp, OriginTimestamp *uint64
	Headers                              *HeaderMap
	Payload                              []byte
}

// ProducedMessages is the buffer a source plugin passes to send_cb. State is
// meaningful only when HasState is true (Some); HasState with an empty State
// is Some(empty), which the plugin sees as a corrupt state.
type ProducedMessages struct {
	Schema   Schema
	Messages []ProducedMessage
	State    []byte
	HasState bool
}
