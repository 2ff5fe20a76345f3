package codec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// The encoder's output must be what protobuf libraries read: an Any whose
// value is the encoded wrapper the type URL names.
func TestProtoStreamEncoderWritesRealWrappers(t *testing.T) {
	enc := mustEncoder(t, postcard.SchemaProto)
	tests := []struct {
		name        string
		in          codec.Payload
		wantURL     string
		wantContent string // the wrapper's value; for Text, a prefix
	}{
		{"json as StringValue", codec.JSONPayload(obj("a", uint64(1), "b", "x")), codec.ProtoStringValueURL, `{"a":1,"b":"x"}`},
		{"proto text as StringValue", codec.Payload{Kind: postcard.SchemaProto, Text: `name: "x"`}, codec.ProtoStringValueURL, `name: "x"`},
		{"text wrapped with metadata", codec.TextPayload("hi"), codec.ProtoStringValueURL, `{"text":"hi","timestamp":`},
		{"raw as BytesValue", codec.RawPayload([]byte{0, 1, 2}), codec.ProtoBytesValueURL, "\x00\x01\x02"},
		{"avro as BytesValue", codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{7}}, codec.ProtoBytesValueURL, "\x07"},
		{"empty raw", codec.RawPayload(nil), codec.ProtoBytesValueURL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := enc.Encode(tt.in)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			var a anypb.Any
			if err := proto.Unmarshal(b, &a); err != nil {
				t.Fatalf("not an Any: %v", err)
			}
			if a.TypeUrl != tt.wantURL {
				t.Fatalf("type_url = %q, want %q", a.TypeUrl, tt.wantURL)
			}
			var content string
			if tt.wantURL == codec.ProtoBytesValueURL {
				var w wrapperspb.BytesValue
				err = a.UnmarshalTo(&w)
				content = string(w.Value)
			} else {
				var w wrapperspb.StringValue
				err = a.UnmarshalTo(&w)
				content = w.Value
			}
			if err != nil || !strings.HasPrefix(content, tt.wantContent) {
				t.Errorf("wrapper value = %q, %v; want %q", content, err, tt.wantContent)
			}
		})
	}
}

