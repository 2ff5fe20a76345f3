package codec

import (
	"errors"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Sentinel errors; the functions of this package wrap them with context.
var (
	// ErrUnsupportedSchema: a schema this build has no codec for yet.
	ErrUnsupportedSchema = errors.New("unsupported schema")
	// ErrUnknownSchema: a schema name that is not one of json, raw, text,
	// proto, flat_buffer, avro.
	ErrUnknownSchema = errors.New("unknown schema")
	// ErrInvalidOption: a stream option that the schema does not take or
	// whose value has the wrong type.
	ErrInvalidOption = errors.New("invalid schema option")
	// ErrInvalidJSON: bytes that are not one valid JSON document, or a value
	// that cannot be written as JSON.
	ErrInvalidJSON = errors.New("invalid JSON payload")
	// ErrInvalidText: bytes that are not valid UTF-8.
	ErrInvalidText = errors.New("invalid text payload")
	// ErrInvalidPayloadType: a payload kind the encoder does not accept
	// (upstream's InvalidPayloadType).
	ErrInvalidPayloadType = errors.New("invalid payload type")
)

// Payload is a decoded message payload: upstream's Payload enum. Kind says
// which variant it is and which field holds the value:
//
//	SchemaJSON                          JSON (see the package doc for the value model)
//	SchemaRaw, SchemaFlatBuffer, SchemaAvro  Bytes
//	SchemaText, SchemaProto             Text (Proto carries protobuf text format)
type Payload struct {
	Kind  postcard.Schema
	JSON  any
	Bytes []byte
	Text  string
}

// JSONPayload, RawPayload and TextPayload build the common variants.
func JSONPayload(v any) Payload    { return Payload{Kind: postcard.SchemaJSON, JSON: v} }
func RawPayload(b []byte) Payload  { return Payload{Kind: postcard.SchemaRaw, Bytes: b} }
func TextPayload(s string) Payload { return Payload{Kind: postcard.SchemaText, Text: s} }

// Message is what transforms see: upstream's DecodedMessage. The sink path
// sets every optional field; the source path leaves Offset nil. Headers is
// meaningful only when HasHeaders is true (upstream's Option).
type Message struct {
	ID                                           *postcard.Uint128
	Offset, Checksum, Timestamp, OriginTimestamp *uint64
	Headers                                      postcard.HeaderMap
	HasHeaders                                   bool
	Payload                                      Payload
}

// PayloadToFFI returns the payload bytes handed to a sink plugin (docs/pipeline.md
// §3.4): JSON as compact text, Raw/FlatBuffer/Avro bytes as they are (not
// copied), Text and Proto as UTF-8. The schema label sent alongside is always
// the stream's configured schema (Decoder.Schema), whatever the payload kind
// has become after transforms; this is upstream's behaviour and plugins rely
// on it.
func PayloadToFFI(p Payload) ([]byte, error) {
	return AppendPayloadToFFI(nil, p)
}

// AppendPayloadToFFI is PayloadToFFI appending to dst, so a caller can reuse
// one buffer for a whole batch.
func AppendPayloadToFFI(dst []byte, p Payload) (out []byte, err error) {
	defer panicerr.Catch(&err)
	switch p.Kind {
	case postcard.SchemaJSON:
		if dst == nil {
			return MarshalJSON(p.JSON)
		}
		return AppendJSON(dst, p.JSON)
	case postcard.SchemaRaw, postcard.SchemaFlatBuffer, postcard.SchemaAvro:
		if dst == nil {
			return p.Bytes, nil
		}
		return append(dst, p.Bytes...), nil
	case postcard.SchemaText, postcard.SchemaProto:
		return append(dst, p.Text...), nil
	default:
		return dst, fmt.Errorf("%w: payload kind %s", ErrInvalidPayloadType, p.Kind)
	}
}

// PayloadFromFFI turns plugin-side payload bytes into a Payload the way the
// SDK's Schema::try_into_payload does (docs/pipeline.md §3.4). The source path
// applies it to each produced message with the schema the plugin declared:
// json parses (error when invalid), raw keeps the bytes, text checks UTF-8,
// flat_buffer and avro keep the bytes under their own kind, and proto decodes
// a google.protobuf.Any into JSON {"type_url", "value": base64}, falling back
// to Raw bytes (proto never fails). Byte payloads alias b. Here and in
// AppendPayloadToFFI a panic is returned as an error wrapping panicerr.ErrPanic.
func PayloadFromFFI(schema postcard.Schema, b []byte) (p Payload, err error) {
	defer panicerr.Catch(&err)
	switch schema {
	case postcard.SchemaJSON:
		v, err := ParseJSON(b)
		if err != nil {
			return Payload{}, err
		}
		return JSONPayload(v), nil
	case postcard.SchemaRaw:
		return RawPayload(b), nil
	case postcard.SchemaText:
		return decodeText(b)
	case postcard.SchemaProto:
		if typeURL, value, ok := decodeProtoAny(b); ok {
			obj := NewOrderedMap(2)
			obj.Set("type_url", typeURL)
			obj.Set("value", base64Std(value))
			return JSONPayload(obj), nil
		}
		return RawPayload(b), nil
	case postcard.SchemaFlatBuffer, postcard.SchemaAvro:
		return Payload{Kind: schema, Bytes: b}, nil
	default:
		return Payload{}, fmt.Errorf("%w: %s", ErrUnknownSchema, schema)
	}
}
