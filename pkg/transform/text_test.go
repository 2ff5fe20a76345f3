package transform_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// addFieldsOf builds add_fields with the given key/static-value pairs.
func addFieldsOf(t testing.TB, pairs ...any) transform.TextTransform {
	t.Helper()
	var fields []any
	for i := 0; i < len(pairs); i += 2 {
		fields = append(fields, map[string]any{"key": pairs[i], "value": map[string]any{"static": pairs[i+1]}})
	}
	ts, err := transform.Build(map[string]any{"add_fields": map[string]any{"enabled": true, "fields": fields}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := transform.TextTransforms(ts)
	if len(text) != 1 {
		t.Fatalf("add_fields is not a TextTransform")
	}
	return text[0]
}

// decodedAddFields is the slow path: parse, Apply, write.
func decodedAddFields(t testing.TB, tr transform.Transform, src []byte) ([]byte, bool) {
	v, err := codec.ParseJSON(src)
	if err != nil {
		return nil, false
	}
	m := codec.Message{Payload: codec.Payload{Kind: postcard.SchemaJSON, JSON: v}}
	if keep, err := tr.Apply(&m); err != nil || !keep {
		t.Fatalf("Apply: keep %v, %v", keep, err)
	}
	out, err := codec.MarshalJSON(m.Payload.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return out, true
}

// FuzzAddFieldsText: whenever add_fields edits the text, the result is byte for byte what
// decoding, Apply and encoding give. Seeded with the FuzzParseJSON corpus.
func FuzzAddFieldsText(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "origin", "x")
	f.Add([]byte(`{}`), "a", "\u0001")
	f.Add([]byte(`{"origin":1}`), "origin", "y")
	f.Add([]byte(`[1]`), "k", "v")
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("..", "codec", "testdata", "fuzz", "FuzzParseJSON")) {
		f.Add(seed, "id", "z")
	}
	f.Fuzz(func(t *testing.T, src []byte, key, value string) {
		tr := addFieldsOf(t, key, value, key+"2", 7)
		out, ok := tr.ApplyJSONText([]byte("prefix"), src)
		if !ok {
			if string(out) != "prefix" {
				t.Fatalf("a refused edit changed dst to %q", out)
			}
			return
		}
		want, parsed := decodedAddFields(t, tr, src)
		if !parsed || !bytes.Equal(out[len("prefix"):], want) {
			t.Fatalf("ApplyJSONText(%q) = %q, decoded path %q (parsed %v)", src, out[len("prefix"):], want, parsed)
		}
	})
}

func TestAddFieldsText(t *testing.T) {
	tr := addFieldsOf(t, "origin", "bench", "n", 2)
	for _, c := range []struct {
		src, want string
		ok        bool
	}{
		{`{"a":1}`, `{"a":1,"origin":"bench","n":2}`, true},
		{`{}`, `{"origin":"bench","n":2}`, true},
		{`{"a":{"origin":1}}`, `{"a":{"origin":1},"origin":"bench","n":2}`, true},
		{`{"origin":1}`, "", false}, // replaced in place: the decoded path does it
		{`{"a": 1}`, "", false},
		{`[1]`, "", false},
		{`"s"`, "", false},
	} {
		out, ok := tr.ApplyJSONText(nil, []byte(c.src))
		if ok != c.ok || string(out) != c.want {
			t.Errorf("ApplyJSONText(%s) = %q, %v; want %q, %v", c.src, out, ok, c.want, c.ok)
		}
		if ok {
			if want, _ := decodedAddFields(t, tr, []byte(c.src)); string(want) != c.want {
				t.Errorf("decoded path for %s = %s, the table says %s", c.src, want, c.want)
			}
		}
	}
	if same := addFieldsOf(t, "k", 1, "k", 2); func() bool { _, ok := same.ApplyJSONText(nil, []byte(`{}`)); return ok }() {
		t.Error("a key set twice edits the text; its second value replaces the first in place")
	}
}
