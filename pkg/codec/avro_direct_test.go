package codec_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// The Avro direct paths (avro_text.go, avro_fromtext.go) against the slow paths they stand in
// for: DecodeJSON then AppendJSON on the sink, ParseJSON then EncodeJSON on the source.

// kitchenAvroSchema adds what orderSchema and recursiveAvroSchema lack: a wide union (its branches
// tried in order, float before double), logical types, nested arrays of maps, an empty record, a
// zero-size fixed and defaults of every kind.
const kitchenAvroSchema = `{"type":"record","name":"K","namespace":"fz","fields":[
	{"name":"u","type":["null","boolean","int","long","float","double","bytes","string",
		{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":7},{"name":"b","type":["null","string"],"default":null}]},
		{"type":"array","items":["null","int","R"]},
		{"type":"map","values":{"type":"map","values":"double"}},
		{"type":"enum","name":"E","symbols":["A","B","C_1"]},
		{"type":"fixed","name":"F","size":3}]},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"day","type":{"type":"int","logicalType":"date"}},
	{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
	{"name":"id","type":{"type":"string","logicalType":"uuid"}},
	{"name":"f32","type":"float","default":1.5},
	{"name":"nested","type":{"type":"array","items":{"type":"array","items":{"type":"map","values":"E"}}}},
	{"name":"empty","type":{"type":"record","name":"Empty","fields":[]}},
	{"name":"fx0","type":{"type":"fixed","name":"F0","size":0}},
	{"name":"withdef","type":{"type":"record","name":"W","fields":[{"name":"a","type":"int","default":7},{"name":"b","type":"string","default":"z"}]},"default":{"a":1}},
	{"name":"blob","type":"bytes","default":"\u00ff"},
	{"name":"s","type":"string","default":"dflt"},
	{"name":"e","type":"E","default":"B"},
	{"name":"arrdef","type":{"type":"array","items":"long"},"default":[1,2,3]},
	{"name":"mapdef","type":{"type":"map","values":"string"},"default":{"k":"v","a":"b"}},
	{"name":"nulldef","type":"R","default":{"a":1,"b":null}}]}`

// unionAvroSchema is a union at the top: numbers go to float when they fit it, else to double.
const unionAvroSchema = `["null","float","double","string",{"type":"map","values":["null","bytes","string"]}]`

// directSchemas are the schemas the tests and fuzz targets pick from, with a value of each.
var directSchemas = []struct{ name, schema, value string }{
	{"order", orderSchema, `{"id":1,"qty":2,"price":3.5,"ratio":0.25,"paid":true,"customer":"c","note":null,"status":"NEW",` +
		`"tags":["t"],"attrs":{"k":9},"blob":[1,2],"code":[3,4],"address":{"city":"x","zip":1},"channel":"web"}`},
	{"tree", recursiveAvroSchema, `{"label":"root","kids":[{"label":"a","kids":[],"next":null,"meta":{}}],` +
		`"next":{"label":"n","kids":[],"next":null,"meta":{"b":true,"d":1.5,"x":[0]}},"meta":{}}`},
	{"kitchen", kitchenAvroSchema, `{"u":{"a":3,"b":"x"},"ts":1700000000000,"day":-3,"dec":[0,1,255],` +
		`"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","f32":-0.0,"nested":[[{"x":"A","y":"C_1"}],[]],"empty":{},"fx0":[],` +
		`"withdef":{"a":-2147483648},"blob":"\u0000\n\"é","s":"😀","e":"C_1","arrdef":[],"mapdef":{}}`},
	{"union", unionAvroSchema, `{"a":null,"b":[0,255],"c":"x\u001f"}`},
}

func directSchema(tb testing.TB, i int) *codec.AvroSchema {
	tb.Helper()
	return mustAvro(tb, directSchemas[i%len(directSchemas)].schema)
}

