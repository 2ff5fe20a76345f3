package runner

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// batchSchemas are the stream schemas the fuzz target picks from (avro with fuzzAvroSchema).
var batchSchemas = []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText, postcard.SchemaProto, postcard.SchemaFlatBuffer, postcard.SchemaAvro}

// fuzzAvroSchema is the avro streams' schema in the batch fuzz targets: strings as the bench
// records have them, a union, a map (whose repeated keys the direct paths leave to the slow ones),
// bytes, and a field with a default.
const fuzzAvroSchema = `{"type":"record","name":"M","fields":[{"name":"id","type":"string"},` +
	`{"name":"n","type":["null","long","double"]},{"name":"m","type":{"type":"map","values":"string"}},` +
	`{"name":"b","type":"bytes"},{"name":"d","type":"string","default":"dflt"}]}`

// schemaOptions are the stream options the batch tests give a schema: avro gets fuzzAvroSchema.
func schemaOptions(schema postcard.Schema) codec.Options {
	if schema == postcard.SchemaAvro {
		return codec.Options{"avro_schema_json": fuzzAvroSchema}
	}
	return nil
}

// fuzzAvroDatum is one datum of fuzzAvroSchema, for seeds.
func fuzzAvroDatum(tb testing.TB, text string) []byte {
	tb.Helper()
	s, err := codec.ParseAvroSchema(fuzzAvroSchema)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := codec.ParseJSON([]byte(text))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := s.EncodeJSON(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzSinkBatchPassThrough: the fast paths never change what the plugin receives. A batch
// prepared with the pass-through or the direct JSON text of the proto and avro decoders (no
// transforms), or
// with the text form of add_fields, and the same
// batch decoded, transformed and re-encoded message by message, give the same postcard
// RawMessages bytes and drop the same messages at the same stages. Seeded with the FuzzParseJSON
// corpus.
func FuzzSinkBatchPassThrough(f *testing.F) {
	f.Add(uint8(0), []byte(`{"id":"x","n":1}`), []byte(`{"id": "x"}`), true)
	f.Add(uint8(0), []byte(`{"a":1,"a":2}`), []byte(`not json`), false)
	f.Add(uint8(2), []byte("héllo"), []byte("\xff"), true)
	f.Add(uint8(1), []byte{0, 1, 2}, []byte{}, false)
	f.Add(uint8(3), codec.AppendProtoAny(nil, codec.ProtoStringValueURL, codec.AppendProtoWrapper(nil, []byte(`{"a":1}`))), []byte{0x0a, 0x01, 't'}, true)
	f.Add(uint8(5), fuzzAvroDatum(f, `{"id":"x\u0001","n":1.5,"m":{"k":"v","origin":"o"},"b":[0,255]}`),
		fuzzAvroDatum(f, `{"id":"é","n":-3,"m":{},"b":"x"}`), true)
	f.Add(uint8(5), []byte{2, 'x', 0, 4, 2, 'k', 0, 2, 'k', 0, 0, 0, 0}, []byte{2, 'x', 2}, false) // a repeated map key; a truncated datum
	for _, seed := range testkit.FuzzCorpus(f, filepath.Join("..", "pkg", "codec", "testdata", "fuzz", "FuzzParseJSON")) {
		f.Add(uint8(0), seed, []byte(`{"k":[1.5,-0.0,"\u0001"]}`), true)
	}
	f.Fuzz(func(t *testing.T, schemaPick uint8, p1, p2 []byte, withHeaders bool) {
		schema := batchSchemas[int(schemaPick)%len(batchSchemas)]
		dec, err := codec.NewDecoder(schema, schemaOptions(schema))
		if err != nil {
			t.Fatal(err)
		}
		msgs := batchOf(withHeaders, p1, p2, p1)
		fast, slow := newSinkBatch(dec, nil, 4), newSinkBatch(dec, nil, 4)
		slow.passThrough, slow.textDecoder = false, nil
		text, decoded := newSinkBatch(dec, oneAddFields(t), 4), newSinkBatch(dec, oneAddFields(t), 4)
		decoded.text, decoded.textDecoder = nil, nil
		for range 2 { // the second round runs on reused buffers
			for _, pair := range [][2]*sinkBatch{{fast, slow}, {text, decoded}} {
				fastBytes, fastDrops := preparedBytes(t, pair[0], schema, msgs)
				slowBytes, slowDrops := preparedBytes(t, pair[1], schema, msgs)
				if !bytes.Equal(fastBytes, slowBytes) {
					t.Fatalf("schema %s, %d transforms, payloads %q %q: the fast path gives\n%x\nthe slow path\n%x",
						schema, len(pair[0].transforms), p1, p2, fastBytes, slowBytes)
				}
				if fastDrops != slowDrops {
					t.Fatalf("schema %s: the fast path drops %q, the slow path %q", schema, fastDrops, slowDrops)
				}
			}
		}
		// A batch long enough that the pass-through check is split over two goroutines.
		payloads := make([][]byte, splitCheckMin+1)
		for i := range payloads {
			payloads[i] = [][]byte{p1, p2}[i%2]
		}
		long := batchOf(withHeaders, payloads...)
		fastBytes, fastDrops := preparedBytes(t, fast, schema, long)
		slowBytes, slowDrops := preparedBytes(t, slow, schema, long)
		if !bytes.Equal(fastBytes, slowBytes) || fastDrops != slowDrops {
			t.Fatalf("schema %s, %d messages, payloads %q %q: the split check gives\n%x (drops %q)\nthe slow path\n%x (drops %q)",
				schema, len(long), p1, p2, fastBytes, fastDrops, slowBytes, slowDrops)
		}
	})
}

// oneAddFields is one add_fields transform with a static value.
func oneAddFields(tb testing.TB) []transform.Transform {
	tb.Helper()
	var cfg map[string]any
	if _, err := toml.Decode("[add_fields]\nenabled = true\n[[add_fields.fields]]\nkey = \"origin\"\nvalue.static = \"bench\"\n", &cfg); err != nil {
		tb.Fatal(err)
	}
	ts, err := transform.Build(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return ts
}

// batchOf builds polled messages with the given payloads at offsets 10, 11, ...
func batchOf(withHeaders bool, payloads ...[]byte) []iggyclient.InMessage {
	msgs := make([]iggyclient.InMessage, len(payloads))
	for i, p := range payloads {
		msgs[i] = iggyclient.InMessage{
			ID:     [16]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			Offset: uint64(10 + i), Checksum: uint64(1000 + i), Timestamp: uint64(2000 + i), OriginTimestamp: uint64(3000 + i),
			Payload: p,
		}
		if withHeaders {
			msgs[i].Headers = []iggyclient.HeaderEntry{
				{KeyKind: iggywire.KindString, Key: []byte("trace"), Kind: iggywire.KindString, Value: []byte("abc")},
				{KeyKind: iggywire.KindString, Key: []byte("n"), Kind: iggywire.KindUint32, Value: []byte{byte(i), 0, 0, 0}},
			}
		}
	}
	return msgs
}

// preparedBytes prepares msgs and returns the RawMessages the plugin would get and the drops.
func preparedBytes(t *testing.T, b *sinkBatch, schema postcard.Schema, msgs []iggyclient.InMessage) ([]byte, string) {
	t.Helper()
	var drops string
	b.prepare(msgs, func(stage string, offset uint64, err error) { drops += fmt.Sprintf("%s@%d: %v; ", stage, offset, err) })
	return postcard.AppendRawMessages(nil, postcard.RawMessages{Schema: schema, Messages: b.records}), drops
}

func TestSinkBatchPassesCanonicalPayloadsThroughUnchanged(t *testing.T) {
	dec, err := codec.NewDecoder(postcard.SchemaJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	canonical := []byte(`{"id":"a","n":1}`)
	spaced := []byte(`{"id": "a", "n": 1}`)
	b := newSinkBatch(dec, nil, 2)
	b.prepare(batchOf(false, canonical, spaced), func(stage string, offset uint64, err error) { t.Fatalf("dropped %d at %s: %v", offset, stage, err) })
	if len(b.records) != 2 {
		t.Fatalf("records = %d, want 2", len(b.records))
	}
	if &b.records[0].Payload[0] != &canonical[0] {
		t.Error("a canonical payload was copied instead of passed through")
	}
	if string(b.records[1].Payload) != string(canonical) {
		t.Errorf("the re-encoded payload = %s, want %s", b.records[1].Payload, canonical)
	}
}

func TestSinkBatchKeepsOrderAcrossPathsAndDrops(t *testing.T) {
	dec, err := codec.NewDecoder(postcard.SchemaJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newSinkBatch(dec, nil, 4)
	var dropped []uint64
	b.prepare(batchOf(false, []byte(`{"a": 1}`), []byte(`{"a":2}`), []byte(`nope`), []byte(`{"a": 3}`)),
		func(_ string, offset uint64, _ error) { dropped = append(dropped, offset) })
	var got []string
	for _, r := range b.records {
		got = append(got, fmt.Sprintf("%d:%s", r.Offset, r.Payload))
	}
	if fmt.Sprint(got) != `[10:{"a":1} 11:{"a":2} 13:{"a":3}]` || fmt.Sprint(dropped) != "[12]" {
		t.Errorf("records %v, dropped %v; want [10:{\"a\":1} 11:{\"a\":2} 13:{\"a\":3}] and [12]", got, dropped)
	}
}

// benchPayloads are n canonical ~100 B JSON records shaped like the random source's.
func benchPayloads(n int) [][]byte {
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"id":"6f1c0c4e-8f8e-4f43-9a53-%012d","title":"Hello","name":"World","text":"abcdefghijklmn"}`, i)
	}
	return payloads
}

// BenchmarkSinkBatch prepares 1,000 x 100 B JSON messages, and the same records as avro datums;
// allocs/msg is allocs/op / 1,000.
func BenchmarkSinkBatch(b *testing.B) {
	const n = 1000
	payloads := benchPayloads(n)
	oneAdd := oneAddFields(b)
	dec, err := codec.NewDecoder(postcard.SchemaJSON, nil)
	if err != nil {
		b.Fatal(err)
	}
	avroOpts := codec.Options{"avro_schema_json": benchRecordAvroSchema}
	avroDec, err := codec.NewDecoder(postcard.SchemaAvro, avroOpts)
	if err != nil {
		b.Fatal(err)
	}
	avroEnc, err := codec.NewEncoder(postcard.SchemaAvro, avroOpts)
	if err != nil {
		b.Fatal(err)
	}
	datums := make([][]byte, n)
	for i, p := range payloads {
		v, err := codec.ParseJSON(p)
		if err != nil {
			b.Fatal(err)
		}
		if datums[i], err = avroEnc.Encode(codec.JSONPayload(v)); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name        string
		avro        bool
		transforms  []transform.Transform
		passThrough bool // or, for avro, the direct JSON text
	}{
		{"pass-through", false, nil, true},
		{"decode-encode", false, nil, false},
		{"add_fields-text", false, oneAdd, true},
		{"add_fields-decoded", false, oneAdd, false},
		{"avro-direct", true, nil, true},
		{"avro-decode-encode", true, nil, false},
		{"avro-add_fields-text", true, oneAdd, true},
		{"avro-add_fields-decoded", true, oneAdd, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			d, msgs := dec, batchOf(false, payloads...)
			if c.avro {
				d, msgs = avroDec, batchOf(false, datums...)
			}
			batch := newSinkBatch(d, c.transforms, n)
			if !c.passThrough {
				batch.passThrough, batch.text, batch.textDecoder = false, nil, nil
			}
			fail := func(stage string, offset uint64, err error) { b.Fatalf("dropped %d at %s: %v", offset, stage, err) }
			var out []byte
			b.ReportAllocs()
			for b.Loop() {
				batch.prepare(msgs, fail)
				out = postcard.AppendRawMessages(out[:0], postcard.RawMessages{Schema: d.Schema(), Messages: batch.records})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}

// With one add_fields on a json stream, canonical payloads are edited as text: the record is the
// decoded path's bytes, and a batch allocates nothing per message once its buffers have grown.
func TestSinkBatchAddFieldsEditsTextWithoutAllocating(t *testing.T) {
	dec, err := codec.NewDecoder(postcard.SchemaJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	payloads := make([][]byte, 100)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"n":%d,"s":"x"}`, i)
	}
	msgs := batchOf(false, payloads...) // (unsorted headers cost postcard a sort per message)
	b := newSinkBatch(dec, oneAddFields(t), 100)
	fail := func(stage string, offset uint64, err error) { t.Fatalf("dropped %d at %s: %v", offset, stage, err) }
	b.prepare(msgs, fail)
	if got := string(b.records[7].Payload); got != `{"n":7,"s":"x","origin":"bench"}` {
		t.Fatalf("record 7 payload = %s", got)
	}
	if n := testing.AllocsPerRun(20, func() { b.prepare(msgs, fail) }); n > 2 {
		t.Errorf("a 100-message batch with add_fields allocates %.0f times, want at most 2", n)
	}
}

// Proto and avro streams write each payload straight to its JSON text, which add_fields then
// edits as text: no allocation per message, and the bytes Decode, the transform and encode would
// give. A datum whose text the avro decoder cannot prove (a repeated map key) takes the decoded
// path.
func TestSinkBatchWritesJSONTextDirectly(t *testing.T) {
	anyOf := func(i int) []byte {
		return codec.AppendProtoAny(nil, codec.ProtoStringValueURL, codec.AppendProtoWrapper(nil, fmt.Appendf(nil, `{"n":%d}`, i)))
	}
	avroOf := func(i int) []byte {
		return fuzzAvroDatum(t, fmt.Sprintf(`{"id":"m%d","n":%d,"m":{"k":"v"},"b":[1,2]}`, i, i))
	}
	repeatedKey := []byte{2, 'x', 0, 4, 2, 'k', 0, 2, 'k', 0, 0, 0, 0} // "m" holds "k" twice
	for _, c := range []struct {
		schema  postcard.Schema
		payload func(i int) []byte
		decoded []byte // a payload that takes the decoded path, as message 9
		want9   string // its record without transforms
	}{
		{postcard.SchemaProto, anyOf, nil, `{"type_url":"type.googleapis.com/google.protobuf.StringValue","value":"Cgd7Im4iOjl9"}`},
		{postcard.SchemaAvro, avroOf, repeatedKey, `{"id":"x","n":null,"m":{"k":""},"b":[],"d":""}`},
	} {
		dec, err := codec.NewDecoder(c.schema, schemaOptions(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		payloads := make([][]byte, 100)
		for i := range payloads {
			payloads[i] = c.payload(i)
		}
		if c.decoded != nil {
			payloads[9] = c.decoded
		}
		msgs := batchOf(false, payloads...)
		fail := func(stage string, offset uint64, err error) { t.Fatalf("dropped %d at %s: %v", offset, stage, err) }
		for _, transforms := range [][]transform.Transform{nil, oneAddFields(t)} {
			b := newSinkBatch(dec, transforms, 100)
			b.prepare(msgs, fail)
			slow := newSinkBatch(dec, transforms, 100)
			slow.textDecoder, slow.text = nil, nil
			slow.prepare(msgs, fail)
			for _, i := range []int{7, 9} {
				if got, want := string(b.records[i].Payload), string(slow.records[i].Payload); got != want || want == "" {
					t.Fatalf("%s, %d transforms: record %d payload = %s, want %s", c.schema, len(transforms), i, got, want)
				}
			}
			if got := string(b.records[9].Payload); len(transforms) == 0 && got != c.want9 {
				t.Fatalf("%s: record 9 = %s, want %s", c.schema, got, c.want9)
			}
			direct := batchOf(false, slices.Delete(slices.Clone(payloads), 9, 10)...) // the decoded path allocates
			if n := testing.AllocsPerRun(20, func() { b.prepare(direct, fail) }); n > 2 {
				t.Errorf("%s, %d transforms: a 99-message batch allocates %.0f times, want at most 2", c.schema, len(transforms), n)
			}
		}
	}
}
