package transform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// FuzzBuild: connector configs come from files and the HTTP API. Build never
// panics on any decoded table (JSON or TOML); it either returns an error
// wrapping one of its sentinels or transforms that run on sample messages
// without panicking and without failing.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"add_fields":{"enabled":true,"fields":[{"key":"a","value":{"static":{"x":[1,2.5,null]}}}]}}`), false)
	f.Add([]byte(`{"filter_fields":{"enabled":true,"keep_fields":["a"],"patterns":[{"key_pattern":{"regex":"^b"},"value_pattern":{"between":[1,2]}}]}}`), false)
	f.Add([]byte(`{"update_fields":{"enabled":true,"fields":[{"key":"a","value":{"computed":"uuid_v7"},"condition":"key_exists"}]},"unwrap_envelope":{"enabled":true,"field":"a"}}`), false)
	f.Add([]byte(`{"delete_fields":{"enabled":true,"fields":["a"]},"proto_convert":{"enabled":false}}`), false)
	f.Add([]byte("[transforms.filter_fields]\nenabled = true\npatterns = [{ value_pattern = \"is_null\" }, { value_pattern = { greater_than = 1 } }]\n"), true)
	f.Add([]byte("[transforms.add_fields]\nenabled = true\n[[transforms.add_fields.fields]]\nkey = \"t\"\nvalue = { static = 1979-05-27T07:32:00Z }\n"), true)
	samples := []string{`{"a":{"a":1},"b":1.5,"c":"s","d":null}`, `[1]`, `"a"`, `{}`}
	f.Fuzz(func(t *testing.T, data []byte, isTOML bool) {
		var cfg map[string]any
		var order []string
		if isTOML {
			var file struct {
				Transforms map[string]any `toml:"transforms"`
			}
			md, err := toml.Decode(string(data), &file)
			if err != nil {
				return
			}
			cfg = file.Transforms
			for _, key := range md.Keys() {
				if len(key) == 2 && key[0] == "transforms" {
					order = append(order, key[1])
				}
			}
		} else {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if dec.Decode(&cfg) != nil {
				return
			}
		}
		ts, err := transform.Build(cfg, order)
		if err != nil {
			if !errors.Is(err, transform.ErrInvalidConfig) && !errors.Is(err, transform.ErrUnknownTransform) &&
				!errors.Is(err, transform.ErrNotSupported) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		for _, s := range samples {
			v, _ := codec.ParseJSON([]byte(s))
			m := &codec.Message{Payload: codec.JSONPayload(v)}
			if keep, err := transform.Run(ts, m); !keep || err != nil {
				t.Fatalf("built-in transforms dropped or failed: %v, %v", keep, err)
			}
			if _, err := codec.PayloadToFFI(m.Payload); err != nil {
				t.Fatalf("transformed payload cannot be encoded: %v", err)
			}
		}
	})
}

// fuzzProto is a message type with every field kind, maps and recursion included.
const fuzzProto = `syntax = "proto3";
package fuzz;
message Node {
  uint64 id = 1; int64 delta = 2; sint32 small = 3; fixed64 stamp = 4; double score = 5;
  bool ok = 7; string name = 8; bytes blob = 9;
  repeated Node children = 11;
  map<string, int64> counters = 12;
  map<int32, Node> nodes = 13;
  oneof choice { string text = 15; int32 number = 16; }
}
`

const fuzzAvro = `{"type":"record","name":"Tree","fields":[
	{"name":"label","type":"string"},
	{"name":"kids","type":{"type":"array","items":"Tree"}},
	{"name":"meta","type":{"type":"map","values":["null","boolean","double","bytes","long"]}}]}`

// fieldChains are the field transforms of docs/pipeline.md §4, each chain run on its own so that a
// filter dropping the message does not hide the transforms after it.
var fieldChains = []string{`
[transforms.update_fields]
enabled = true
fields = [{ key = "id", value = { computed = "uuid_v4" }, condition = "key_exists" },
          { key = "label", value = { static = "x" }, condition = "key_not_exists" }]
[transforms.add_fields]
enabled = true
fields = [{ key = "at", value = { computed = "timestamp_millis" } }, { key = "s", value = { static = [1, "a"] } }]
[transforms.delete_fields]
enabled = true
fields = ["blob", "kids"]
`, `
[transforms.filter_fields]
enabled = true
include_matching = false
patterns = [{ key_pattern = { regex = "^(id|n.*)$" }, value_pattern = { between = [-5, 1e300] } },
            { key_pattern = { contains = "a" }, value_pattern = { equals = "x" } },
            { value_pattern = { regex = "\\d+" } }, { value_pattern = "is_object" },
            { value_pattern = { greater_than = 9223372036854775807 } }]
`, `
[transforms.filter_fields]
enabled = true
keep_fields = ["data", "label", "counters"]
[transforms.unwrap_envelope]
enabled = true
field = "data"
`}

