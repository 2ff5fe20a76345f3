package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// The plugin and stream schemas the fuzz target picks from (the proto encoder stamps the time
// into what it wraps text in, so two runs never match; avro streams use fuzzAvroSchema).
var (
	sourceSchemas = []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText, postcard.SchemaProto, postcard.SchemaFlatBuffer}
	streamSchemas = []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText, postcard.SchemaFlatBuffer, postcard.SchemaProto, postcard.SchemaAvro}
)

// FuzzSourceBatchPassThrough: the pass-through never changes what Iggy receives. A batch prepared
// with it (and the text encoders of proto and avro streams) and the same batch decoded and
// re-encoded message by message give the same messages
// for every stream entry, the same error counts and the same first error. Seeded with the
// FuzzParseJSON corpus.
func FuzzSourceBatchPassThrough(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), []byte(`{"id":"x","n":1}`), []byte(`{"id": "x"}`), true)
	f.Add(uint8(0), uint8(2), uint8(0), []byte(`{"a":1,"a":2}`), []byte(`not json`), false)
	f.Add(uint8(2), uint8(2), uint8(1), []byte("héllo"), []byte("\xff"), true)
	f.Add(uint8(1), uint8(1), uint8(1), []byte{0, 1, 2}, []byte{}, false)
	f.Add(uint8(0), uint8(5), uint8(1), []byte(`{"id":"x","n":1.5,"m":{"k":"v"},"b":[0,255]}`), []byte(`{"id":"y","n":null,"m":{},"b":"z","d":"e"}`), true)
	f.Add(uint8(0), uint8(5), uint8(11), []byte(`{"id":"x","n":1e400,"m":{},"b":[256]}`), []byte(`{"id":1,"m":{},"b":[]}`), false)
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("..", "pkg", "codec", "testdata", "fuzz", "FuzzParseJSON")) {
		f.Add(uint8(0), uint8(0), uint8(1), seed, []byte(`{"k":[1.5,-0.0,"\u0001"]}`), true)
	}
	f.Fuzz(func(t *testing.T, pluginPick, streamPick, secondPick uint8, p1, p2 []byte, withHeaders bool) {
		schema := sourceSchemas[int(pluginPick)%len(sourceSchemas)]
		streams := []sourceStream{testStream(t, "s0", streamSchemas[int(streamPick)%len(streamSchemas)])}
		if secondPick%2 == 1 { // a second stream entry, maybe of another schema
			streams = append(streams, testStream(t, "s1", streamSchemas[int(secondPick/2)%len(streamSchemas)]))
		}
		for _, s := range streams {
			if schema == postcard.SchemaText && s.Encoder.Schema() == postcard.SchemaProto {
				return // text into proto stamps the clock's time: two runs differ by it on any path
			}
		}
		fast, slow := newSourceBatch(nil, streams), newSourceBatch(nil, streams)
		slow.passThrough = false
		pm := producedOf(schema, withHeaders, p1, p2, p1)
		for range 2 { // the second round runs on reused buffers
			fastOut, fastRes := preparedSource(fast, &pm)
			slowOut, slowRes := preparedSource(slow, &pm)
			if fastOut != slowOut {
				t.Fatalf("plugin schema %s, streams %v, payloads %q %q: pass-through gives\n%s\nthe slow path\n%s", schema, streams, p1, p2, fastOut, slowOut)
			}
			if fastRes != slowRes {
				t.Fatalf("plugin schema %s: pass-through reports %s, the slow path %s", schema, fastRes, slowRes)
			}
		}
	})
}

func testStream(t testing.TB, name string, schema postcard.Schema) sourceStream {
	enc, err := codec.NewEncoder(schema, schemaOptions(schema))
	if err != nil {
		t.Fatal(err)
	}
	return sourceStream{Stream: name, Topic: "t", Encoder: enc}
}

// producedOf builds a produced batch with the given payloads, odd messages with an id.
func producedOf(schema postcard.Schema, withHeaders bool, payloads ...[]byte) postcard.ProducedMessages {
	pm := postcard.ProducedMessages{Schema: schema, Messages: make([]postcard.ProducedMessage, len(payloads))}
	for i, p := range payloads {
		m := &pm.Messages[i]
		m.Payload = p
		if i%2 == 1 {
			m.ID = &postcard.Uint128{Lo: uint64(i), Hi: 7}
		}
		if withHeaders {
			m.Headers = &postcard.HeaderMap{
				{Key: postcard.HeaderField{Kind: postcard.HeaderKind(iggywire.KindString - 1), Value: []byte("trace")},
					Value: postcard.HeaderField{Kind: postcard.HeaderKind(iggywire.KindUint32 - 1), Value: []byte{byte(i), 0, 0, 0}}},
			}
		}
	}
	return pm
}