// parsedDirectSchemas parses every schema of directSchemas once, for the fuzz targets.
func parsedDirectSchemas(tb testing.TB) []*codec.AvroSchema {
	tb.Helper()
	out := make([]*codec.AvroSchema, len(directSchemas))
	for i := range directSchemas {
		out[i] = directSchema(tb, i)
	}
	return out
}

// compareSinkDirect checks the sink's direct path on datum b against DecodeJSON and AppendJSON
// and returns its verdict.
func compareSinkDirect(t *testing.T, s *codec.AvroSchema, b []byte) int {
	t.Helper()
	prefix := []byte("prefix")
	out, res := codec.AvroJSONText(s, prefix, b)
	v, err := s.DecodeJSON(b)
	switch res {
	case codec.AvroDirectOK:
		if err != nil {
			t.Fatalf("datum %x: the direct path writes %s, DecodeJSON fails: %v", b, out, err)
		}
		want, err := codec.AppendJSON([]byte("prefix"), v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("datum %x: the direct path writes\n%s\nthe slow path\n%s", b, out, want)
		}
	case codec.AvroDirectInvalid:
		if err == nil {
			t.Fatalf("datum %x: the direct path calls it invalid, DecodeJSON accepts it", b)
		}
		fallthrough
	default:
		if !bytes.Equal(out, prefix) {
			t.Fatalf("datum %x: verdict %d, but dst became %q", b, res, out)
		}
	}
	return res
}

// compareSourceDirect checks the source's direct path on JSON text against ParseJSON and
// EncodeJSON and returns its verdict.
func compareSourceDirect(t *testing.T, s *codec.AvroSchema, text []byte) int {
	t.Helper()
	prefix := []byte{0xee}
	out, res := codec.AvroEncodedJSON(s, prefix, text)
	v, perr := codec.ParseJSON(text)
	var want []byte
	werr := perr
	if perr == nil {
		want, werr = s.EncodeJSON(v)
	}
	switch res {
	case codec.AvroDirectOK:
		if perr != nil {
			t.Fatalf("text %q: the direct path encodes %x, ParseJSON fails: %v", text, out, perr)
		}
		if !codec.CanonicalJSON(text) {
			t.Fatalf("text %q: the direct path took text that is not canonical", text)
		}
		if werr != nil {
			t.Fatalf("text %s: the direct path encodes %x, EncodeJSON fails: %v", text, out, werr)
		}
		if !bytes.Equal(out, append([]byte{0xee}, want...)) {
			t.Fatalf("text %s: the direct path encodes\n%x\nthe slow path\n%x", text, out[1:], want)
		}
	case codec.AvroDirectInvalid:
		if werr == nil {
			t.Fatalf("text %q: the direct path calls it invalid, EncodeJSON gives %x", text, want)
		}
		fallthrough
	default:
		if !bytes.Equal(out, prefix) {
			t.Fatalf("text %q: verdict %d, but dst became %x", text, res, out)
		}
	}
	return res
}

