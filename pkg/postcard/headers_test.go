package postcard_test

import (
	"bytes"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

func field(kind postcard.HeaderKind, value string) postcard.HeaderField {
	return postcard.HeaderField{Kind: kind, Value: []byte(value)}
}

func entry(key, value postcard.HeaderField) postcard.HeaderEntry {
	return postcard.HeaderEntry{Key: key, Value: value}
}

// The encoder sorts keys by (kind, bytes) and keeps the last duplicate, so
// any input order gives the bytes a BTreeMap would.
func TestAppendHeaderMapOrder(t *testing.T) {
	a := entry(field(postcard.HeaderKindString, "a"), field(postcard.HeaderKindString, "1"))
	b := entry(field(postcard.HeaderKindString, "b"), field(postcard.HeaderKindString, "2"))
	raw := entry(field(postcard.HeaderKindRaw, "z"), field(postcard.HeaderKindBool, "\x01"))
	aLater := entry(field(postcard.HeaderKindString, "a"), field(postcard.HeaderKindString, "3"))
	aPrefix := entry(field(postcard.HeaderKindString, ""), field(postcard.HeaderKindString, "4"))
	tests := []struct {
		name string
		in   postcard.HeaderMap
		want postcard.HeaderMap
	}{
		{"already sorted", postcard.HeaderMap{raw, a, b}, postcard.HeaderMap{raw, a, b}},
		{"reversed", postcard.HeaderMap{b, a, raw}, postcard.HeaderMap{raw, a, b}},
		{"kind sorts before bytes", postcard.HeaderMap{a, raw}, postcard.HeaderMap{raw, a}},
		{"shorter prefix first", postcard.HeaderMap{a, aPrefix}, postcard.HeaderMap{aPrefix, a}},
		{"later duplicate wins", postcard.HeaderMap{a, b, aLater}, postcard.HeaderMap{aLater, b}},
		{"adjacent duplicate", postcard.HeaderMap{a, aLater}, postcard.HeaderMap{aLater}},
		{"empty", postcard.HeaderMap{}, postcard.HeaderMap{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postcard.AppendHeaderMap(nil, tt.in)
			want := appendEntriesInOrder(tt.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("got % X\nwant % X", got, want)
			}
		})
	}
}

// appendEntriesInOrder encodes a map known to be strictly ascending, one
// entry at a time through single-entry maps, so the expectation does not
// rely on the sorting under test.
func appendEntriesInOrder(m postcard.HeaderMap) []byte {
	out := []byte{byte(len(m))}
	for _, e := range m {
		out = append(out, postcard.AppendHeaderMap(nil, postcard.HeaderMap{e})[1:]...)
	}
	return out
}

func TestDecodeHeaderMapOrderAndDuplicates(t *testing.T) {
	a1 := entry(field(postcard.HeaderKindString, "a"), field(postcard.HeaderKindString, "1"))
	a2 := entry(field(postcard.HeaderKindString, "a"), field(postcard.HeaderKindUint8, "\x02"))
	b := entry(field(postcard.HeaderKindString, "b"), field(postcard.HeaderKindString, "2"))
	n := entry(field(postcard.HeaderKindInt8, "\xff"), field(postcard.HeaderKindRaw, ""))
	tests := []struct {
		name string
		wire postcard.HeaderMap // entries written in this order, unsorted
		want postcard.HeaderMap
	}{
		{"unsorted comes back sorted", postcard.HeaderMap{n, b, a1}, postcard.HeaderMap{a1, b, n}},
		{"later duplicate wins", postcard.HeaderMap{a1, b, a2}, postcard.HeaderMap{a2, b}},
		{"later duplicate wins, reversed", postcard.HeaderMap{a2, b, a1}, postcard.HeaderMap{a1, b}},
		{"empty value", postcard.HeaderMap{n}, postcard.HeaderMap{n}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := postcard.DecodeHeaderMap(appendEntriesInOrder(tt.wire))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			assertEqual(t, got, tt.want)
		})
	}
}

// serde_with's Base64 decodes with padding mode Indifferent: padded,
// unpadded and partially padded text all decode.
func TestDecodeBase64Accepted(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", ""},
		{"aw==", "k"},
		{"aw=", "k"},
		{"aw", "k"},
		{"a2s=", "kk"},
		{"a2s", "kk"},
		{"a2tr", "kkk"},
		{"/v////////8=", "\xfe\xff\xff\xff\xff\xff\xff\xff"},
		{"+/+/", "\xfb\xff\xbf"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := postcard.DecodeBase64([]byte(tt.text))
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestHeaderKindIggyCodes(t *testing.T) {
	tests := []struct {
		kind postcard.HeaderKind
		code uint8
		name string
	}{
		{postcard.HeaderKindRaw, 1, "raw"},
		{postcard.HeaderKindString, 2, "string"},
		{postcard.HeaderKindBool, 3, "bool"},
		{postcard.HeaderKindInt8, 4, "int8"},
		{postcard.HeaderKindInt128, 8, "int128"},
		{postcard.HeaderKindUint8, 9, "uint8"},
		{postcard.HeaderKindUint32, 11, "uint32"},
		{postcard.HeaderKindUint128, 13, "uint128"},
		{postcard.HeaderKindFloat32, 14, "float32"},
		{postcard.HeaderKindFloat64, 15, "float64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.IggyCode(); got != tt.code {
				t.Errorf("IggyCode() = %d, want %d", got, tt.code)
			}
			if got, ok := postcard.HeaderKindFromIggyCode(tt.code); !ok || got != tt.kind {
				t.Errorf("HeaderKindFromIggyCode(%d) = %v, %v; want %v", tt.code, got, ok, tt.kind)
			}
			if got := tt.kind.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
		})
	}
}

func TestHeaderKindInvalid(t *testing.T) {
	for _, code := range []uint8{0, 16, 255} {
		if k, ok := postcard.HeaderKindFromIggyCode(code); ok {
			t.Errorf("HeaderKindFromIggyCode(%d) = %v, want not ok", code, k)
		}
	}
	if got := postcard.HeaderKind(15).String(); got != "HeaderKind(15)" {
		t.Errorf("String() of index 15 = %q", got)
	}
	if postcard.HeaderKind(15).Valid() || !postcard.HeaderKindFloat64.Valid() {
		t.Error("Valid() must accept 0..14 only")
	}
}

func TestSchemaString(t *testing.T) {
	tests := []struct {
		schema postcard.Schema
		want   string
	}{
		{postcard.SchemaJSON, "json"},
		{postcard.SchemaRaw, "raw"},
		{postcard.SchemaText, "text"},
		{postcard.SchemaProto, "proto"},
		{postcard.SchemaFlatBuffer, "flat_buffer"},
		{postcard.SchemaAvro, "avro"},
		{postcard.Schema(6), "Schema(6)"},
	}
	for _, tt := range tests {
		if got := tt.schema.String(); got != tt.want {
			t.Errorf("Schema(%d).String() = %q, want %q", uint32(tt.schema), got, tt.want)
		}
		if valid := tt.schema < 6; tt.schema.Valid() != valid {
			t.Errorf("Schema(%d).Valid() = %v", uint32(tt.schema), !valid)
		}
	}
}