// preparedSource prepares pm and returns what each stream would be sent, and the result's counts.
func preparedSource(b *sourceBatch, pm *postcard.ProducedMessages) (string, string) {
	res := b.prepare(pm, func(string, error) {})
	var out strings.Builder
	for si, outs := range b.outs {
		for _, m := range outs {
			fmt.Fprintf(&out, "stream %d: id %x headers %v payload %q\n", si, m.ID, m.Headers, m.Payload)
		}
	}
	return out.String(), fmt.Sprintf("decode errors %d, errors %d, filtered %d, first %v", res.decodeErrs, res.errs, res.filtered, res.firstErr)
}

func TestSourceBatchPassesCanonicalPayloadsThroughUnchanged(t *testing.T) {
	canonical := []byte(`{"id":"a","n":1}`)
	spaced := []byte(`{"id": "a", "n": 1}`)
	b := newSourceBatch(nil, []sourceStream{testStream(t, "s", postcard.SchemaJSON)})
	pm := producedOf(postcard.SchemaJSON, false, canonical, spaced)
	if res := b.prepare(&pm, func(msg string, err error) { t.Fatalf("%s: %v", msg, err) }); res.firstErr != nil {
		t.Fatal(res.firstErr)
	}
	outs := b.outs[0]
	if len(outs) != 2 {
		t.Fatalf("messages = %d, want 2", len(outs))
	}
	if &outs[0].Payload[0] != &canonical[0] {
		t.Error("a canonical payload was copied instead of passed through")
	}
	if string(outs[1].Payload) != string(canonical) {
		t.Errorf("the re-encoded payload = %s, want %s", outs[1].Payload, canonical)
	}
}

// A proto stream encodes a canonical json payload from its text (no parse), with the bytes
// decode and encode give; a payload the check refuses still takes the slow path.
func TestSourceBatchEncodesCanonicalJSONIntoProtoFromItsText(t *testing.T) {
	stream := testStream(t, "s", postcard.SchemaProto)
	if textEncoder(postcard.SchemaJSON, stream) == nil {
		t.Fatal("the proto stream encoder (behind its guard) does not offer AppendEncodedJSONText: the fast path never runs")
	}
	b := newSourceBatch(nil, []sourceStream{stream})
	canonical, spaced := []byte(`{"id":"a","n":1.5}`), []byte(`{"id": "a", "n": 1.5}`)
	pm := producedOf(postcard.SchemaJSON, false, canonical, spaced)
	if res := b.prepare(&pm, func(msg string, err error) { t.Fatalf("%s: %v", msg, err) }); res.firstErr != nil {
		t.Fatal(res.firstErr)
	}
	v, err := codec.ParseJSON(canonical)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stream.Encoder.Encode(codec.JSONPayload(v))
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range b.outs[0] {
		if string(out.Payload) != string(want) {
			t.Errorf("message %d: proto payload %x, want %x", i, out.Payload, want)
		}
	}
}

// A batch with a bad message is reported the same way on either path: the counts and the first
// error, which the rejection warning names.
func TestSourceBatchFailuresMatchTheSlowPath(t *testing.T) {
	tests := []struct {
		name      string
		schema    postcard.Schema
		payloads  []string
		wantFirst string
		wantErrs  [2]int // decode errors, other errors
	}{
		{"invalid json", postcard.SchemaJSON, []string{`{"a":1}`, `nope`, `{"b": 2}`}, "message 1: decode as json", [2]int{1, 0}},
		{"invalid text", postcard.SchemaText, []string{"ok", "\xff"}, "message 1: decode as text", [2]int{1, 0}},
		{"empty raw payload", postcard.SchemaRaw, []string{"x", ""}, `message 1: stream "s" topic "t": empty payload`, [2]int{0, 1}},
		{"decode failure named before a later build failure", postcard.SchemaText, []string{"", "\xff"}, "message 1: decode as text", [2]int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, pass := range []bool{true, false} {
				b := newSourceBatch(nil, []sourceStream{testStream(t, "s", tt.schema)})
				b.passThrough = pass
				payloads := make([][]byte, len(tt.payloads))
				for i, p := range tt.payloads {
					payloads[i] = []byte(p)
				}
				pm := producedOf(tt.schema, false, payloads...)
				res := b.prepare(&pm, func(string, error) {})
				if res.firstErr == nil || !strings.HasPrefix(res.firstErr.Error(), tt.wantFirst) {
					t.Errorf("pass-through %v: first error %v, want one starting %q", pass, res.firstErr, tt.wantFirst)
				}
				if got := [2]int{res.decodeErrs, res.errs}; got != tt.wantErrs {
					t.Errorf("pass-through %v: errors %v, want %v", pass, got, tt.wantErrs)
				}
			}
		})
	}
}

// benchRecordAvroSchema is the schema of benchPayloads' records (bench-e2e's).
const benchRecordAvroSchema = `{"type":"record","name":"Record","namespace":"bench","fields":[` +
	`{"name":"id","type":"string"},{"name":"title","type":"string"},` +
	`{"name":"name","type":"string"},{"name":"text","type":"string"}]}`