// FuzzRunOnDecodedPayloads: message payloads are untrusted. Whatever a sink's stream decoder or
// the source side's PayloadFromFFI makes of the bytes, the convert transform for that payload
// kind and each chain of field transforms run on it without panicking (a panic Run caught fails
// the input too) and leave a payload the plugin can be handed.
func FuzzRunOnDecodedPayloads(f *testing.F) {
	dir := f.TempDir()
	protoPath := filepath.Join(dir, "fuzz.proto")
	if err := os.WriteFile(protoPath, []byte(fuzzProto), 0o600); err != nil {
		f.Fatal(err)
	}
	withProto := `schema_path = "` + protoPath + `"` + "\nmessage_type = \"fuzz.Node\"\n"
	protoToJSON := buildTOML(f, testkit.ProtoConvertTOML("proto", "json", withProto))
	// The transforms that can come first for each payload kind; nil: the field transforms alone.
	converts := map[postcard.Schema][][]transform.Transform{
		postcard.SchemaJSON:       {nil, protoToJSON}, // proto_convert reads {"type_url", "value"}
		postcard.SchemaRaw:        {protoToJSON},
		postcard.SchemaText:       {buildTOML(f, testkit.ProtoConvertTOML("text", "json", ""))},
		postcard.SchemaAvro:       {buildTOML(f, testkit.AvroConvertTOML("avro", "json", "schema_json = '''"+fuzzAvro+"'''\n"))},
		postcard.SchemaFlatBuffer: {buildTOML(f, flatBufferConvertTOML("flat_buffer", "json", ""))},
	}
	decoders := make([]codec.Decoder, 6)
	for s := range postcard.Schema(6) {
		dec, err := codec.NewDecoder(s, codec.Options{"avro_schema_json": fuzzAvro})
		if err != nil {
			f.Fatal(err)
		}
		decoders[s] = dec
	}
	fields := make([][]transform.Transform, len(fieldChains))
	for i, doc := range fieldChains {
		fields[i] = buildTOML(f, doc)
	}

	proto, err := codec.LoadProtoSchema(protoPath, nil, "fuzz.Node")
	if err != nil {
		f.Fatal(err)
	}
	node, err := proto.EncodeJSON(mustParseJSON(f, `{"id":1,"name":"n","children":[{"id":2}],"counters":{"a":-1},"nodes":{"3":{"text":"t"}}}`), true)
	if err != nil {
		f.Fatal(err)
	}
	avro, err := codec.ParseAvroSchema(fuzzAvro)
	if err != nil {
		f.Fatal(err)
	}
	tree, err := avro.EncodeJSON(mustParseJSON(f, `{"label":"r","kids":[{"label":"k","kids":[],"meta":{}}],"meta":{"b":true,"n":null,"x":[1,2]}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(postcard.SchemaProto), codec.AppendProtoAny(nil, "type.googleapis.com/fuzz.Node", node))
	f.Add(uint8(postcard.SchemaProto), codec.AppendProtoAny(nil, codec.ProtoBytesValueURL, codec.AppendProtoWrapper(nil, node)))
	f.Add(uint8(postcard.SchemaRaw), node)
	f.Add(uint8(postcard.SchemaJSON), []byte(`{"id":3,"n":"12","data":{"label":"x","counters":{"a":1}},"blob":[1],"x":{"a":null}}`))
	f.Add(uint8(postcard.SchemaJSON), []byte(`{"data":[1,2]}`))
	f.Add(uint8(postcard.SchemaText), []byte(`{"label":"a"}`))
	f.Add(uint8(postcard.SchemaAvro), tree)
	f.Add(uint8(postcard.SchemaFlatBuffer), []byte{0x04, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, schema uint8, b []byte) {
		s := postcard.Schema(schema % 6)
		sinkSide, sinkErr := decoders[s].Decode(b)
		sourceSide, sourceErr := codec.PayloadFromFFI(s, b)
		for _, d := range []struct {
			p   codec.Payload
			err error
		}{{sinkSide, sinkErr}, {sourceSide, sourceErr}} {
			if errors.Is(d.err, panicerr.ErrPanic) {
				t.Fatalf("decoding as %s panicked: %v", s, d.err)
			}
			if d.err != nil {
				continue
			}
			for _, first := range converts[d.p.Kind] {
				for _, chain := range fields {
					m := &codec.Message{Payload: clonePayload(t, d.p)}
					keep, err := transform.Run(append(slices.Clone(first), chain...), m)
					if errors.Is(err, panicerr.ErrPanic) {
						t.Fatalf("a transform panicked: %v", err)
					}
					if err != nil || !keep {
						continue
					}
					if _, err := codec.PayloadToFFI(m.Payload); err != nil {
						t.Fatalf("transformed payload cannot be handed to the plugin: %v", err)
					}
				}
			}
		}
	})
}

// clonePayload gives each chain its own copy: transforms change JSON payloads in place.
func clonePayload(t *testing.T, p codec.Payload) codec.Payload {
	if p.Kind != postcard.SchemaJSON {
		return p
	}
	text, err := codec.MarshalJSON(p.JSON)
	if err != nil {
		t.Fatalf("decoded JSON does not marshal: %v", err)
	}
	return codec.JSONPayload(mustParseJSON(t, string(text)))
}

func mustParseJSON(t testing.TB, text string) any {
	t.Helper()
	v, err := codec.ParseJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