func TestProtoStreamDecoder(t *testing.T) {
	dec := mustDecoder(t, postcard.SchemaProto)
	anyBytes, err := proto.Marshal(&anypb.Any{TypeUrl: "type.googleapis.com/shop.Order", Value: []byte{8, 1}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      []byte
		want    string
		wantErr bool
	}{
		{"an Any", anyBytes, `{"type_url":"type.googleapis.com/shop.Order","value":"CAE="}`, false},
		{"empty", nil, "", true},
		{"JSON text is not an Any", []byte(`{"a":1}`), "", true},
		{"truncated length", []byte{0x0a, 0x05, 'a'}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := dec.Decode(tt.in)
			if tt.wantErr {
				if !errors.Is(err, codec.ErrInvalidProto) {
					t.Errorf("Decode error = %v, want ErrInvalidProto", err)
				}
				return
			}
			got, _ := codec.MarshalJSON(p.JSON)
			if err != nil || string(got) != tt.want {
				t.Errorf("Decode = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestDecodeProtoWrapper(t *testing.T) {
	sv, _ := proto.Marshal(wrapperspb.String(`{"a":1}`))
	tests := []struct {
		name   string
		in     []byte
		want   string
		wantOK bool
	}{
		{"StringValue", sv, `{"a":1}`, true},
		{"empty message is the empty value", nil, "", true},
		{"bare JSON text, as upstream writes it", []byte(`{"a":1}`), "", false},
		{"field 1 as a varint", []byte{0x08, 0x01}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := codec.DecodeProtoWrapper(tt.in)
			if ok != tt.wantOK || string(got) != tt.want {
				t.Errorf("DecodeProtoWrapper = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// writeProtos lays out a schema file that imports a file from an include
// directory and a well-known type.
func writeProtos(t *testing.T) (schemaPath, includeDir string) {
	t.Helper()
	root := t.TempDir()
	includeDir = filepath.Join(root, "include")
	schemaDir := filepath.Join(root, "schemas")
	for _, d := range []string{filepath.Join(includeDir, "common"), schemaDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(includeDir, "common", "money.proto"), `syntax = "proto3";
package common;
message Money { string currency = 1; int64 units = 2; }
`)
	schemaPath = filepath.Join(schemaDir, "order.proto")
	write(schemaPath, `syntax = "proto3";
package shop;
import "common/money.proto";
import "google/protobuf/timestamp.proto";
message Order {
  enum Status { NEW = 0; PAID = 1; }
  message Line { string sku = 1; uint32 qty = 2; }
  uint64 id = 1;
  string customer = 2;
  Status status = 3;
  repeated Line lines = 4;
  map<string, int64> counters = 5;
  common.Money total = 6;
  bytes blob = 7;
  double score = 8;
  optional string note = 9;
  google.protobuf.Timestamp created = 10;
  sint64 delta = 11;
}
`)
	return schemaPath, includeDir
}

func TestProtoSchemaRoundTripKeepsEveryField(t *testing.T) {
	path, inc := writeProtos(t)
	s, err := codec.LoadProtoSchema(path, []string{inc}, "shop.Order")
	if err != nil {
		t.Fatalf("LoadProtoSchema: %v", err)
	}
	tests := []struct{ name, in, want string }{
		{"every kind of field",
			`{"id":18446744073709551615,"customer":"Zoë","status":"PAID","lines":[{"sku":"a","qty":2}],
			  "counters":{"x":-5},"total":{"currency":"EUR","units":12},"blob":"AAEC","score":1.5,"note":"n",
			  "created":"2026-01-02T03:04:05Z","delta":-9007199254740993}`,
			`{"id":18446744073709551615,"customer":"Zoë","status":"PAID","lines":[{"sku":"a","qty":2}],` +
				`"counters":{"x":-5},"total":{"currency":"EUR","units":12},"blob":"AAEC","score":1.5,"note":"n",` +
				`"created":"2026-01-02T03:04:05Z","delta":-9007199254740993}`},
		{"JSON names and enum numbers are read; defaults are written back",
			`{"id":7,"status":1}`,
			`{"id":7,"customer":"","status":"PAID","lines":[],"counters":{},"blob":"","score":0,"delta":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := s.EncodeJSON(mustParse(t, tt.in), true)
			if err != nil {
				t.Fatalf("EncodeJSON: %v", err)
			}
			got, err := s.DecodeJSON(b, true)
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

func TestProtoSchemaRejectsMismatches(t *testing.T) {
	path, inc := writeProtos(t)
	s, err := codec.LoadProtoSchema(path, []string{inc}, "shop.Order.Line")
	if err != nil {
		t.Fatalf("nested message type: %v", err)
	}
	if _, err := s.EncodeJSON(mustParse(t, `{"sku":"a","colour":"red"}`), true); !errors.Is(err, codec.ErrInvalidProto) {
		t.Errorf("strict EncodeJSON with an unknown key: %v, want ErrInvalidProto", err)
	}
	if _, err := s.EncodeJSON(mustParse(t, `{"sku":"a","colour":"red"}`), false); err != nil {
		t.Errorf("lenient EncodeJSON ignores unknown keys, got %v", err)
	}
	if _, err := s.EncodeJSON(mustParse(t, `{"qty":"many"}`), false); !errors.Is(err, codec.ErrInvalidProto) {
		t.Errorf("EncodeJSON with a string for uint32: %v, want ErrInvalidProto", err)
	}
	// Field 15 is not in Line: an unknown field, fine unless strict.
	unknown := []byte{0x0a, 0x01, 'a', 0x78, 0x01}
	if _, err := s.DecodeJSON(unknown, true); !errors.Is(err, codec.ErrInvalidProto) {
		t.Errorf("strict DecodeJSON with an unknown field: %v, want ErrInvalidProto", err)
	}
	if got, err := s.DecodeJSON(unknown, false); err != nil || !sameValue(got, mustParse(t, `{"sku":"a","qty":0}`)) {
		t.Errorf("lenient DecodeJSON = %v, %v", got, err)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 'a'}, {0x12, 0x01}, {0xff}} {
		if _, err := s.DecodeJSON(bad, false); !errors.Is(err, codec.ErrInvalidProto) {
			t.Errorf("DecodeJSON(% x) = %v, want ErrInvalidProto", bad, err)
		}
	}
}

func TestLoadProtoSchemaErrorsNameTheFile(t *testing.T) {
	path, inc := writeProtos(t)
	broken := filepath.Join(t.TempDir(), "broken.proto")
	if err := os.WriteFile(broken, []byte("syntax = \"proto3\";\nmessage A { int32 = 1; }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(t.TempDir(), "two.proto")
	if err := os.WriteFile(two, []byte("syntax = \"proto3\";\nmessage A {}\nmessage B {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.proto")
	tests := []struct {
		name, path, messageType string
		include                 []string
		wantInErr               []string
	}{
		{"missing file", missing, "A", nil, []string{missing, "no such file"}},
		{"syntax error", broken, "A", nil, []string{broken, "broken.proto:2:"}},
		{"unresolvable import", path, "shop.Order", nil, []string{path, "common/money.proto"}},
		{"unknown message type", path, "shop.Basket", []string{inc}, []string{path, `message type "shop.Basket" not found`}},
		{"message type required when the file has several", two, "", nil, []string{two, "message_type is required: the file defines 2 top-level messages"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.LoadProtoSchema(tt.path, tt.include, tt.messageType)
			if !errors.Is(err, codec.ErrProtoSchema) {
				t.Fatalf("error = %v, want ErrProtoSchema", err)
			}
			for _, want := range tt.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestProtoSchemaFromDescriptorSet(t *testing.T) {
	set, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := codec.ProtoSchemaFromDescriptorSet(set, "google.protobuf.StringValue")
	if err != nil {
		t.Fatalf("ProtoSchemaFromDescriptorSet: %v", err)
	}
	b, _ := proto.Marshal(wrapperspb.String("hi"))
	if got, err := s.DecodeJSON(b, true); err != nil || got != "hi" {
		t.Errorf("DecodeJSON = %v, %v; want the StringValue's JSON form \"hi\"", got, err)
	}
	for _, tt := range []struct {
		name, messageType string
		set               []byte
	}{
		{"not a descriptor set", "x.Y", []byte{0xff}},
		{"unknown type", "google.protobuf.Nope", set},
		{"no type", "", set},
	} {
		if _, err := codec.ProtoSchemaFromDescriptorSet(tt.set, tt.messageType); !errors.Is(err, codec.ErrProtoSchema) {
			t.Errorf("%s: error = %v, want ErrProtoSchema", tt.name, err)
		}
	}
}

// fuzzMapKeyPanic is the input FuzzProtoSchemaDecode found (kept in its seed
// corpus as af65fc96e78106af): in its map<string, int64> entry the key comes
// once as a string and then again as a varint, on which protobuf-go's
// proto.Unmarshal panics ("cannot convert nil to map key").
const fuzzMapKeyPanic = "000\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x0100100000000100000000%00000010000000000002\x010b\x0e\n\x01000\b\x80\xf2\xd6\xca02\x010"

// A map entry whose key or value has the wrong wire type is an ordinary
// decode error naming the map field, wherever the map sits; well-formed
// entries, including ones without a key or a value, still decode.
func TestProtoSchemaRejectsMalformedMapEntries(t *testing.T) {
	s, err := codec.LoadProtoSchema("testdata/proto/fuzz.proto", nil, "fuzz.Node")
	if err != nil {
		t.Fatal(err)
	}
	// counters is field 12 (tag 0x62) of fuzz.Node, children field 11 (tag 0x5a).
	keyTwice := []byte{0x62, 0x05, 0x0a, 0x01, 'a', 0x08, 0x00} // key "a", then key as a varint
	bad := []struct {
		name string
		in   []byte
	}{
		{"the fuzzer's input", []byte(fuzzMapKeyPanic)},
		{"key repeated with another wire type", keyTwice},
		{"key with the wrong wire type only", []byte{0x62, 0x02, 0x08, 0x01}},
		{"value with the wrong wire type", []byte{0x62, 0x05, 0x0a, 0x01, 'a', 0x12, 0x00}},
		{"in a nested message", append([]byte{0x5a, byte(len(keyTwice))}, keyTwice...)},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.DecodeJSON(tt.in, false)
			if !errors.Is(err, codec.ErrInvalidProto) || errors.Is(err, panicerr.ErrPanic) || !strings.Contains(err.Error(), "map field counters") {
				t.Fatalf("err = %v; want an ErrInvalidProto naming map field counters, not a panic", err)
			}
		})
	}
	good := []struct {
		name string
		in   []byte
		want string
	}{
		{"key and value", []byte{0x62, 0x05, 0x0a, 0x01, 'a', 0x10, 0x07}, `{"a":7}`},
		{"value only", []byte{0x62, 0x02, 0x10, 0x07}, `{"":7}`},
		{"key only", []byte{0x62, 0x03, 0x0a, 0x01, 'k'}, `{"k":0}`},
		{"unknown field in the entry", []byte{0x62, 0x07, 0x0a, 0x01, 'a', 0x18, 0x01, 0x10, 0x02}, `{"a":2}`},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			v, err := s.DecodeJSON(tt.in, false)
			if err != nil {
				t.Fatal(err)
			}
			counters, _ := v.(*codec.OrderedMap).Get("counters")
			if got, _ := codec.MarshalJSON(counters); string(got) != tt.want {
				t.Errorf("counters = %s, want %s", got, tt.want)
			}
		})
	}
}