// BenchmarkSourceBatch prepares 1,000 x 100 B JSON messages shaped like the random source's, for
// a json stream and an avro one; allocs/msg is allocs/op / 1,000.
func BenchmarkSourceBatch(b *testing.B) {
	const n = 1000
	pm := producedOf(postcard.SchemaJSON, false, benchPayloads(n)...)
	for i := range pm.Messages {
		pm.Messages[i].ID = nil // as the random source: no ids, no headers
	}
	oneAdd := oneAddFields(b)
	jsonStream := testStream(b, "s", postcard.SchemaJSON)
	avroEncoder, err := codec.NewEncoder(postcard.SchemaAvro, codec.Options{"avro_schema_json": benchRecordAvroSchema})
	if err != nil {
		b.Fatal(err)
	}
	avroStream := sourceStream{Stream: "s", Topic: "t", Encoder: avroEncoder}
	for _, c := range []struct {
		name        string
		stream      sourceStream
		transforms  []transform.Transform
		passThrough bool
	}{
		{"pass-through", jsonStream, nil, true},
		{"decode-encode", jsonStream, nil, false},
		{"add_fields", jsonStream, oneAdd, false},
		{"avro-direct", avroStream, nil, true},
		{"avro-decode-encode", avroStream, nil, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			batch := newSourceBatch(c.transforms, []sourceStream{c.stream})
			batch.passThrough = c.passThrough
			fail := func(msg string, err error) { b.Fatalf("%s: %v", msg, err) }
			b.ReportAllocs()
			for b.Loop() {
				if res := batch.prepare(&pm, fail); len(batch.outs[0]) != n {
					b.Fatalf("%d messages prepared, %v", len(batch.outs[0]), res.firstErr)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}

// An avro stream encodes json payloads from their text into the batch's buffer, checking them
// itself: the bytes decode and encode give, no allocation per message once the buffers have
// grown; a payload that is not canonical is decoded and encoded, and failures are reported as the
// slow path reports them.
func TestSourceBatchEncodesJSONIntoAvroFromItsText(t *testing.T) {
	stream := testStream(t, "s", postcard.SchemaAvro)
	b := newSourceBatch(nil, []sourceStream{stream})
	if b.directEncoder(postcard.SchemaJSON) == nil {
		t.Fatal("the avro stream encoder (behind its guard) is no codec.JSONEncoder: the direct path never runs")
	}
	payloads := make([][]byte, 100)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"id":"m%d","n":%d,"m":{"k":"v"},"b":[1,2]}`, i, i)
	}
	payloads[3] = []byte(`{"id": "m3", "n": 3, "m": {"k": "v"}, "b": [1, 2]}`) // not canonical: decoded and encoded
	pm := producedOf(postcard.SchemaJSON, false, payloads...)
	if res := b.prepare(&pm, func(msg string, err error) { t.Fatalf("%s: %v", msg, err) }); res.firstErr != nil {
		t.Fatal(res.firstErr)
	}
	for i, out := range b.outs[0] {
		if want := fuzzAvroDatum(t, string(payloads[i])); string(out.Payload) != string(want) {
			t.Fatalf("message %d: avro payload %x, want %x", i, out.Payload, want)
		}
	}
	canonical := producedOf(postcard.SchemaJSON, false, slices.Delete(slices.Clone(payloads), 3, 4)...)
	if n := testing.AllocsPerRun(20, func() { b.prepare(&canonical, func(string, error) {}) }); n > 2 {
		t.Errorf("a 99-message avro batch allocates %.0f times, want at most 2", n)
	}

	bad := producedOf(postcard.SchemaJSON, false, []byte(`{"id":"a","m":{},"b":[]}`), []byte(`{"id":"a","m":{},"b":[256]}`), []byte(`nope`))
	for _, pass := range []bool{true, false} {
		b := newSourceBatch(nil, []sourceStream{stream})
		b.passThrough = pass
		res := b.prepare(&bad, func(string, error) {})
		if res.decodeErrs != 1 || res.errs != 1 || res.firstErr == nil || !strings.HasPrefix(res.firstErr.Error(), "message 2: decode as json") {
			t.Errorf("pass-through %v: %d decode errors, %d others, first %v; want 1, 1, message 2's decode error", pass, res.decodeErrs, res.errs, res.firstErr)
		}
	}
	// With a second stream entry the direct path is off: the canonical check and the text encoder.
	two := newSourceBatch(nil, []sourceStream{stream, testStream(t, "j", postcard.SchemaJSON)})
	if res := two.prepare(&pm, func(msg string, err error) { t.Fatalf("%s: %v", msg, err) }); res.firstErr != nil {
		t.Fatal(res.firstErr)
	}
	for i, out := range two.outs[0] {
		if want := fuzzAvroDatum(t, string(payloads[i])); string(out.Payload) != string(want) {
			t.Fatalf("two streams, message %d: avro payload %x, want %x", i, out.Payload, want)
		}
	}
}
