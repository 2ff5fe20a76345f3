package codec_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

func TestParseSchema(t *testing.T) {
	valid := map[string]postcard.Schema{
		"json": postcard.SchemaJSON, "raw": postcard.SchemaRaw, "text": postcard.SchemaText,
		"proto": postcard.SchemaProto, "flat_buffer": postcard.SchemaFlatBuffer, "avro": postcard.SchemaAvro,
	}
	for name, want := range valid {
		if got, err := codec.ParseSchema(name); err != nil || got != want {
			t.Errorf("ParseSchema(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	// Config spelling is case-sensitive and only flat_buffer names FlatBuffer.
	for _, name := range []string{"JSON", "flatbuffer", "Text", "", "protobuf"} {
		if _, err := codec.ParseSchema(name); !errors.Is(err, codec.ErrUnknownSchema) {
			t.Errorf("ParseSchema(%q) error = %v, want ErrUnknownSchema", name, err)
		}
	}
}

func TestConstructorsCoverEverySchema(t *testing.T) {
	avro := codec.Options{"avro_schema_json": `{"type":"string"}`}
	for _, s := range []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText,
		postcard.SchemaProto, postcard.SchemaFlatBuffer, postcard.SchemaAvro} {
		dec, decErr := codec.NewDecoder(s, avro)
		enc, encErr := codec.NewEncoder(s, avro)
		if decErr != nil || encErr != nil || dec.Schema() != s || enc.Schema() != s {
			t.Errorf("schema %s: decoder %v (%v), encoder %v (%v)", s, dec, decErr, enc, encErr)
		}
	}
	if _, err := codec.NewDecoder(postcard.Schema(42), nil); !errors.Is(err, codec.ErrUnknownSchema) {
		t.Errorf("NewDecoder(42) error = %v, want ErrUnknownSchema", err)
	}
}

func TestConstructorsValidateOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    codec.Options
		wantErr bool
	}{
		{"no options", nil, false},
		{"avro keys are accepted and ignored by json", codec.Options{"avro_schema_json": "{}", "avro_schema_path": nil}, false},
		{"unknown key", codec.Options{"schema_path": "x.proto"}, true},
		{"wrongly typed known key", codec.Options{"avro_schema_path": 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, decErr := codec.NewDecoder(postcard.SchemaJSON, tt.opts)
			_, encErr := codec.NewEncoder(postcard.SchemaJSON, tt.opts)
			for _, err := range []error{decErr, encErr} {
				if got := errors.Is(err, codec.ErrInvalidOption); got != tt.wantErr {
					t.Fatalf("error = %v, want invalid-option error: %v", err, tt.wantErr)
				}
			}
		})
	}
}

func mustDecoder(t *testing.T, s postcard.Schema) codec.Decoder {
	t.Helper()
	d, err := codec.NewDecoder(s, nil)
	if err != nil {
		t.Fatalf("NewDecoder(%s): %v", s, err)
	}
	if d.Schema() != s {
		t.Fatalf("decoder schema = %s, want %s", d.Schema(), s)
	}
	return d
}

func mustEncoder(t *testing.T, s postcard.Schema) codec.Encoder {
	t.Helper()
	e, err := codec.NewEncoder(s, nil)
	if err != nil {
		t.Fatalf("NewEncoder(%s): %v", s, err)
	}
	if e.Schema() != s {
		t.Fatalf("encoder schema = %s, want %s", e.Schema(), s)
	}
	return e
}

