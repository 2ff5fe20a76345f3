package codec_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// orderSchema exercises every Avro type the converter handles.
const orderSchema = `{
  "type": "record", "name": "Order", "namespace": "shop",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "qty", "type": "int"},
    {"name": "price", "type": "double"},
    {"name": "ratio", "type": "float"},
    {"name": "paid", "type": "boolean"},
    {"name": "customer", "type": "string"},
    {"name": "note", "type": ["null", "string"]},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "blob", "type": "bytes"},
    {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 2}},
    {"name": "address", "type": {"type": "record", "name": "Address",
      "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"], "default": null}]}},
    {"name": "channel", "type": "string", "default": "web"}
  ]}`

func mustAvro(t testing.TB, text string) *codec.AvroSchema {
	t.Helper()
	s, err := codec.ParseAvroSchema(text)
	if err != nil {
		t.Fatalf("ParseAvroSchema: %v", err)
	}
	return s
}

func mustParse(t testing.TB, text string) any {
	t.Helper()
	v, err := codec.ParseJSON([]byte(text))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", text, err)
	}
	return v
}

func TestAvroRoundTripKeepsEveryField(t *testing.T) {
	s := mustAvro(t, orderSchema)
	tests := []struct{ name, in, want string }{
		{
			"every type",
			`{"id":-9007199254740993,"qty":3,"price":19.5,"ratio":0.5,"paid":true,"customer":"Zoë","note":"gift",
			  "status":"PAID","tags":["a","b"],"attrs":{"x":1,"y":-2},"blob":[0,255,7],"code":"ok",
			  "address":{"city":"Oslo","zip":150},"channel":"app"}`,
			`{"id":-9007199254740993,"qty":3,"price":19.5,"ratio":0.5,"paid":true,"customer":"Zoë","note":"gift",` +
				`"status":"PAID","tags":["a","b"],"attrs":{"x":1,"y":-2},"blob":[0,255,7],"code":[111,107],` +
				`"address":{"city":"Oslo","zip":150},"channel":"app"}`,
		},
		{
			"missing fields take defaults or null, extra keys are ignored, order follows the schema",
			`{"channel":"x","qty":0,"id":1,"price":1,"ratio":2,"paid":false,"customer":"","status":"NEW","tags":[],
			  "attrs":{},"blob":"","code":[1,2],"address":{"city":"Rome"},"unknown":true}`,
			`{"id":1,"qty":0,"price":1.0,"ratio":2.0,"paid":false,"customer":"","note":null,"status":"NEW","tags":[],` +
				`"attrs":{},"blob":[],"code":[1,2],"address":{"city":"Rome","zip":null},"channel":"x"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := s.EncodeJSON(mustParse(t, tt.in))
			if err != nil {
				t.Fatalf("EncodeJSON: %v", err)
			}
			got, err := s.DecodeJSON(b)
			if err != nil {
				t.Fatalf("DecodeJSON: %v", err)
			}
			if !sameValue(got, mustParse(t, tt.want)) {
				text, _ := codec.MarshalJSON(got)
				t.Errorf("round trip gave %s\nwant %s", text, tt.want)
			}
		})
	}
}

func TestAvroEncodingIsTheSpecBinaryFormat(t *testing.T) {
	tests := []struct {
		name, schema, json string
		want               []byte
	}{
		{"record of int and string", `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`,
			`{"a":1,"b":"hi"}`, []byte{0x02, 0x04, 'h', 'i'}},
		{"zig-zag long", `"long"`, `-64`, []byte{0x7f}},
		{"union takes the first branch that fits", `["null","int","string"]`, `"x"`, []byte{0x04, 0x02, 'x'}},
		{"integers fit a double branch", `["null","double"]`, `2`, []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0x40}},
		{"array in one block", `{"type":"array","items":"boolean"}`, `[true,false]`, []byte{0x04, 0x01, 0x00, 0x00}},
		{"enum by index", `{"type":"enum","name":"E","symbols":["A","B"]}`, `"B"`, []byte{0x02}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mustAvro(t, tt.schema).EncodeJSON(mustParse(t, tt.json))
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("EncodeJSON(%s) = % x, %v; want % x", tt.json, got, err, tt.want)
			}
		})
	}
}

func TestAvroEncodeRejectsValuesTheSchemaCannotHold(t *testing.T) {
	s := mustAvro(t, `{"type":"record","name":"R","fields":[
		{"name":"n","type":"int"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}},
		{"name":"f","type":{"type":"fixed","name":"F","size":2}},{"name":"l","type":{"type":"array","items":"long"}}]}`)
	tests := []struct{ name, json, wantInErr string }{
		{"int overflow", `{"n":2147483648,"e":"A","f":"ab","l":[]}`, "$.n: the integer 2147483648 does not fit Avro type int"},
		{"missing field without default", `{"e":"A","f":"ab","l":[]}`, "$.n: null does not fit Avro type int"},
		{"unknown enum symbol", `{"n":1,"e":"Z","f":"ab","l":[]}`, `"Z" is not a symbol of enum`},
		{"fixed of the wrong size", `{"n":1,"e":"A","f":"abc","l":[]}`, "$.f: a string does not fit Avro type fixed"},
		{"float where long is needed", `{"n":1,"e":"A","f":"ab","l":[1,2.5]}`, "$.l[1]: the number 2.5 does not fit Avro type long"},
		{"not an object", `[1]`, "$: an array does not fit Avro type record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.EncodeJSON(mustParse(t, tt.json))
			if !errors.Is(err, codec.ErrInvalidAvro) || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("EncodeJSON error = %v, want ErrInvalidAvro containing %q", err, tt.wantInErr)
			}
		})
	}
}

func TestAvroDecodeRejectsBytesThatAreNotOneDatum(t *testing.T) {
	record := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`)
	tests := []struct {
		name      string
		schema    *codec.AvroSchema
		in        []byte
		wantInErr string
	}{
		{"empty", record, nil, "empty payload"},
		{"truncated string", record, []byte{0x02, 0x08, 'h'}, "truncated"},
		{"trailing bytes", record, []byte{0x02, 0x00, 0x00}, "trailing bytes"},
		{"enum index out of range", mustAvro(t, `{"type":"enum","name":"E","symbols":["A"]}`), []byte{0x02}, "enum index 1 out of range"},
		{"union branch out of range", mustAvro(t, `["null","int"]`), []byte{0x06}, "union branch 3 out of range"},
		{"boolean byte other than 0 or 1", mustAvro(t, `"boolean"`), []byte{0x02}, "boolean byte"},
		{"string that is not UTF-8", mustAvro(t, `"string"`), []byte{0x02, 0xff}, "not valid UTF-8"},
		{"array claiming billions of nulls", mustAvro(t, `{"type":"array","items":"null"}`),
			[]byte{0xfe, 0xff, 0xff, 0xff, 0x0f}, "exceeds what the payload can hold"},
		{"NaN double", mustAvro(t, `"double"`), []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, "cannot be represented in JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.schema.DecodeJSON(tt.in)
			if !errors.Is(err, codec.ErrInvalidAvro) || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("DecodeJSON(% x) error = %v, want ErrInvalidAvro containing %q", tt.in, err, tt.wantInErr)
			}
		})
	}
}

