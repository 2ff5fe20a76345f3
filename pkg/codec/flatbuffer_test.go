package codec_test

import (
	"bytes"
	"errors"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// readRootVector reads a buffer whose root is a vector of strings (or byte
// vectors) with the FlatBuffers library's own offset rules.
func readRootVector(t *testing.T, buf []byte) []string {
	t.Helper()
	tab := flatbuffers.Table{Bytes: buf}
	vec := flatbuffers.GetUOffsetT(buf)
	n := int(flatbuffers.GetUOffsetT(buf[vec:]))
	out := make([]string, n)
	for i := range n {
		out[i] = string(tab.ByteVector(vec + flatbuffers.UOffsetT(4*(i+1))))
	}
	return out
}

// readRootString reads a buffer whose root is a string or byte vector.
func readRootString(buf []byte) string {
	return string((&flatbuffers.Table{Bytes: buf}).ByteVector(0))
}

func TestFlatBufferEncoderIsReadableByFlatBuffers(t *testing.T) {
	enc := mustEncoder(t, postcard.SchemaFlatBuffer)
	tests := []struct {
		name       string
		in         codec.Payload
		wantVector []string // root vector of strings, when the root is one
		wantString string   // root string or byte vector otherwise
	}{
		{"object as key/value strings", codec.JSONPayload(obj("name", "Zoë", "n", uint64(3), "tags", []any{"a"}, "x", nil)),
			[]string{"name", "Zoë", "n", "3", "tags", `["a"]`, "x", "null"}, ""},
		{"empty object", codec.JSONPayload(obj()), []string{}, ""},
		{"array as one JSON string", codec.JSONPayload([]any{uint64(1), "b"}), nil, `[1,"b"]`},
		{"scalar as one JSON string", codec.JSONPayload(-2.5), nil, `-2.5`},
		{"text that is JSON becomes the object layout", codec.TextPayload(`{"k":"v"}`), []string{"k", "v"}, ""},
		{"plain text as a root string", codec.TextPayload("hello"), nil, "hello"},
		{"raw bytes as a byte vector", codec.RawPayload([]byte{0, 1, 2}), nil, "\x00\x01\x02"},
		{"avro bytes as a byte vector", codec.Payload{Kind: postcard.SchemaAvro, Bytes: []byte{9}}, nil, "\x09"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := enc.Encode(tt.in)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if err := codec.VerifyFlatBuffer(b); err != nil {
				t.Fatalf("encoder output fails verification: %v", err)
			}
			if tt.wantVector != nil {
				got := readRootVector(t, b)
				if len(got) != len(tt.wantVector) {
					t.Fatalf("root vector %q, want %q", got, tt.wantVector)
				}
				for i := range got {
					if got[i] != tt.wantVector[i] {
						t.Errorf("root vector %q, want %q", got, tt.wantVector)
						break
					}
				}
				return
			}
			if got := readRootString(b); got != tt.wantString {
				t.Errorf("root string %q, want %q", got, tt.wantString)
			}
		})
	}
}

func TestFlatBufferEncoderPassesFlatBuffersThrough(t *testing.T) {
	in := []byte{4, 0, 0, 0, 1, 2, 3, 4}
	got, err := mustEncoder(t, postcard.SchemaFlatBuffer).Encode(codec.Payload{Kind: postcard.SchemaFlatBuffer, Bytes: in})
	if err != nil || !bytes.Equal(got, in) {
		t.Errorf("Encode = % x, %v; want the input", got, err)
	}
}

func TestFlatBufferDecoder(t *testing.T) {
	valid, err := codec.FlatBufferEncoder{}.Encode(codec.TextPayload("hi"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dec     codec.Decoder
		in      []byte
		want    string
		wantErr bool
	}{
		{"stream decoder describes the buffer", mustDecoder(t, postcard.SchemaFlatBuffer), valid,
			`{"buffer_size":12,"has_root_table":true,"raw_data_base64":"BAAAAAIAAABoaQAA"}`, false},
		{"root table name is reported", codec.FlatBufferDecoder{Verify: true, RootTableName: "Order"}, valid,
			`{"buffer_size":12,"has_root_table":true,"root_table_type":"Order","raw_data_base64":"BAAAAAIAAABoaQAA"}`, false},
		{"without verification short buffers pass", codec.FlatBufferDecoder{}, []byte{1},
			`{"buffer_size":1,"has_root_table":true,"raw_data_base64":"AQ=="}`, false},
		{"empty", mustDecoder(t, postcard.SchemaFlatBuffer), nil, "", true},
		{"shorter than a root offset", mustDecoder(t, postcard.SchemaFlatBuffer), []byte{1, 2, 3}, "", true},
		{"root offset past the end", mustDecoder(t, postcard.SchemaFlatBuffer), []byte{8, 0, 0, 0, 0, 0, 0, 0}, "", true},
		{"JSON text is not a FlatBuffer", mustDecoder(t, postcard.SchemaFlatBuffer), []byte(`{"a":1}`), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.dec.Decode(tt.in)
			if tt.wantErr {
				if !errors.Is(err, codec.ErrInvalidFlatBuffer) {
					t.Errorf("Decode(% x) error = %v, want ErrInvalidFlatBuffer", tt.in, err)
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