func TestAvroDirectPathsMatchTheSlowPaths(t *testing.T) {
	tests := []struct {
		schema     int
		text       string
		sourceWant int // the source's verdict; the sink, given EncodeJSON's datum, must write it back
	}{
		{0, directSchemas[0].value, codec.AvroDirectOK},
		{1, directSchemas[1].value, codec.AvroDirectOK},
		{2, directSchemas[2].value, codec.AvroDirectOK},
		{3, directSchemas[3].value, codec.AvroDirectOK},
		// Defaults for every missing field, the union taking null; nulldef's default holds a null.
		{2, `{"ts":0,"day":0,"dec":"","id":"","nested":[],"empty":{"extra":1},"fx0":""}`, codec.AvroDirectOK},
		// Union branches in order: a boolean, an int, a long, a float, a double, bytes taken as
		// string (string comes after bytes), an array of ints and records, a map of maps, an enum
		// (a string that is a symbol still goes to bytes first), a fixed as a 3-number array.
		{2, `{"u":true,"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":-2147483649,"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":1.5e300,"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":18446744073709551615,"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":[null,5,{"a":1}],"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":[1,2,300],"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":{"m":{"x":1,"y":2.5}},"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectOK},
		{2, `{"u":{"a":"not an int"},"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectInvalid},
		// A top-level union: float when the number fits it, double beyond.
		{3, `3.4028235e38`, codec.AvroDirectOK},
		{3, `3.5e38`, codec.AvroDirectOK},
		{3, `-7`, codec.AvroDirectOK},
		{3, `true`, codec.AvroDirectInvalid},
		// Failures: a required field missing (null does not fit long), a wrong type, an int out of
		// range, an unknown symbol, a byte out of range, a fixed of the wrong size.
		{0, `{"qty":2}`, codec.AvroDirectInvalid},
		{0, `{"id":"1"}`, codec.AvroDirectInvalid},
		{2, `{"ts":1,"day":2147483648,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectInvalid},
		{2, `{"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[],"e":"D"}`, codec.AvroDirectInvalid},
		{2, `{"ts":1,"day":1,"dec":[256],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectInvalid},
		{2, `{"ts":1,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[1]}`, codec.AvroDirectInvalid},
		{2, `{"ts":1.0,"day":1,"dec":[],"id":"","nested":[],"empty":{},"fx0":[]}`, codec.AvroDirectInvalid},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := directSchema(t, tt.schema)
			text := canonicalText(t, tt.text)
			if got := compareSourceDirect(t, s, text); got != tt.sourceWant {
				t.Fatalf("source verdict %d, want %d", got, tt.sourceWant)
			}
			datum, err := s.EncodeJSON(mustParse(t, tt.text))
			if err != nil {
				return
			}
			if got := compareSinkDirect(t, s, datum); got != codec.AvroDirectOK {
				t.Fatalf("sink verdict %d for datum %x, want it written", got, datum)
			}
		})
	}
}

// canonicalText is text as AppendJSON writes it, checked to be what the source's direct path
// takes.
func canonicalText(tb testing.TB, text string) []byte {
	tb.Helper()
	out, err := codec.MarshalJSON(mustParse(tb, text))
	if err != nil || !codec.CanonicalJSON(out) {
		tb.Fatalf("%s: %s is not canonical (%v)", text, out, err)
	}
	return out
}

// The sink's direct path leaves to the slow path what it cannot prove and what fails.
func TestAvroSinkDirectPathVerdicts(t *testing.T) {
	mapOfLongs := mustAvro(t, `{"type":"map","values":"long"}`)
	str := mustAvro(t, `"string"`)
	dbl := mustAvro(t, `"double"`)
	tests := []struct {
		name   string
		schema *codec.AvroSchema
		datum  []byte
		want   int
	}{
		{"a map key given twice", mapOfLongs, []byte{4, 2, 'k', 2, 2, 'k', 4, 0}, codec.AvroDirectUnproven},
		{"map keys unique", mapOfLongs, []byte{4, 2, 'k', 2, 2, 'j', 4, 0}, codec.AvroDirectOK},
		{"a negative block count with its size", mapOfLongs, []byte{1, 8, 2, 'k', 2, 0}, codec.AvroDirectOK},
		{"empty", str, nil, codec.AvroDirectInvalid},
		{"trailing bytes", str, []byte{2, 'a', 0}, codec.AvroDirectInvalid},
		{"invalid UTF-8", str, []byte{2, 0xff}, codec.AvroDirectInvalid},
		{"control characters escaped", str, []byte{6, 1, '"', '\\'}, codec.AvroDirectOK},
		{"a length beyond the datum", str, []byte{8, 'a'}, codec.AvroDirectInvalid},
		{"NaN", dbl, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, codec.AvroDirectInvalid},
		{"the smallest subnormal", dbl, []byte{1, 0, 0, 0, 0, 0, 0, 0}, codec.AvroDirectOK},
		{"a 10-byte varint", mapOfLongs, []byte{2, 2, 'k', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0}, codec.AvroDirectOK},
		{"an 11-byte varint", mapOfLongs, []byte{2, 2, 'k', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0}, codec.AvroDirectInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareSinkDirect(t, tt.schema, tt.datum); got != tt.want {
				t.Errorf("verdict %d, want %d", got, tt.want)
			}
		})
	}
}

// The source's direct path takes only canonical JSON; anything else goes to the slow path (or is
// called invalid where the slow path fails whatever the text).
func TestAvroSourceDirectPathChecksItsText(t *testing.T) {
	order := mustAvro(t, orderSchema)
	mapOfLongs := mustAvro(t, `{"type":"map","values":"long"}`)
	bytesSchema := mustAvro(t, `"bytes"`)
	enum := mustAvro(t, `{"type":"enum","name":"E","symbols":["A","B"]}`)
	dbl := mustAvro(t, `"double"`)
	tests := []struct {
		name   string
		schema *codec.AvroSchema
		text   string
		want   int
	}{
		{"canonical", mapOfLongs, `{"a":1,"b":-2}`, codec.AvroDirectOK},
		{"whitespace", mapOfLongs, `{"a": 1}`, codec.AvroDirectUnproven},
		{"a repeated map key", mapOfLongs, `{"a":1,"a":2}`, codec.AvroDirectUnproven},
		{"a leading zero", mapOfLongs, `{"a":01}`, codec.AvroDirectUnproven},
		{"minus zero", mapOfLongs, `{"a":-0}`, codec.AvroDirectUnproven},
		{"a float for a long", mapOfLongs, `{"a":1.5}`, codec.AvroDirectInvalid},
		{"a string for a long", mapOfLongs, `{"a":"1"}`, codec.AvroDirectInvalid},
		{"a non-canonical escape in a key", mapOfLongs, `{"\u0061":1}`, codec.AvroDirectUnproven},
		{"a raw control character", mapOfLongs, "{\"a\x01\":1}", codec.AvroDirectUnproven},
		{"invalid UTF-8", mapOfLongs, "{\"a\xff\":1}", codec.AvroDirectUnproven},
		{"trailing bytes", mapOfLongs, `{"a":1}x`, codec.AvroDirectUnproven},
		{"truncated", mapOfLongs, `{"a":1`, codec.AvroDirectUnproven},
		{"empty", mapOfLongs, ``, codec.AvroDirectUnproven},
		{"an enum symbol escaped", enum, `"\u0041"`, codec.AvroDirectUnproven},
		{"an unknown symbol", enum, `"C"`, codec.AvroDirectInvalid},
		{"bytes from numbers with minus zero", bytesSchema, `[-0,1]`, codec.AvroDirectUnproven},
		{"bytes from numbers", bytesSchema, `[0,255]`, codec.AvroDirectOK},
		{"bytes from a number out of range", bytesSchema, `[0,256]`, codec.AvroDirectInvalid},
		{"bytes from a leading zero", bytesSchema, `[01]`, codec.AvroDirectUnproven},
		{"a float not in shortest form", dbl, `1.50`, codec.AvroDirectUnproven},
		{"a bare fraction", dbl, `.5`, codec.AvroDirectUnproven},
		{"a plus sign", dbl, `+1`, codec.AvroDirectUnproven},
		{"a string for a double", dbl, `"1"`, codec.AvroDirectInvalid},
		{"a literal cut short", mustAvro(t, `["null","string"]`), `nul`, codec.AvroDirectUnproven},
		{"a repeated record member", order, `{"id":1,"id":2}`, codec.AvroDirectUnproven},
		{"an extra member not canonical", order, `{"qty":2,"zz":[1.50]}`, codec.AvroDirectUnproven},
		{"an extra member canonical", order, `{"qty":2,"zz":[1.5]}`, codec.AvroDirectInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareSourceDirect(t, tt.schema, []byte(tt.text)); got != tt.want {
				t.Errorf("verdict %d, want %d", got, tt.want)
			}
		})
	}
}

// Both direct paths write into the caller's buffer and allocate nothing of their own.
func TestAvroDirectPathsDoNotAllocate(t *testing.T) {
	s := mustAvro(t, directSchemas[2].schema)
	text := canonicalText(t, directSchemas[2].value)
	datum, err := s.EncodeJSON(mustParse(t, directSchemas[2].value))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(50, func() { codec.AvroJSONText(s, buf[:0], datum) }); n != 0 {
		t.Errorf("the sink's direct path allocates %.0f times per datum", n)
	}
	if n := testing.AllocsPerRun(50, func() { codec.AvroEncodedJSON(s, buf[:0], text) }); n != 0 {
		t.Errorf("the source's direct path allocates %.0f times per record", n)
	}
}

// FuzzAvroJSONText: for any bytes and each schema, the sink's direct path writes exactly the text
// DecodeJSON then AppendJSON give, or calls the datum invalid only when DecodeJSON fails.
func FuzzAvroJSONText(f *testing.F) {
	for i, d := range directSchemas {
		datum, err := directSchema(f, i).EncodeJSON(mustParse(f, d.value))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), datum)
	}
	f.Add(uint8(3), []byte{8, 4, 2, 'k', 0, 2, 'k', 2, 0})
	f.Add(uint8(0), []byte{0xfe, 0xff, 0xff, 0xff, 0x0f})
	schemas := parsedDirectSchemas(f)
	f.Fuzz(func(t *testing.T, pick uint8, b []byte) {
		compareSinkDirect(t, schemas[int(pick)%len(schemas)], b)
	})
}

// FuzzAvroEncodeJSON: for any bytes and each schema, the source's direct path encodes exactly
// what ParseJSON then EncodeJSON give, takes only canonical JSON, and calls the text invalid only
// when one of them fails. The input is the text, or (fromDatum) an Avro datum whose decoded
// value's text is used, so the fuzzer reaches values that fit the schema.
func FuzzAvroEncodeJSON(f *testing.F) {
	for i, d := range directSchemas {
		f.Add(uint8(i), []byte(d.value), false)
		datum, err := directSchema(f, i).EncodeJSON(mustParse(f, d.value))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), datum, true)
	}
	f.Add(uint8(2), []byte(`{"u":[1,2,300],"nested":[[{"a":"B"}]],"dec":"x"}`), false)
	f.Add(uint8(3), []byte(`3.5e38`), false)
	schemas := parsedDirectSchemas(f)
	f.Fuzz(func(t *testing.T, pick uint8, data []byte, fromDatum bool) {
		s := schemas[int(pick)%len(schemas)]
		text := data
		if fromDatum {
			v, err := s.DecodeJSON(data)
			if err != nil {
				return
			}
			if text, err = codec.MarshalJSON(v); err != nil {
				t.Fatal(err)
			}
		}
		compareSourceDirect(t, s, text)
	})
}

// BenchmarkAvroDirect compares the direct paths with the slow ones on the bench-e2e record.
func BenchmarkAvroDirect(b *testing.B) {
	s := mustAvro(b, `{"type":"record","name":"Record","namespace":"bench","fields":[`+
		`{"name":"id","type":"string"},{"name":"title","type":"string"},`+
		`{"name":"name","type":"string"},{"name":"text","type":"string"}]}`)
	text := []byte(`{"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","title":"Hello","name":"World","text":"abcdefghijklmn"}`)
	datum, err := s.EncodeJSON(mustParse(b, string(text)))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.Run("sink-slow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := s.DecodeJSON(datum)
			buf, _ = codec.AppendJSON(buf[:0], v)
		}
	})
	b.Run("sink-direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = codec.AvroJSONText(s, buf[:0], datum)
		}
	})
	b.Run("source-slow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := codec.ParseJSON(text)
			buf, _ = s.EncodeJSON(v)
		}
	})
	b.Run("source-direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = codec.AvroEncodedJSON(s, buf[:0], text)
		}
	})
}