func TestAvroStreamOptions(t *testing.T) {
	dir := t.TempDir()
	stringSchema := filepath.Join(dir, "string.avsc")
	broken := filepath.Join(dir, "broken.avsc")
	if err := os.WriteFile(stringSchema, []byte(`"string"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte(`{"type":"record"`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.avsc")
	tests := []struct {
		name      string
		opts      codec.Options
		in        []byte
		want      any    // the decoded JSON when wantInErr is ""
		wantInErr string // from building the decoder
	}{
		{"inline schema wins over the path", codec.Options{"avro_schema_json": `"long"`, "avro_schema_path": stringSchema}, []byte{0x02}, uint64(1), ""},
		{"schema file", codec.Options{"avro_schema_path": stringSchema}, []byte{0x02, 'A'}, "A", ""},
		{"missing file is named", codec.Options{"avro_schema_path": missing}, nil, nil, "avro_schema_path: invalid Avro schema: read " + missing + ": no such file or directory"},
		{"unparsable file is named", codec.Options{"avro_schema_path": broken}, nil, nil, "avro schema file " + broken + ": invalid Avro schema"},
		{"unparsable inline schema", codec.Options{"avro_schema_json": `{"type":"nope"}`}, nil, nil, "avro_schema_json: invalid Avro schema"},
		{"a sink needs a schema", nil, nil, nil, "a sink needs avro_schema_json or avro_schema_path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, err := codec.NewDecoder(postcard.SchemaAvro, tt.opts)
			if tt.wantInErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
					t.Errorf("NewDecoder error = %v, want one containing %q", err, tt.wantInErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewDecoder: %v", err)
			}
			p, err := dec.Decode(tt.in)
			if err != nil || p.Kind != postcard.SchemaJSON || p.JSON != tt.want {
				t.Errorf("Decode(% x) = %+v, %v; want JSON %v", tt.in, p, err, tt.want)
			}
		})
	}
}

func TestAvroStreamEncoderPayloadKinds(t *testing.T) {
	withSchema, err := codec.NewEncoder(postcard.SchemaAvro, codec.Options{"avro_schema_json": `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	noSchema, err := codec.NewEncoder(postcard.SchemaAvro, nil)
	if err != nil {
		t.Fatalf("a source may omit the schema: %v", err)
	}
	tests := []struct {
		name    string
		enc     codec.Encoder
		in      codec.Payload
		want    []byte
		wantErr error
	}{
		{"json by schema", withSchema, codec.JSONPayload(obj("a", uint64(2))), []byte{0x04}, nil},
		{"text that is JSON", withSchema, codec.TextPayload(`{"a":-1}`), []byte{0x01}, nil},
		{"text that is not JSON", withSchema, codec.TextPayload(`a=1`), nil, codec.ErrInvalidPayloadType},
		{"avro bytes pass through", noSchema, codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{9}}, []byte{9}, nil},
		{"raw bytes pass through", noSchema, codec.RawPayload([]byte{8}), []byte{8}, nil},
		{"json without a schema", noSchema, codec.JSONPayload(obj("a", uint64(2))), nil, codec.ErrInvalidAvro},
		{"json that does not fit", withSchema, codec.JSONPayload(obj("a", "x")), nil, codec.ErrInvalidAvro},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.enc.Encode(tt.in)
			if !errors.Is(err, tt.wantErr) || !bytes.Equal(got, tt.want) {
				t.Errorf("Encode = % x, %v; want % x, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
