package codec_test

import (
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// A few bytes that claim a huge length (of a string, a byte array, a map or array block, a
// nested message, a FlatBuffer root) must fail without allocating what they claim: a batch of
// such messages would otherwise cost a megabyte each. Each input is decoded 100 times and may
// allocate at most 64 KiB per decode on average (the fixed costs are a few hundred bytes).
func TestHugeLengthClaimsAllocateLittle(t *testing.T) {
	avro := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"s","type":"string"},
		{"name":"b","type":"bytes"},{"name":"m","type":{"type":"map","values":"string"}},{"name":"a","type":{"type":"array","items":"null"}}]}`)
	proto, err := codec.LoadProtoSchema("testdata/proto/fuzz.proto", nil, "fuzz.Node")
	if err != nil {
		t.Fatal(err)
	}
	protoStream, _ := codec.NewDecoder(postcard.SchemaProto, nil)
	flatBuffer, _ := codec.NewDecoder(postcard.SchemaFlatBuffer, nil)
	const claim = 1_000_000
	zigzag := func(n int64) []byte { return protowire.AppendVarint(nil, protowire.EncodeZigZag(n)) }
	cat := func(parts ...[]byte) (out []byte) {
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tag := func(field protowire.Number) []byte { return protowire.AppendTag(nil, field, protowire.BytesType) }
	tests := []struct {
		name   string
		decode func([]byte) error
		in     []byte
	}{
		{"avro string", avroDecode(avro), cat(zigzag(claim), []byte("x"))},
		{"avro bytes", avroDecode(avro), cat(zigzag(0), zigzag(claim), []byte{1})},
		{"avro map key", avroDecode(avro), cat(zigzag(0), zigzag(0), zigzag(1), zigzag(claim), []byte("k"))},
		{"avro array block", avroDecode(avro), cat(zigzag(0), zigzag(0), zigzag(0), zigzag(claim))},
		{"proto bytes field", protoDecode(proto), cat(tag(9), protowire.AppendVarint(nil, claim), []byte{1})},
		{"proto nested message", protoDecode(proto), cat(tag(11), protowire.AppendVarint(nil, claim), []byte{0x08})},
		{"proto map entry", protoDecode(proto), cat(tag(12), protowire.AppendVarint(nil, claim), []byte{0x0a})},
		{"proto Any value", streamDecode(protoStream), cat(tag(2), protowire.AppendVarint(nil, claim), []byte{1})},
		{"flat buffer root offset", streamDecode(flatBuffer), []byte{0x40, 0x42, 0x0f, 0x00, 0x00}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(tt.in); err == nil {
				t.Fatalf("% x decodes; want an error", tt.in)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 100 {
				_ = tt.decode(tt.in)
			}
			runtime.ReadMemStats(&after)
			if perDecode := (after.TotalAlloc - before.TotalAlloc) / 100; perDecode > 64<<10 {
				t.Errorf("% x allocates %d bytes per decode", tt.in, perDecode)
			}
		})
	}
}

func avroDecode(s *codec.AvroSchema) func([]byte) error {
	return func(b []byte) error { _, err := s.DecodeJSON(b); return err }
}

func protoDecode(s *codec.ProtoSchema) func([]byte) error {
	return func(b []byte) error { _, err := s.DecodeJSON(b, false); return err }
}

func streamDecode(d codec.Decoder) func([]byte) error {
	return func(b []byte) error { _, err := d.Decode(b); return err }
}
