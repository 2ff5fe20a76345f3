package transform_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

func flatBufferConvertTOML(source, target, extra string) string {
	return `[transforms.flat_buffer_convert]
enabled = true
source_format = "` + source + `"
target_format = "` + target + `"
include_paths = []
preserve_unknown_fields = false
` + extra + `
[transforms.flat_buffer_convert.conversion_options]
verify_buffers = true
pretty_json = false
include_metadata = false
buffer_size_hint = 256
strict_mode = false
`
}

// applyOne builds the single transform in doc and applies it to in.
func applyOne(t *testing.T, doc string, in codec.Payload) (codec.Payload, error) {
	t.Helper()
	ts := buildTOML(t, doc)
	if len(ts) != 1 {
		t.Fatalf("built %v, want one transform", names(ts))
	}
	m := &codec.Message{Payload: in}
	keep, err := transform.Run(ts, m)
	if err == nil && !keep {
		t.Fatalf("convert transforms never filter")
	}
	return m.Payload, err
}

func jsonOf(t *testing.T, text string) codec.Payload {
	t.Helper()
	return jsonMessage(t, text).Payload
}

// shown renders a payload for comparison: its kind and its FFI bytes.
func shown(p codec.Payload) string {
	b, err := codec.PayloadToFFI(p)
	if err != nil {
		return "error: " + err.Error()
	}
	return p.Kind.String() + " " + string(b)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const orderProto = `syntax = "proto3";
package shop;
message Order {
  uint64 id = 1;
  string customer = 2;
  repeated string tags = 3;
  int64 delta = 4;
}
`

// The whole proto path: a source turns JSON into an Order message, the
// proto stream codec carries it in an Any, and a sink turns it back.
func TestProtoConvertRoundTripThroughTheStreamCodec(t *testing.T) {
	schema := writeFile(t, "order.proto", orderProto)
	extra := "schema_path = \"" + schema + "\"\nmessage_type = \"shop.Order\"\n"
	want := `{"id":42,"customer":"Zoë","tags":["a","b"],"delta":-7}`

	encoded, err := applyOne(t, testkit.ProtoConvertTOML("json", "proto", extra), jsonOf(t, want))
	if err != nil || encoded.Kind != postcard.SchemaRaw {
		t.Fatalf("json -> proto = %s, %v; want raw protobuf bytes", shown(encoded), err)
	}
	enc, _ := codec.NewEncoder(postcard.SchemaProto, nil)
	dec, _ := codec.NewDecoder(postcard.SchemaProto, nil)
	wire, err := enc.Encode(encoded)
	if err != nil {
		t.Fatal(err)
	}
	onSink, err := dec.Decode(wire)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := applyOne(t, testkit.ProtoConvertTOML("proto", "json", extra), onSink)
	if err != nil || shown(decoded) != "json "+want {
		t.Errorf("proto -> json = %s, %v; want json %s", shown(decoded), err, want)
	}
}

func TestProtoConvertPairs(t *testing.T) {
	schema := writeFile(t, "order.proto", orderProto)
	withSchema := "schema_path = \"" + schema + "\"\nmessage_type = \"shop.Order\"\n"
	anyOfOrder := codec.AppendProtoAny(nil, "type.googleapis.com/shop.Order", []byte{0x08, 0x2a})
	// What upstream's proto encoder writes for JSON: the bare text as Any.value.
	upstreamAny := base64.StdEncoding.EncodeToString([]byte(`{"a":1}`))
	tests := []struct {
		name, source, target, extra string
		in                          codec.Payload
		want                        string // shown(result)
		wantErr                     error
	}{
		{"proto text that is JSON", "proto", "json", "", codec.Payload{Kind: postcard.SchemaProto, Text: `{"a":1}`}, `json {"a":1}`, nil},
		{"proto text that is not JSON", "proto", "json", "", codec.Payload{Kind: postcard.SchemaProto, Text: `a: 1`}, `json {"proto_text":"a: 1","format":"text"}`, nil},
		{"binary Any without a schema", "proto", "json", "", codec.RawPayload(anyOfOrder), `json {"type_url":"type.googleapis.com/shop.Order","value":"CCo="}`, nil},
		{"binary Any of the schema's type", "proto", "json", withSchema, jsonOf(t, `{"type_url":"type.googleapis.com/shop.Order","value":"CCo="}`),
			`json {"id":42,"customer":"","tags":[],"delta":0}`, nil},
		{"upstream's bare-text StringValue", "proto", "json", "", jsonOf(t, `{"type_url":"`+codec.ProtoStringValueURL+`","value":"`+upstreamAny+`"}`), `json {"a":1}`, nil},
		{"not a message", "proto", "json", "", codec.RawPayload([]byte{0xff}), `json {"binary_data":"/w==","format":"raw_binary"}`, nil},
		{"other JSON is not protobuf", "proto", "json", "", jsonOf(t, `{"a":1}`), "", codec.ErrInvalidPayloadType},
		{"json without a schema becomes proto text", "json", "proto", "", jsonOf(t, `{"b":2}`), `proto {"b":2}`, nil},
		{"json that does not fit the schema", "json", "proto", withSchema, jsonOf(t, `{"id":"x"}`), "", codec.ErrInvalidProto},
		{"strict mode rejects unknown keys", "json", "proto", withSchema, jsonOf(t, `{"id":1,"colour":"red"}`), "", codec.ErrInvalidProto},
		{"text that is not JSON", "text", "proto", "", codec.TextPayload("a: 1"), `proto a: 1`, nil},
		{"binary raw as base64 proto text", "raw", "proto", "", codec.RawPayload([]byte{0xff}), `proto binary_data: "/w=="`, nil},
		{"proto to text summary", "proto", "text", "", codec.RawPayload(anyOfOrder), "text Type: type.googleapis.com/shop.Order\nData: 2 bytes\nBase64: CCo=", nil},
		{"proto to avro bytes", "proto", "avro", "", codec.Payload{Kind: postcard.SchemaProto, Text: "x"}, `avro x`, nil},
		{"json to raw", "json", "raw", "", jsonOf(t, `{"a": 1}`), `raw {"a":1}`, nil},
		{"raw to json", "raw", "json", "", codec.RawPayload([]byte(`[true]`)), `json [true]`, nil},
		{"same format passes", "avro", "avro", "", codec.TextPayload("t"), `text t`, nil},
		{"field mappings rename first", "json", "text", "[transforms.proto_convert.field_mappings]\na = \"b\"\n", jsonOf(t, `{"a":1,"c":2}`), `text {"b":1,"c":2}`, nil},
		{"unsupported pair", "avro", "json", "", codec.Payload{Kind: postcard.SchemaAvro}, "", codec.ErrInvalidPayloadType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyOne(t, testkit.ProtoConvertTOML(tt.source, tt.target, tt.extra), tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("error = %v (result %s), want %v", err, shown(got), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if shown(got) != tt.want {
				t.Errorf("result %q, want %q", shown(got), tt.want)
			}
		})
	}
}

func TestProtoConvertIncludeMetadata(t *testing.T) {
	doc := strings.Replace(testkit.ProtoConvertTOML("proto", "json", `message_type = "shop.Order"`), "include_metadata = false", "include_metadata = true", 1)
	got, err := applyOne(t, doc, codec.Payload{Kind: postcard.SchemaProto, Text: `[1]`})
	want := regexp.MustCompile(`^json \{"data":\[1\],"metadata":\{"converted_from":"protobuf","timestamp":\d{13},"message_type":"shop.Order"\}\}$`)
	if err != nil || !want.MatchString(shown(got)) {
		t.Errorf("result %s, %v; want a match for %s", shown(got), err, want)
	}
}

func TestFlatBufferConvertPairs(t *testing.T) {
	fb, err := codec.FlatBufferEncoder{}.Encode(codec.TextPayload("hi"))
	if err != nil {
		t.Fatal(err)
	}
	fbPayload := codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: fb}
	encodedObject, _ := codec.FlatBufferEncoder{}.Encode(jsonOf(t, `{"to":"x"}`))
	tests := []struct {
		name, source, target, extra string
		in                          codec.Payload
		want                        string
		wantErr                     error
	}{
		{"json to flat_buffer after mappings", "json", "flat_buffer", "[transforms.flat_buffer_convert.field_mappings]\nfrom = \"to\"\n",
			jsonOf(t, `{"from":"x"}`), "flat_buffer " + string(encodedObject), nil},
		{"flat_buffer to json", "flat_buffer", "json", "root_table_name = \"Order\"\n[transforms.flat_buffer_convert.field_mappings]\nbuffer_size = \"size\"\n",
			fbPayload, `json {"size":12,"has_root_table":true,"root_table_type":"Order","raw_data_base64":"BAAAAAIAAABoaQAA"}`, nil},
		{"flat_buffer to text", "flat_buffer", "text", "", fbPayload, "text BAAAAAIAAABoaQAA", nil},
		{"flat_buffer to raw", "flat_buffer", "raw", "", fbPayload, "raw " + string(fb), nil},
		{"the payload must be of the source format", "flat_buffer", "json", "", jsonOf(t, `{}`), "", codec.ErrInvalidPayloadType},
		{"a short buffer fails verification", "flat_buffer", "json", "", codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: []byte{1}}, "", codec.ErrInvalidFlatBuffer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyOne(t, flatBufferConvertTOML(tt.source, tt.target, tt.extra), tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && shown(got) != tt.want) {
				t.Errorf("result %q, %v; want %q, %v", shown(got), err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestAvroConvertPairs(t *testing.T) {
	schema := `{"type":"record","name":"R","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	schemaFile := writeFile(t, "r.avsc", schema)
	inline := "schema_json = '" + schema + "'\n"
	datum := []byte{0x54, 0x04, 'Z', 'o'} // id 42, name "Zo"
	avroPayload := codec.Payload{Kind: postcard.SchemaAvro, Bytes: datum}
	tests := []struct {
		name, source, target, extra string
		in                          codec.Payload
		want                        string
		wantErr                     error
	}{
		{"json to avro", "json", "avro", inline, jsonOf(t, `{"name":"Zo","id":42}`), "avro " + string(datum), nil},
		{"json to avro from a schema file, after mappings", "json", "avro", "schema_path = \"" + schemaFile + "\"\n[transforms.avro_convert.field_mappings]\nuser = \"name\"\n",
			jsonOf(t, `{"user":"Zo","id":42}`), "avro " + string(datum), nil},
		{"text to avro", "text", "avro", inline, codec.TextPayload(`{"id":42,"name":"Zo"}`), "avro " + string(datum), nil},
		{"avro to json", "avro", "json", inline, avroPayload, `json {"id":42,"name":"Zo"}`, nil},
		{"avro to text", "avro", "text", "", avroPayload, "text VARabw==", nil},
		{"avro to raw", "avro", "raw", "", avroPayload, "raw " + string(datum), nil},
		{"raw relabelled as avro", "raw", "avro", "", codec.RawPayload(datum), "avro " + string(datum), nil},
		{"other pairs pass through", "json", "text", "", jsonOf(t, `{"a":1}`), `json {"a":1}`, nil},
		{"json that does not fit", "json", "avro", inline, jsonOf(t, `{"id":"x","name":"Zo"}`), "", codec.ErrInvalidAvro},
		{"bytes that are not a datum", "avro", "json", inline, codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{0x54}}, "", codec.ErrInvalidAvro},
		{"avro to json needs an avro payload", "avro", "json", inline, jsonOf(t, `{}`), "", codec.ErrInvalidPayloadType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyOne(t, testkit.AvroConvertTOML(tt.source, tt.target, tt.extra), tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && shown(got) != tt.want) {
				t.Errorf("result %q, %v; want %q, %v", shown(got), err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestConvertConfigErrorsNameTheProblem(t *testing.T) {
	missingProto := filepath.Join(t.TempDir(), "missing.proto")
	brokenProto := writeFile(t, "broken.proto", "syntax = \"proto3\";\nmessage {\n")
	missingAvro := filepath.Join(t.TempDir(), "missing.avsc")
	tests := []struct {
		name, doc string
		wantInErr []string
	}{
		{"proto schema file missing", testkit.ProtoConvertTOML("json", "proto", "schema_path = \""+missingProto+"\""),
			[]string{`transform "proto_convert"`, "schema_path", missingProto, "no such file"}},
		{"proto schema file broken", testkit.ProtoConvertTOML("json", "proto", "schema_path = \""+brokenProto+"\""),
			[]string{"schema_path", brokenProto, "broken.proto:2:"}},
		{"descriptor set not bytes", testkit.ProtoConvertTOML("json", "proto", "descriptor_set = [1, 300]"),
			[]string{"descriptor_set[1] must be an integer 0..255"}},
		{"bad format name", testkit.ProtoConvertTOML("json", "protobuf", ""), []string{"target_format", `"protobuf"`}},
		{"conversion option missing", strings.Replace(testkit.ProtoConvertTOML("json", "proto", ""), "strict_mode = true\n", "", 1),
			[]string{`conversion_options: invalid transform config: missing required key "strict_mode"`}},
		{"include_paths missing", strings.Replace(testkit.ProtoConvertTOML("json", "proto", ""), "include_paths = []\n", "", 1),
			[]string{`missing required key "include_paths"`}},
		{"flat_buffer pair not supported", flatBufferConvertTOML("json", "avro", ""), []string{"cannot convert json to avro"}},
		{"flat_buffer schema file missing", flatBufferConvertTOML("json", "flat_buffer", "schema_path = \""+missingProto+"\""), []string{"schema_path", missingProto}},
		{"buffer_size_hint negative", strings.Replace(flatBufferConvertTOML("json", "flat_buffer", ""), "= 256", "= -1", 1), []string{`"buffer_size_hint" must be a non-negative integer`}},
		{"avro schema file missing", testkit.AvroConvertTOML("json", "avro", "schema_path = \""+missingAvro+"\""), []string{"schema_path", missingAvro, "no such file"}},
		{"avro inline schema broken", testkit.AvroConvertTOML("json", "avro", "schema_json = '{\"type\":\"rec\"}'"), []string{"schema_json: invalid Avro schema"}},
		{"avro pair needs a schema", testkit.AvroConvertTOML("avro", "json", ""), []string{"converting avro to json needs schema_json or schema_path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, order := fromTOML(t, tt.doc)
			_, err := transform.Build(cfg, order)
			if !errors.Is(err, transform.ErrInvalidConfig) {
				t.Fatalf("Build error = %v, want ErrInvalidConfig", err)
			}
			for _, want := range tt.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}
