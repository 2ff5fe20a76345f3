package tap

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Points a message is seen at. A sink sees PointPolled (as read from Iggy), PointDelivered
// (exactly what its plugin receives) and PointDeadLettered; a source PointProduced (what its
// plugin returned), PointSent (what goes to Iggy after transforms and encoding) and
// PointDeadLettered (a produced record its [error_handling] dead-letters, as produced).
const (
	PointPolled       = "polled"
	PointDelivered    = "delivered"
	PointDeadLettered = "dead_lettered"
	PointProduced     = "produced"
	PointSent         = "sent"
)

// SinkPoints and SourcePoints are the points of each connector kind, in pipeline order.
var (
	SinkPoints   = []string{PointPolled, PointDelivered, PointDeadLettered}
	SourcePoints = []string{PointProduced, PointSent, PointDeadLettered}
)

// Event is one sampled message, the JSON of one SSE "message" event of a tap and one line of a
// dry run's output: the same shape in both, so a tap's delivered events and a preview of the same
// messages compare byte for byte (Replica aside, which only the supervisor's fleet merge sets).
type Event struct {
	Point     string   `json:"point"`
	Replica   string   `json:"replica,omitempty"`
	Stream    string   `json:"stream"`
	Topic     string   `json:"topic"`
	Partition uint32   `json:"partition"`
	Offset    uint64   `json:"offset"`
	ID        string   `json:"id"`        // the u128 message id in decimal
	Timestamp uint64   `json:"timestamp"` // µs since the Unix epoch; 0 when not yet stamped
	Headers   []Header `json:"headers"`
	Schema    string   `json:"schema"`
	Size      int      `json:"size"` // payload bytes
	// Payload is the JSON value for json, a string for text, base64 text otherwise (Encoding
	// then says "base64"). A json payload that is not valid JSON is sent as base64 too.
	Payload  json.RawMessage `json:"payload"`
	Encoding string          `json:"encoding,omitempty"`
	// Error names why a message was dead-lettered, or in a dry run why it failed (the stage and
	// its error, "decode: ..."); empty elsewhere.
	Error string `json:"error,omitempty"`
}

// Header is one user header: its key and value with their kinds (postcard.HeaderKind names).
// Value is a JSON string for string keys and values, a number or bool for numeric and bool
// kinds, and base64 text for raw bytes (and for a value whose bytes do not fit its kind); Key
// likewise, with KeyEncoding saying when it is base64 text.
type Header struct {
	Key         json.RawMessage `json:"key"`
	KeyKind     string          `json:"key_kind,omitempty"`     // omitted for "string", nearly every key
	KeyEncoding string          `json:"key_encoding,omitempty"` // "base64" when Key is base64 text
	Kind        string          `json:"kind"`
	Value       json.RawMessage `json:"value"`
	Encoding    string          `json:"encoding,omitempty"` // "base64" when Value is base64 text
}

// ID renders a u128 message id in decimal.
func ID(id postcard.Uint128) string {
	if id.Hi == 0 {
		return strconv.FormatUint(id.Lo, 10)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], id.Hi)
	binary.BigEndian.PutUint64(b[8:], id.Lo)
	return new(big.Int).SetBytes(b[:]).String()
}

// IDBytes renders a message id held as 16 little-endian bytes (Iggy's wire order), as ID does.
func IDBytes(b [16]byte) string {
	return ID(postcard.Uint128{Hi: binary.LittleEndian.Uint64(b[8:]), Lo: binary.LittleEndian.Uint64(b[:8])})
}

// Masker decides which JSON object fields hold secrets; nil masks nothing.
type Masker interface {
	Match(name string) bool
}

// SetPayload fills Payload, Encoding, Schema and Size from a payload in schema's encoding.
// Secret-looking fields of a JSON payload (names matched by secrets, at any depth) are masked
// as configs are (config.MaskedValue), in place: the payload keeps its key order and bytes
// (mask.go).
func (e *Event) SetPayload(schema postcard.Schema, payload []byte, secrets Masker) {
	e.Schema, e.Size, e.Encoding = schema.String(), len(payload), ""
	switch schema {
	case postcard.SchemaJSON:
		if json.Valid(payload) {
			e.Payload = maskJSON(payload, secrets)
			return
		}
	case postcard.SchemaText:
		if utf8.Valid(payload) {
			e.Payload = quote(string(payload))
			return
		}
	}
	e.Payload, e.Encoding = base64JSON(payload), "base64"
}

// SetHeaders fills Headers from a postcard header map (nil or empty gives an empty list).
func (e *Event) SetHeaders(hs postcard.HeaderMap) {
	e.Headers = e.Headers[:0]
	if e.Headers == nil {
		e.Headers = []Header{}
	}
	for _, h := range hs {
		var out Header
		out.Key, out.KeyEncoding = headerValue(h.Key.Kind, h.Key.Value)
		if h.Key.Kind != postcard.HeaderKindString || out.KeyEncoding != "" {
			out.KeyKind = h.Key.Kind.String()
		}
		out.Kind = h.Value.Kind.String()
		out.Value, out.Encoding = headerValue(h.Value.Kind, h.Value.Value)
		e.Headers = append(e.Headers, out)
	}
}

// headerValue renders one header field as JSON: numbers and bools by value, strings as strings,
// anything else (raw, or bytes of the wrong size for their kind) as base64.
func headerValue(kind postcard.HeaderKind, b []byte) (json.RawMessage, string) {
	le := binary.LittleEndian
	switch {
	case kind == postcard.HeaderKindString && utf8.Valid(b):
		return quote(string(b)), ""
	case kind == postcard.HeaderKindBool && len(b) == 1 && b[0] <= 1:
		return json.RawMessage(strconv.FormatBool(b[0] == 1)), ""
	case kind == postcard.HeaderKindInt8 && len(b) == 1:
		return json.RawMessage(strconv.FormatInt(int64(int8(b[0])), 10)), ""
	case kind == postcard.HeaderKindUint8 && len(b) == 1:
		return json.RawMessage(strconv.FormatUint(uint64(b[0]), 10)), ""
	case kind == postcard.HeaderKindInt16 && len(b) == 2:
		return json.RawMessage(strconv.FormatInt(int64(int16(le.Uint16(b))), 10)), ""
	case kind == postcard.HeaderKindUint16 && len(b) == 2:
		return json.RawMessage(strconv.FormatUint(uint64(le.Uint16(b)), 10)), ""
	case kind == postcard.HeaderKindInt32 && len(b) == 4:
		return json.RawMessage(strconv.FormatInt(int64(int32(le.Uint32(b))), 10)), ""
	case kind == postcard.HeaderKindUint32 && len(b) == 4:
		return json.RawMessage(strconv.FormatUint(uint64(le.Uint32(b)), 10)), ""
	case kind == postcard.HeaderKindInt64 && len(b) == 8:
		return json.RawMessage(strconv.FormatInt(int64(le.Uint64(b)), 10)), ""
	case kind == postcard.HeaderKindUint64 && len(b) == 8:
		return json.RawMessage(strconv.FormatUint(le.Uint64(b), 10)), ""
	case kind == postcard.HeaderKindFloat32 && len(b) == 4:
		if f := float64(math.Float32frombits(le.Uint32(b))); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 32)), ""
		}
	case kind == postcard.HeaderKindFloat64 && len(b) == 8:
		if f := math.Float64frombits(le.Uint64(b)); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), ""
		}
	}
	return base64JSON(b), "base64"
}

func base64JSON(b []byte) json.RawMessage {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"')
}
