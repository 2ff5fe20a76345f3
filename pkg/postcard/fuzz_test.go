package postcard_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The fuzz targets feed arbitrary bytes to the decoders of data that comes
// from plugins or crosses to them. Seeds (the spec vectors and some broken
// variants) live in testdata/fuzz. Each target checks that decoding never
// panics, that every failure wraps ErrMalformed, and that a decoded value
// survives encode → decode unchanged, with the encoding stable thereafter.

func FuzzDecodeRawMessages(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := postcard.DecodeRawMessages(b)
		if err != nil {
			requireMalformed(t, err)
			return
		}
		enc := postcard.AppendRawMessages(nil, v)
		// Minimal varints and opaque header bytes: never longer than the input.
		if len(enc) > len(b) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(b), len(enc))
		}
		again, err := postcard.DecodeRawMessages(enc)
		if err != nil {
			t.Fatalf("decode of re-encoded value: %v", err)
		}
		assertEqual(t, again, v)
		if enc2 := postcard.AppendRawMessages(nil, again); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding not stable:\n% X\n% X", enc, enc2)
		}
		for _, m := range v.Messages {
			if len(m.Headers) == 0 {
				continue
			}
			if _, err := postcard.DecodeHeaderMap(m.Headers); err != nil {
				requireMalformed(t, err)
			}
		}
	})
}

func FuzzDecodeProducedMessages(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := postcard.DecodeProducedMessages(b)
		if err != nil {
			requireMalformed(t, err)
			return
		}
		enc := postcard.AppendProducedMessages(nil, v)
		again, err := postcard.DecodeProducedMessages(enc)
		if err != nil {
			t.Fatalf("decode of re-encoded value: %v", err)
		}
		assertEqual(t, again, v)
		if enc2 := postcard.AppendProducedMessages(nil, again); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding not stable:\n% X\n% X", enc, enc2)
		}
	})
}

// FuzzDecodeProducedMessagesPlainPath: the plain-message fast path decodes exactly what the
// field-by-field path decodes, and fails exactly where it fails, with the same error.
func FuzzDecodeProducedMessagesPlainPath(f *testing.F) {
	plain := producedBatch(3, 20)
	for i := range plain.Messages {
		plain.Messages[i] = postcard.ProducedMessage{Payload: plain.Messages[i].Payload}
	}
	f.Add(postcard.AppendProducedMessages(nil, plain))
	mixed := producedBatch(3, 200) // ids, timestamps, headers and two-byte lengths
	mixed.Messages[1] = postcard.ProducedMessage{Payload: []byte("x")}
	f.Add(postcard.AppendProducedMessages(nil, mixed))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 5, 'a'})                    // a length past the end
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0x81, 0x80, 0x80, 0x00, 0}) // a four-byte length (non-minimal)
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0x81, 0x00, 'a', 0})        // a two-byte non-minimal length of 1
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("testdata", "fuzz", "FuzzDecodeProducedMessages")) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, fastErr := postcard.DecodeProducedMessages(b)
		slow, slowErr := postcard.DecodeProducedMessagesSlow(b)
		if (fastErr == nil) != (slowErr == nil) || fastErr != nil && fastErr.Error() != slowErr.Error() {
			t.Fatalf("errors differ: fast %v, slow %v", fastErr, slowErr)
		}
		if fastErr == nil {
			assertEqual(t, fast, slow)
		}
	})
}

func FuzzDecodeHeaderMap(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := postcard.DecodeHeaderMap(b)
		if err != nil {
			requireMalformed(t, err)
			return
		}
		for i := 1; i < len(m); i++ {
			if k1, k2 := m[i-1].Key, m[i].Key; k1.Kind > k2.Kind || (k1.Kind == k2.Kind && bytes.Compare(k1.Value, k2.Value) >= 0) {
				t.Fatalf("entries %d and %d not in strictly ascending key order", i-1, i)
			}
		}
		enc := postcard.AppendHeaderMap(nil, m)
		again, err := postcard.DecodeHeaderMap(enc)
		if err != nil {
			t.Fatalf("decode of re-encoded map: %v", err)
		}
		assertEqual(t, again, m)
	})
}

// FuzzDecodeMetadata covers the two small consume buffers and the state.
func FuzzDecodeMetadata(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := postcard.DecodeTopicMetadata(b); err != nil {
			requireMalformed(t, err)
		} else if got, err := postcard.DecodeTopicMetadata(postcard.AppendTopicMetadata(nil, v)); err != nil || got != v {
			t.Fatalf("TopicMetadata round trip: got %+v, %v; want %+v", got, err, v)
		}
		if v, err := postcard.DecodeMessagesMetadata(b); err != nil {
			requireMalformed(t, err)
		} else if got, err := postcard.DecodeMessagesMetadata(postcard.AppendMessagesMetadata(nil, v)); err != nil || got != v {
			t.Fatalf("MessagesMetadata round trip: got %+v, %v; want %+v", got, err, v)
		}
		if s, err := postcard.DecodeConnectorState(b); err != nil {
			requireMalformed(t, err)
		} else if got, err := postcard.DecodeConnectorState(postcard.AppendConnectorState(nil, s)); err != nil || !bytes.Equal(got, s) {
			t.Fatalf("ConnectorState round trip: got % X, %v; want % X", got, err, s)
		}
	})
}

func requireMalformed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, postcard.ErrMalformed) {
		t.Fatalf("error does not wrap ErrMalformed: %v", err)
	}
}
