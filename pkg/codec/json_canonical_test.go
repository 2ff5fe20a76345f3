package codec_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// FuzzCanonicalJSON: the sink's pass-through is exact. Whenever CanonicalJSON
// accepts bytes, ParseJSON accepts them too and MarshalJSON writes them back
// byte for byte, so skipping the parse and the write changes nothing the
// plugin receives. Seeded with the FuzzParseJSON corpus as well.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range canonicalCases {
		f.Add([]byte(seed.in))
	}
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("testdata", "fuzz", "FuzzParseJSON")) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !codec.CanonicalJSON(b) {
			return
		}
		v, err := codec.ParseJSON(b)
		if err != nil {
			t.Fatalf("CanonicalJSON(%q) = true, but ParseJSON fails: %v", b, err)
		}
		out, err := codec.MarshalJSON(v)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("CanonicalJSON(%q) = true, but MarshalJSON writes %q (%v)", b, out, err)
		}
	})
}

// canonicalCases: what the pass-through takes (the common shapes of real
// payloads must be among them, or the fast path never runs) and what it must
// leave to the slow path.
var canonicalCases = []struct {
	in   string
	want bool
}{
	{`{"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","title":"Hello","name":"World","text":"abcdefghijklmn"}`, true},
	{`{"n":1,"neg":-5,"big":18446744073709551615,"min":-9223372036854775808,"ok":true,"no":false,"x":null}`, true},
	{`{"f":12.5,"g":0.001234,"h":1e21,"i":1.5e-7,"j":-0.0,"k":0.0,"l":100.0,"m":5e-324}`, true},
	{`[1,[2,[]],{},{"a":{"b":[]}}]`, true},
	{`"Zoë 😀 \" \\ \n \t \b \f \r \u0000 \u001f"`, true},
	{"\"raw \x7f and \u2028\"", true},
	{`"abcdefghijklmnopq\"rstuvwxyz\\0123456789"`, true}, {`["abcdefgh","ijklmnop",""]`, true},
	{`0`, true}, {`-1`, true}, {`"x"`, true}, {`true`, true}, {`[]`, true}, {`{}`, true},

	{``, false},
	{` {}`, false}, {`{} `, false}, {`{"a": 1}`, false}, {`[1, 2]`, false}, {"{\n}", false},
	{`{"a":1,"a":2}`, false}, {`{"a":1,"b":{"a":2},"a":3}`, false},
	{`-0`, false}, {`01`, false}, {`1.`, false}, {`.5`, false}, {`1e5`, false}, {`1E5`, false},
	{`1.50`, false}, {`1e+21`, false}, {`1.0e21`, false}, {`12345678901234567890.0`, false},
	{`18446744073709551616`, false}, {`-9223372036854775809`, false}, {`1e400`, false}, {`1e-400`, false},
	{`"\/"`, false}, {`"\u0041"`, false}, {`"\u000a"`, false}, {`"\u001F"`, false}, {`"\u007f"`, false}, {`"\ud83d\ude00"`, false},
	{"\"\x01\"", false}, {"\"\xff\"", false}, {`"abc`, false}, {`{"a":1`, false}, {`[1,]`, false},
	{`{"a":1,}`, false}, {`tru`, false}, {`nul`, false}, {`truex`, false}, {`1x`, false}, {`[1]x`, false},
	{"\"abcdefghijklmnop\x01qrstuvwxyz\"", false}, {"\"abcdefghijklmnop\x1fq\"", false}, {`"abcdefghijklmnopqrstuvwx`, false},
	{strings.Repeat("[", 65) + strings.Repeat("]", 65), false},

	// canonicalString validates UTF-8 itself, 8 bytes at a time: non-ASCII at
	// every offset in and across a word, invalid sequences in the word loop
	// and in the tail, and non-ASCII outside strings.
	{"\"abcdefgZo\u00eb\"", true}, {"\"a\u00e9bcdefgh\u20ac\U0001F600ijklmnop\"", true}, {"\"abcdefg\U0001F600\"", true},
	{"\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"", true}, {"\"\uFFFD\"", true}, {"\"abcdefghi\uFFFD\"", true},
	{"\"abcdefgh\xe2\x82\"", false}, {"\"abcdefghijklmno\xc3\"", false}, {"\"ab\xc0\xafcdefghij\"", false},
	{"\"abcdefghij\xed\xa0\x80klmnopq\"", false}, {"\"abcdefghijklmnopqrstuvw\xf4\x90\x80\x80\"", false},
	{"\"abcdefgh\x80\"", false}, {"\"\xe2\x82\"", false}, {"{\"a\":1}\u00e9", false}, {"[1,\u00e9]", false}, {"\u00a01", false},
	{`"abcdefgh\\"`, true}, {`"abcdefgh\""`, true}, {`"abcdefgh\q"`, false}, {`"abcdefgh\u001f"`, true},
	// The duplicate-key filter: keys of equal length and last byte that
	// differ, repeats of them, and a repeat among more keys than the filter has bits.
	{`{"ab":1,"cb":2,"xb":3}`, true}, {`{"ab":1,"cb":2,"ab":3}`, false}, {`{"":1,"a":2,"":3}`, false}, {`{"":1,"a":2}`, true},
	{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"k9":16}`, false},
	{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16}`, true},
}

