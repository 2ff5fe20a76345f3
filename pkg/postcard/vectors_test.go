package postcard_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// unhex turns the spec's spaced hex ("01 73 ...") into bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex in test table: %v", err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// Hex vectors of docs/plugin-abi.md §2.4, verbatim.
const (
	hexV1  = "01 73 01 74"
	hexV1b = "06 6F 72 64 65 72 73 06 65 76 65 6E 74 73"
	hexV2  = "01 AC 02 00"
	hexV2b = "03 C0 84 3D 05"
	hexV3  = "00 01 00 00 00 00 00 03 01 02 03 00"
	hexV4  = "01 01 04 61 77 3D 3D 01 04 64 67 3D 3D"
	hexV5  = "01 01 01 01 00 01 80 80 F9 C0 C1 C4 82 03 00 01 01 01 04 61 77 3D 3D 01 04 64 67 3D 3D 02 68 69 01 02 91 2A"
	hexV5b = "00 00 00"
	hexV6  = "02 01 80 80 80 80 80 80 80 80 80 02 05 EF FD B6 F5 0D 80 80 F9 C0 C1 C4 82 03 80 80 F9 C0 C1 C4 82 03 0D 01 01 04 61 77 3D 3D 01 04 64 67 3D 3D 02 68 69"
	hexV7  = "03 00 04 2F 77 3D 3D 06 0C 2F 76 2F 2F 2F 2F 2F 2F 2F 2F 38 3D 01 10 59 32 39 75 64 47 56 75 64 43 31 30 65 58 42 6C 01 10 64 47 56 34 64 43 39 77 62 47 46 70 62 67 3D 3D 0A 08 4B 67 41 41 41 41 3D 3D 02 04 41 51 3D 3D"
)

var hexV6b = "01 02 00 00 00 00 00 00 00 " + strings.Repeat("FF ", 18) + "03 " + strings.Repeat("FF ", 9) + "01 7F 80 01 80 80 01 00 01 00"

// v4Map is {String "k": String "v"}.
var v4Map = postcard.HeaderMap{{
	Key:   postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("k")},
	Value: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("v")},
}}

// v7Map is {Raw FF: Int64 -2, String "content-type": String "text/plain", Uint32 42: Bool true}.
var v7Map = postcard.HeaderMap{
	{
		Key:   postcard.HeaderField{Kind: postcard.HeaderKindRaw, Value: []byte{0xFF}},
		Value: postcard.HeaderField{Kind: postcard.HeaderKindInt64, Value: []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
	},
	{
		Key:   postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("content-type")},
		Value: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("text/plain")},
	},
	{
		Key:   postcard.HeaderField{Kind: postcard.HeaderKindUint32, Value: []byte{42, 0, 0, 0}},
		Value: postcard.HeaderField{Kind: postcard.HeaderKindBool, Value: []byte{1}},
	},
}

// vector is one spec value with its bytes and the codec functions for its type.
type vector struct {
	name   string
	hex    string
	encode func(dst []byte) []byte
	decode func(b []byte) (any, error)
	want   any
}

func specVectors(t testing.TB) []vector {
	topic := func(v postcard.TopicMetadata) vector {
		return vector{
			encode: func(dst []byte) []byte { return postcard.AppendTopicMetadata(dst, v) },
			decode: func(b []byte) (any, error) { return postcard.DecodeTopicMetadata(b) },
			want:   v,
		}
	}
	msgsMeta := func(v postcard.MessagesMetadata) vector {
		return vector{
			encode: func(dst []byte) []byte { return postcard.AppendMessagesMetadata(dst, v) },
			decode: func(b []byte) (any, error) { return postcard.DecodeMessagesMetadata(b) },
			want:   v,
		}
	}
	produced := func(v postcard.ProducedMessages) vector {
		return vector{
			encode: func(dst []byte) []byte { return postcard.AppendProducedMessages(dst, v) },
			decode: func(b []byte) (any, error) { return postcard.DecodeProducedMessages(b) },
			want:   v,
		}
	}
	raw := func(v postcard.RawMessages) vector {
		return vector{
			encode: func(dst []byte) []byte { return postcard.AppendRawMessages(dst, v) },
			decode: func(b []byte) (any, error) { return postcard.DecodeRawMessages(b) },
			want:   v,
		}
	}
	headers := func(v postcard.HeaderMap) vector {
		return vector{
			encode: func(dst []byte) []byte { return postcard.AppendHeaderMap(dst, v) },
			decode: func(b []byte) (any, error) { return postcard.DecodeHeaderMap(b) },
			want:   v,
		}
	}
	const ts = 1700000000000000
	table := []struct {
		name, hex string
		v         vector
	}{
		{"V1", hexV1, topic(postcard.TopicMetadata{Stream: "s", Topic: "t"})},
		{"V1b", hexV1b, topic(postcard.TopicMetadata{Stream: "orders", Topic: "events"})},
		{"V2", hexV2, msgsMeta(postcard.MessagesMetadata{PartitionID: 1, CurrentOffset: 300, Schema: postcard.SchemaJSON})},
		{"V2b", hexV2b, msgsMeta(postcard.MessagesMetadata{PartitionID: 3, CurrentOffset: 1000000, Schema: postcard.SchemaAvro})},
		{"V3", hexV3, produced(postcard.ProducedMessages{
			Schema:   postcard.SchemaJSON,
			Messages: []postcard.ProducedMessage{{Payload: []byte{1, 2, 3}}},
		})},
		{"V4", hexV4, headers(v4Map)},
		{"V5", hexV5, produced(postcard.ProducedMessages{
			Schema: postcard.SchemaRaw,
			Messages: []postcard.ProducedMessage{{
				ID:        &postcard.Uint128{Lo: 1},
				Timestamp: ptr(uint64(ts)),
				Headers:   &v4Map,
				Payload:   []byte("hi"),
			}},
			State:    []byte{0x91, 0x2A},
			HasState: true,
		})},
		{"V5b", hexV5b, produced(postcard.ProducedMessages{Schema: postcard.SchemaJSON, Messages: []postcard.ProducedMessage{}})},
		{"V6", hexV6, raw(postcard.RawMessages{
			Schema: postcard.SchemaText,
			Messages: []postcard.RawMessage{{
				ID: postcard.Uint128{Hi: 1}, Offset: 5, Checksum: 0xDEADBEEF, Timestamp: ts, OriginTimestamp: ts,
				Headers: unhex(t, hexV4), Payload: []byte("hi"),
			}},
		})},
		{"V6b", hexV6b, raw(postcard.RawMessages{
			Schema: postcard.SchemaRaw,
			Messages: []postcard.RawMessage{
				{Headers: []byte{}, Payload: []byte{}},
				{
					ID: postcard.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, Offset: ^uint64(0), Checksum: 127, Timestamp: 128, OriginTimestamp: 16384,
					Headers: []byte{}, Payload: []byte{0},
				},
			},
		})},
		{"V7", hexV7, headers(v7Map)},
	}
	out := make([]vector, len(table))
	for i, row := range table {
		out[i] = row.v
		out[i].name, out[i].hex = row.name, row.hex
	}
	return out
}

func TestSpecVectorsEncode(t *testing.T) {
	for _, v := range specVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			want := unhex(t, v.hex)
			if got := v.encode(nil); !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got % X\nwant % X", got, want)
			}
		})
	}
}

func TestSpecVectorsDecode(t *testing.T) {
	for _, v := range specVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			got, err := v.decode(unhex(t, v.hex))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			assertEqual(t, got, v.want)
		})
	}
}
