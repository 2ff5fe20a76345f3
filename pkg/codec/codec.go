package codec

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Decoder turns the payload bytes of an Iggy message into a Payload (the
// sink path). Schema is the stream's configured schema, which is also the
// label sent to the plugin.
type Decoder interface {
	Schema() postcard.Schema
	Decode(b []byte) (Payload, error)
}

// Encoder turns a Payload into the bytes sent to Iggy (the source path).
type Encoder interface {
	Schema() postcard.Schema
	Encode(p Payload) ([]byte, error)
}

// Options holds a stream entry's schema-related config keys (for example
// avro_schema_json, avro_schema_path), as decoded from the connector file.
// A nil value means "not set". Constructors reject keys no schema knows.
type Options map[string]any

// format is the codec pair of one schema. A schema without a registered
// format is reported as not supported yet; adding proto, flat_buffer or avro
// means adding an entry here (in a new file) with its option keys.
// Keys in knownOptionKeys that a schema does not read are accepted and
// ignored, as upstream ignores e.g. avro_schema_json on a json stream.
type format struct {
	newDecoder func(schema postcard.Schema, opts Options) (Decoder, error)
	newEncoder func(schema postcard.Schema, opts Options) (Encoder, error)
}

// knownOptionKeys are every schema option a stream entry may carry.
var knownOptionKeys = []string{"avro_schema_json", "avro_schema_path"}

var formats = map[postcard.Schema]format{
	postcard.SchemaJSON: {
		newDecoder: func(postcard.Schema, Options) (Decoder, error) { return jsonDecoder{}, nil },
		newEncoder: func(postcard.Schema, Options) (Encoder, error) { return jsonEncoder{}, nil },
	},
	postcard.SchemaRaw: {
		newDecoder: func(postcard.Schema, Options) (Decoder, error) { return rawDecoder{}, nil },
		newEncoder: func(postcard.Schema, Options) (Encoder, error) { return rawEncoder{}, nil },
	},
	postcard.SchemaText: {
		newDecoder: func(postcard.Schema, Options) (Decoder, error) { return textDecoder{}, nil },
		newEncoder: func(postcard.Schema, Options) (Encoder, error) { return textEncoder{}, nil },
	},
	// proto, flat_buffer: no stream options, as upstream (proto.go, flatbuffer.go).
	postcard.SchemaProto: {
		newDecoder: func(postcard.Schema, Options) (Decoder, error) { return protoStreamDecoder{}, nil },
		newEncoder: func(postcard.Schema, Options) (Encoder, error) { return protoStreamEncoder{now: unixMillis}, nil },
	},
	postcard.SchemaFlatBuffer: {
		newDecoder: func(postcard.Schema, Options) (Decoder, error) { return FlatBufferDecoder{Verify: true}, nil },
		newEncoder: func(postcard.Schema, Options) (Encoder, error) { return FlatBufferEncoder{}, nil },
	},
	// avro: avro_schema_json or avro_schema_path (avro.go).
	postcard.SchemaAvro: {newDecoder: newAvroDecoder, newEncoder: newAvroEncoder},
}

// schemaByName maps the config spelling to the schema. Only "flat_buffer" is
// accepted for FlatBuffer, as upstream's config parser does.
var schemaByName = map[string]postcard.Schema{
	"json":        postcard.SchemaJSON,
	"raw":         postcard.SchemaRaw,
	"text":        postcard.SchemaText,
	"proto":       postcard.SchemaProto,
	"flat_buffer": postcard.SchemaFlatBuffer,
	"avro":        postcard.SchemaAvro,
}

// ParseSchema parses a schema name as written in connector config
// (case-sensitive). An unknown name is an error wrapping ErrUnknownSchema.
func ParseSchema(name string) (postcard.Schema, error) {
	if s, ok := schemaByName[name]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("%w %q (expected one of json, raw, text, proto, flat_buffer, avro)", ErrUnknownSchema, name)
}

// NewDecoder returns the decoder for schema, validating opts. Schemas without
// a codec yet fail with an error wrapping ErrUnsupportedSchema. A panic while
// decoding is returned as an error (guard.go).
func NewDecoder(schema postcard.Schema, opts Options) (Decoder, error) {
	f, err := lookupFormat(schema, opts)
	if err != nil {
		return nil, err
	}
	return guardDecoder(f.newDecoder(schema, opts))
}

// NewEncoder returns the encoder for schema, validating opts. Schemas without
// a codec yet fail with an error wrapping ErrUnsupportedSchema. A panic while
// encoding is returned as an error (guard.go).
func NewEncoder(schema postcard.Schema, opts Options) (Encoder, error) {
	f, err := lookupFormat(schema, opts)
	if err != nil {
		return nil, err
	}
	return guardEncoder(f.newEncoder(schema, opts))
}

func lookupFormat(schema postcard.Schema, opts Options) (format, error) {
	if !schema.Valid() {
		return format{}, fmt.Errorf("%w: %s", ErrUnknownSchema, schema)
	}
	if err := checkOptionKeys(opts); err != nil {
		return format{}, fmt.Errorf("schema %q: %w", schema, err)
	}
	f, ok := formats[schema]
	if !ok {
		return format{}, unsupportedSchemaError{schema}
	}
	return f, nil
}

// unsupportedSchemaError reads `schema "proto" is not supported yet` and
// matches ErrUnsupportedSchema.
type unsupportedSchemaError struct{ schema postcard.Schema }

func (e unsupportedSchemaError) Error() string {
	return fmt.Sprintf("schema %q is not supported yet", e.schema.String())
}
func (e unsupportedSchemaError) Unwrap() error { return ErrUnsupportedSchema }

func checkOptionKeys(opts Options) error {
	var unknown []string
	for key, value := range opts {
		if !slices.Contains(knownOptionKeys, key) {
			unknown = append(unknown, key)
			continue
		}
		if _, isString := value.(string); value != nil && !isString {
			return fmt.Errorf("%w: %s must be a string, got %T", ErrInvalidOption, key, value)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%w: unknown key(s) %s (known: %s)", ErrInvalidOption,
			strings.Join(unknown, ", "), strings.Join(knownOptionKeys, ", "))
	}
	return nil
}

// json: parse to the value model; encode JSON compactly and Text as a JSON
// string literal.
type (
	jsonDecoder struct{}
	jsonEncoder struct{}
)

func (jsonDecoder) Schema() postcard.Schema { return postcard.SchemaJSON }
func (jsonDecoder) Decode(b []byte) (Payload, error) {
	v, err := ParseJSON(b)
	if err != nil {
		return Payload{}, err
	}
	return JSONPayload(v), nil
}

func (jsonEncoder) Schema() postcard.Schema { return postcard.SchemaJSON }
func (jsonEncoder) Encode(p Payload) ([]byte, error) {
	switch p.Kind {
	case postcard.SchemaJSON:
		return MarshalJSON(p.JSON)
	case postcard.SchemaText:
		return appendString(make([]byte, 0, len(p.Text)+2), p.Text), nil
	}
	return nil, fmt.Errorf("%w: the json encoder takes json or text, got %s", ErrInvalidPayloadType, p.Kind)
}

// raw: bytes in, bytes out; the encoder takes only Raw payloads.
type (
	rawDecoder struct{}
	rawEncoder struct{}
)

func (rawDecoder) Schema() postcard.Schema          { return postcard.SchemaRaw }
func (rawDecoder) Decode(b []byte) (Payload, error) { return RawPayload(b), nil }

func (rawEncoder) Schema() postcard.Schema { return postcard.SchemaRaw }
func (rawEncoder) Encode(p Payload) ([]byte, error) {
	if p.Kind != postcard.SchemaRaw {
		return nil, fmt.Errorf("%w: the raw encoder takes raw, got %s", ErrInvalidPayloadType, p.Kind)
	}
	return p.Bytes, nil
}

// text: UTF-8 checked on decode; the encoder takes Text, or JSON as compact
// text.
type (
	textDecoder struct{}
	textEncoder struct{}
)

func (textDecoder) Schema() postcard.Schema          { return postcard.SchemaText }
func (textDecoder) Decode(b []byte) (Payload, error) { return decodeText(b) }

func decodeText(b []byte) (Payload, error) {
	if !utf8.Valid(b) {
		return Payload{}, fmt.Errorf("%w: not valid UTF-8", ErrInvalidText)
	}
	return TextPayload(string(b)), nil
}

func (textEncoder) Schema() postcard.Schema { return postcard.SchemaText }
func (textEncoder) Encode(p Payload) ([]byte, error) {
	switch p.Kind {
	case postcard.SchemaText:
		return []byte(p.Text), nil
	case postcard.SchemaJSON:
		return MarshalJSON(p.JSON)
	}
	return nil, fmt.Errorf("%w: the text encoder takes text or json, got %s", ErrInvalidPayloadType, p.Kind)
}
