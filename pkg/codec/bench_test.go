package codec_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// A typical ~100-byte event payload.
var benchPayload = []byte(`{"id":100042,"user":"user-0042","event":"click","amount":42.25,"tags":["web","eu"],"ok":true}`)

func BenchmarkParseJSON(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchPayload)))
	for range b.N {
		if _, err := codec.ParseJSON(benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, err := codec.ParseJSON(benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchPayload)))
	for range b.N {
		if buf, err = codec.AppendJSON(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}
