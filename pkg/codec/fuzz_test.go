package codec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// FuzzParseJSON: message payloads are untrusted. Parsing never panics, and
// whatever it accepts serializes to standard JSON that parses back to the
// same value and serializes identically again.
func FuzzParseJSON(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"name":"x","tags":["a"],"price":12.5,"n":null,"ok":true}`,
		`[-0,-0.0,1e21,1e-7,18446744073709551615,-9223372036854775808]`,
		`"\ud83d\ude00\u0000\n"`, `{"a":1,"a":2}`, `[[[[]]]]`, "\"\x01\"", `1e400`, `{"a" 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := codec.ParseJSON(b)
		if err != nil {
			if !errors.Is(err, codec.ErrInvalidJSON) {
				t.Fatalf("error does not wrap ErrInvalidJSON: %v", err)
			}
			return
		}
		out, err := codec.MarshalJSON(v)
		if err != nil {
			t.Fatalf("MarshalJSON of a parsed value: %v", err)
		}
		if !json.Valid(out) {
			t.Fatalf("output is not standard JSON: %q", out)
		}
		again, err := codec.ParseJSON(out)
		// "-0" parses as int64 0 and is written as 0, which parses as
		// uint64 0 (as upstream); otherwise the value must be identical.
		if err != nil || !sameValue(normalizeZero(again), normalizeZero(v)) {
			t.Fatalf("re-parse of %q = %#v, %v; want %#v", out, again, err, v)
		}
		if out2, _ := codec.MarshalJSON(again); !bytes.Equal(out, out2) {
			t.Fatalf("serialization not stable: %q then %q", out, out2)
		}
	})
}

// FuzzTextDecoder: the text decoder accepts exactly valid UTF-8 and keeps the
// bytes unchanged.
func FuzzTextDecoder(f *testing.F) {
	for _, seed := range []string{"héllo", "\xff", "", "a\xc3", "😀"} {
		f.Add([]byte(seed))
	}
	dec, err := codec.NewDecoder(postcard.SchemaText, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := dec.Decode(b)
		noPanic(t, err)
		if utf8.Valid(b) != (err == nil) {
			t.Fatalf("Decode(%q) error = %v, but utf8.Valid = %v", b, err, utf8.Valid(b))
		}
		if err == nil && p.Text != string(b) {
			t.Fatalf("Decode(%q) text = %q", b, p.Text)
		}
	})
}

// FuzzPayloadFromFFI: bytes from source plugins, for every schema (proto
// runs the Any decoder). Never panics; proto never fails and either keeps the
// bytes as Raw or yields the two-key Any object.
func FuzzPayloadFromFFI(f *testing.F) {
	f.Add(uint8(postcard.SchemaProto), []byte{0x0a, 0x01, 't', 0x12, 0x01, 0x00})
	f.Add(uint8(postcard.SchemaProto), []byte{0x1b, 0x08, 0x01, 0x1c})
	f.Add(uint8(postcard.SchemaJSON), []byte(`{"a":[1,2]}`))
	f.Add(uint8(postcard.SchemaText), []byte("text"))
	f.Fuzz(func(t *testing.T, schema uint8, b []byte) {
		p, err := codec.PayloadFromFFI(postcard.Schema(schema%6), b)
		noPanic(t, err)
		if postcard.Schema(schema%6) != postcard.SchemaProto {
			return
		}
		if err != nil {
			t.Fatalf("proto must never fail: %v", err)
		}
		switch p.Kind {
		case postcard.SchemaRaw:
			if !bytes.Equal(p.Bytes, b) {
				t.Fatalf("raw fallback changed the bytes")
			}
		case postcard.SchemaJSON:
			m, ok := p.JSON.(*codec.OrderedMap)
			if !ok || m.Len() != 2 || !m.Has("type_url") || !m.Has("value") {
				t.Fatalf("Any JSON = %#v", p.JSON)
			}
		default:
			t.Fatalf("proto gave kind %s", p.Kind)
		}
	})
}

// normalizeZero maps int64 0 to uint64 0 throughout v.
func normalizeZero(v any) any {
	switch t := v.(type) {
	case int64:
		if t == 0 {
			return uint64(0)
		}
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalizeZero(e)
		}
		return out
	case *codec.OrderedMap:
		out := codec.NewOrderedMap(t.Len())
		for _, m := range t.Members() {
			out.Set(m.Key, normalizeZero(m.Value))
		}
		return out
	}
	return v
}
