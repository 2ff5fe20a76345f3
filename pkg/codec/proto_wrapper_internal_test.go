package codec

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzProtoAnyWrapper: the one-step Any of a wrapper is byte for byte the two-step encoding,
// in a buffer of exactly its size.
func FuzzProtoAnyWrapper(f *testing.F) {
	f.Add(ProtoStringValueURL, []byte(`{"a":1}`))
	f.Add(ProtoBytesValueURL, []byte{})
	f.Add("", []byte("x"))
	f.Add(ProtoStringValueURL, bytes.Repeat([]byte("y"), 300))        // two-byte lengths
	f.Add(strings.Repeat("u", 200), bytes.Repeat([]byte("z"), 20000)) // three-byte length
	f.Fuzz(func(t *testing.T, typeURL string, v []byte) {
		want := AppendProtoAny(nil, typeURL, AppendProtoWrapper(nil, v))
		got := newProtoAnyWrapper(typeURL, v)
		if !bytes.Equal(got, want) {
			t.Fatalf("typeURL %q, %d bytes: got\n% x\nwant\n% x", typeURL, len(v), got, want)
		}
		if cap(got) != len(got) {
			t.Fatalf("buffer of %d for %d bytes: the size is wrong", cap(got), len(got))
		}
	})
}