func TestCanonicalJSON(t *testing.T) {
	for _, c := range canonicalCases {
		if got := codec.CanonicalJSON([]byte(c.in)); got != c.want {
			t.Errorf("CanonicalJSON(%q) = %v, want %v", c.in, got, c.want)
		}
		if !c.want {
			continue
		}
		v, err := codec.ParseJSON([]byte(c.in))
		if err != nil {
			t.Fatalf("ParseJSON(%q): %v", c.in, err)
		}
		if out, _ := codec.MarshalJSON(v); string(out) != c.in {
			t.Errorf("case %q is marked canonical but MarshalJSON writes %q", c.in, out)
		}
	}
}

func TestPassThrough(t *testing.T) {
	for _, c := range []struct {
		schema postcard.Schema
		in     string
		want   bool
	}{
		{postcard.SchemaRaw, "\xff anything", true},
		{postcard.SchemaText, "héllo", true},
		{postcard.SchemaText, "\xff", false},
		{postcard.SchemaJSON, `{"a":1}`, true},
		{postcard.SchemaJSON, `{"a": 1}`, false},
		{postcard.SchemaProto, "\x0a\x01t", false},
		{postcard.SchemaAvro, "\x02", false},
		{postcard.SchemaFlatBuffer, "\x00\x00\x00\x00", false},
	} {
		if got := codec.PassThrough(c.schema, []byte(c.in)); got != c.want {
			t.Errorf("PassThrough(%s, %q) = %v, want %v", c.schema, c.in, got, c.want)
		}
	}
}

func TestCanonicalJSONDoesNotAllocate(t *testing.T) {
	in := []byte(`{"id":"6f1c0c4e","n":12,"f":12.5,"tags":["a","b"],"o":{"x":null}}`)
	if n := testing.AllocsPerRun(100, func() { codec.CanonicalJSON(in) }); n != 0 {
		t.Errorf("CanonicalJSON allocates %.1f times per call, want 0", n)
	}
}

func BenchmarkCanonicalJSON(b *testing.B) {
	in := []byte(`{"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","title":"Hello","name":"World","text":"abcdefghijklmn"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if !codec.CanonicalJSON(in) {
			b.Fatal("not canonical")
		}
	}
}

// FuzzProtoJSONText: the proto stream decoder's direct text is byte for byte what Decode and
// PayloadToFFI give, and it refuses exactly the bytes Decode fails on. Seeded with the
// FuzzProtoStreamDecoder corpus.
func FuzzProtoJSONText(f *testing.F) {
	f.Add(codec.AppendProtoAny(nil, codec.ProtoStringValueURL, codec.AppendProtoWrapper(nil, []byte(`{"a":1}`))))
	f.Add(codec.AppendProtoAny(nil, "type\"with\\escapes\x01é", []byte{0, 1, 2, 0xff}))
	f.Add([]byte{})
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("testdata", "fuzz", "FuzzProtoStreamDecoder")) {
		f.Add(seed)
	}
	dec, err := codec.NewDecoder(postcard.SchemaProto, nil)
	if err != nil {
		f.Fatal(err)
	}
	text, isText := dec.(codec.JSONTextDecoder)
	if !isText {
		f.Fatal("the proto stream decoder is not a JSONTextDecoder")
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := text.AppendJSONText([]byte("prefix"), b)
		p, err := dec.Decode(b)
		if ok != (err == nil) {
			t.Fatalf("AppendJSONText ok = %v, Decode error = %v", ok, err)
		}
		if !ok {
			if string(out) != "prefix" {
				t.Fatalf("a refused decode changed dst to %q", out)
			}
			return
		}
		want, err := codec.PayloadToFFI(p)
		if err != nil || !bytes.Equal(out[len("prefix"):], want) {
			t.Fatalf("AppendJSONText(%x) = %q, Decode + PayloadToFFI = %q (%v)", b, out[len("prefix"):], want, err)
		}
	})
}