// §3.2: what each decoder makes of payload bytes.
func TestDecoders(t *testing.T) {
	tests := []struct {
		name    string
		schema  postcard.Schema
		in      []byte
		want    codec.Payload
		wantErr error
	}{
		{"json object", postcard.SchemaJSON, []byte(`{"a":1}`), codec.JSONPayload(obj("a", uint64(1))), nil},
		{"json scalar", postcard.SchemaJSON, []byte(`"s"`), codec.JSONPayload("s"), nil},
		{"json invalid", postcard.SchemaJSON, []byte(`{"a":`), codec.Payload{}, codec.ErrInvalidJSON},
		{"json empty", postcard.SchemaJSON, nil, codec.Payload{}, codec.ErrInvalidJSON},
		{"raw never fails", postcard.SchemaRaw, []byte{0xff, 0x00}, codec.RawPayload([]byte{0xff, 0x00}), nil},
		{"raw empty", postcard.SchemaRaw, []byte{}, codec.RawPayload([]byte{}), nil},
		{"text", postcard.SchemaText, []byte("héllo"), codec.TextPayload("héllo"), nil},
		{"text keeps JSON as text", postcard.SchemaText, []byte(`{"a":1}`), codec.TextPayload(`{"a":1}`), nil},
		{"text invalid UTF-8", postcard.SchemaText, []byte{'a', 0xc3}, codec.Payload{}, codec.ErrInvalidText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mustDecoder(t, tt.schema).Decode(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Decode error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got.Kind != tt.want.Kind || !sameValue(got.JSON, tt.want.JSON) ||
				!bytes.Equal(got.Bytes, tt.want.Bytes) || got.Text != tt.want.Text {
				t.Fatalf("Decode = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// §3.3: the encoder × payload table for json, raw and text.
func TestEncoders(t *testing.T) {
	jsonValue := codec.JSONPayload(obj("b", 2.0, "a", []any{int64(-1), "<"}))
	text := codec.TextPayload("line\n\"q\"")
	raw := codec.RawPayload([]byte{1, 2, 3})
	proto := codec.Payload{Kind: postcard.SchemaProto, Text: "x: 1"}
	flat := codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: []byte{4}}
	avro := codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{5}}
	const bad = "" // marks an expected ErrInvalidPayloadType

	tests := []struct {
		schema  postcard.Schema
		payload codec.Payload
		want    string
	}{
		{postcard.SchemaJSON, jsonValue, `{"b":2.0,"a":[-1,"<"]}`},
		{postcard.SchemaJSON, text, `"line\n\"q\""`}, // a JSON string literal
		{postcard.SchemaJSON, raw, bad},
		{postcard.SchemaJSON, proto, bad},
		{postcard.SchemaJSON, flat, bad},
		{postcard.SchemaJSON, avro, bad},
		{postcard.SchemaRaw, raw, "\x01\x02\x03"},
		{postcard.SchemaRaw, jsonValue, bad},
		{postcard.SchemaRaw, text, bad},
		{postcard.SchemaRaw, proto, bad},
		{postcard.SchemaRaw, flat, bad},
		{postcard.SchemaRaw, avro, bad},
		{postcard.SchemaText, text, "line\n\"q\""},
		{postcard.SchemaText, jsonValue, `{"b":2.0,"a":[-1,"<"]}`},
		{postcard.SchemaText, raw, bad},
		{postcard.SchemaText, proto, bad},
		{postcard.SchemaText, flat, bad},
		{postcard.SchemaText, avro, bad},
	}
	for _, tt := range tests {
		t.Run(tt.schema.String()+"/"+tt.payload.Kind.String(), func(t *testing.T) {
			got, err := mustEncoder(t, tt.schema).Encode(tt.payload)
			if tt.want == bad {
				if !errors.Is(err, codec.ErrInvalidPayloadType) {
					t.Fatalf("Encode = %q, %v; want ErrInvalidPayloadType", got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Encode = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestJSONEncoderRejectsUnencodableValues(t *testing.T) {
	_, err := mustEncoder(t, postcard.SchemaJSON).Encode(codec.JSONPayload(obj("x", make(chan int))))
	if !errors.Is(err, codec.ErrInvalidJSON) {
		t.Fatalf("Encode error = %v, want ErrInvalidJSON", err)
	}
}

// §3.4: the bytes a sink plugin receives for each payload kind.
func TestPayloadToFFI(t *testing.T) {
	tests := []struct {
		name    string
		payload codec.Payload
		want    string
	}{
		{"json compact", codec.JSONPayload(obj("k", []any{1.0, nil})), `{"k":[1.0,null]}`},
		{"json after unwrap can be a scalar", codec.JSONPayload(uint64(7)), `7`},
		{"raw as is", codec.RawPayload([]byte{0, 1}), "\x00\x01"},
		{"text as UTF-8", codec.TextPayload("é"), "é"},
		{"proto text as UTF-8", codec.Payload{Kind: postcard.SchemaProto, Text: "a: 1"}, "a: 1"},
		{"flat_buffer as is", codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: []byte("fb")}, "fb"},
		{"avro as is", codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte("av")}, "av"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.PayloadToFFI(tt.payload)
			if err != nil || string(got) != tt.want {
				t.Fatalf("PayloadToFFI = %q, %v; want %q", got, err, tt.want)
			}
			appended, err := codec.AppendPayloadToFFI([]byte("pre"), tt.payload)
			if err != nil || string(appended) != "pre"+tt.want {
				t.Fatalf("AppendPayloadToFFI = %q, %v; want %q", appended, err, "pre"+tt.want)
			}
		})
	}
	if _, err := codec.PayloadToFFI(codec.Payload{Kind: postcard.Schema(9)}); !errors.Is(err, codec.ErrInvalidPayloadType) {
		t.Fatalf("PayloadToFFI(kind 9) error = %v, want ErrInvalidPayloadType", err)
	}
}

// anyMessage encodes a google.protobuf.Any by hand: field 1 type_url,
// field 2 value, plus any extra raw field bytes.
func anyMessage(typeURL string, value []byte, extra ...byte) []byte {
	b := []byte{0x0a, byte(len(typeURL))}
	b = append(b, typeURL...)
	b = append(b, 0x12, byte(len(value)))
	b = append(b, value...)
	return append(b, extra...)
}

// §3.4: Schema::try_into_payload, used on the bytes a source plugin sends.
func TestPayloadFromFFI(t *testing.T) {
	tests := []struct {
		name    string
		schema  postcard.Schema
		in      []byte
		want    codec.Payload
		wantErr error
	}{
		{"json", postcard.SchemaJSON, []byte(`[1]`), codec.JSONPayload([]any{uint64(1)}), nil},
		{"json invalid", postcard.SchemaJSON, []byte(`[1`), codec.Payload{}, codec.ErrInvalidJSON},
		{"raw", postcard.SchemaRaw, []byte{9}, codec.RawPayload([]byte{9}), nil},
		{"text", postcard.SchemaText, []byte("t"), codec.TextPayload("t"), nil},
		{"text invalid", postcard.SchemaText, []byte{0xff}, codec.Payload{}, codec.ErrInvalidText},
		{"flat_buffer keeps bytes", postcard.SchemaFlatBuffer, []byte{1, 2}, codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: []byte{1, 2}}, nil},
		{"avro keeps bytes", postcard.SchemaAvro, []byte{3}, codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{3}}, nil},
		{"proto Any becomes JSON", postcard.SchemaProto, anyMessage("type.googleapis.com/x.Y", []byte{0xde, 0xad}),
			codec.JSONPayload(obj("type_url", "type.googleapis.com/x.Y", "value", "3q0=")), nil},
		{"proto Any skips unknown fields", postcard.SchemaProto, anyMessage("t", nil, 0x18, 0x96, 0x01, 0x25, 1, 2, 3, 4, 0x1b, 0x08, 0x01, 0x1c),
			codec.JSONPayload(obj("type_url", "t", "value", "")), nil},
		{"proto empty is an empty Any", postcard.SchemaProto, []byte{},
			codec.JSONPayload(obj("type_url", "", "value", "")), nil},
		{"proto that is not an Any falls back to raw", postcard.SchemaProto, []byte("plain text"),
			codec.RawPayload([]byte("plain text")), nil},
		{"proto type_url with the wrong wire type falls back to raw", postcard.SchemaProto, []byte{0x08, 0x01},
			codec.RawPayload([]byte{0x08, 0x01}), nil},
		{"proto truncated length falls back to raw", postcard.SchemaProto, []byte{0x0a, 0x05, 'a'},
			codec.RawPayload([]byte{0x0a, 0x05, 'a'}), nil},
		{"proto type_url not UTF-8 falls back to raw", postcard.SchemaProto, []byte{0x0a, 0x01, 0xff},
			codec.RawPayload([]byte{0x0a, 0x01, 0xff}), nil},
		{"proto mismatched end group falls back to raw", postcard.SchemaProto, []byte{0x1b, 0x24},
			codec.RawPayload([]byte{0x1b, 0x24}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.PayloadFromFFI(tt.schema, tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("PayloadFromFFI error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PayloadFromFFI: %v", err)
			}
			if got.Kind != tt.want.Kind || !sameValue(got.JSON, tt.want.JSON) ||
				!bytes.Equal(got.Bytes, tt.want.Bytes) || got.Text != tt.want.Text {
				t.Fatalf("PayloadFromFFI = %+v, want %+v", got, tt.want)
			}
		})
	}
}
