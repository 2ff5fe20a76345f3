package codec_test

import (
	"errors"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Fuzz targets for the decoders of untrusted bytes added with the proto,
// flat_buffer and avro formats. Each must never panic (not even one its
// guard turns into an error: noPanic), and whatever decodes must survive a
// round trip through the matching encoder.

// noPanic fails the fuzz input when err is a panic the codec's guard caught.
func noPanic(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, panicerr.ErrPanic) {
		t.Fatalf("the decoder panicked: %v", err)
	}
}

// recursiveAvroSchema adds self-reference to orderSchema's coverage.
const recursiveAvroSchema = `{"type":"record","name":"Tree","fields":[
	{"name":"label","type":"string"},
	{"name":"kids","type":{"type":"array","items":"Tree"}},
	{"name":"next","type":["null","Tree"]},
	{"name":"meta","type":{"type":"map","values":["null","boolean","double","bytes"]}}]}`

func FuzzAvroDecode(f *testing.F) {
	order := mustAvro(f, orderSchema)
	tree := mustAvro(f, recursiveAvroSchema)
	for _, seed := range []struct {
		schema *codec.AvroSchema
		json   string
	}{
		{order, `{"id":1,"qty":2,"price":3.5,"ratio":0.25,"paid":true,"customer":"c","note":null,"status":"NEW",` +
			`"tags":["t"],"attrs":{"k":9},"blob":[1,2],"code":[3,4],"address":{"city":"x","zip":1},"channel":"web"}`},
		{tree, `{"label":"root","kids":[{"label":"a","kids":[],"next":null,"meta":{}}],"next":{"label":"n","kids":[],"next":null,"meta":{"b":true,"d":1.5,"x":[0]}},"meta":{}}`},
	} {
		b, err := seed.schema.EncodeJSON(mustParse(f, seed.json))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed.schema == tree, b)
	}
	f.Add(false, []byte{0x02, 0x00, 0x00})
	f.Add(true, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, useTree bool, b []byte) {
		s := order
		if useTree {
			s = tree
		}
		v, err := s.DecodeJSON(b)
		noPanic(t, err)
		if err != nil {
			return
		}
		again, err := s.EncodeJSON(v)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		w, err := s.DecodeJSON(again)
		if err != nil || !sameValue(v, w) {
			t.Fatalf("round trip changed the value: %v (%v) vs %v", v, err, w)
		}
	})
}

func FuzzProtoStreamDecoder(f *testing.F) {
	enc, _ := codec.NewEncoder(postcard.SchemaProto, nil)
	dec, _ := codec.NewDecoder(postcard.SchemaProto, nil)
	for _, p := range []codec.Payload{codec.JSONPayload(obj("a", uint64(1))), codec.RawPayload([]byte{0, 1}), codec.TextPayload("t")} {
		b, err := enc.Encode(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x05, 'a'})
	f.Add([]byte{0x1b, 0x0c, 0x1c})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := dec.Decode(b)
		noPanic(t, err)
		if err != nil {
			return
		}
		if _, err := codec.MarshalJSON(p.JSON); err != nil {
			t.Fatalf("decoded JSON does not marshal: %v", err)
		}
		typeURL, value, ok := codec.DecodeProtoAny(b)
		if !ok {
			t.Fatal("the decoder accepted what DecodeProtoAny rejects")
		}
		if inner, ok := codec.DecodeProtoWrapper(value); ok {
			// A wrapper re-encodes to a wrapper with the same value.
			back, ok := codec.DecodeProtoWrapper(codec.AppendProtoWrapper(nil, inner))
			if !ok || string(back) != string(inner) {
				t.Fatalf("wrapper round trip: %q vs %q", back, inner)
			}
		}
		again, _, ok := codec.DecodeProtoAny(codec.AppendProtoAny(nil, typeURL, value))
		if !ok || again != typeURL {
			t.Fatalf("Any round trip lost the type URL %q", typeURL)
		}
	})
}

func FuzzProtoSchemaDecode(f *testing.F) {
	s, err := codec.LoadProtoSchema("testdata/proto/fuzz.proto", nil, "fuzz.Node")
	if err != nil {
		f.Fatal(err)
	}
	seed, err := s.EncodeJSON(mustParse(f, `{"id":1,"delta":-2,"small":-3,"stamp":4,"score":0.5,"ratio":1.5,"ok":true,
		"name":"n","blob":"AAE=","kind":"BRANCH","children":[{"id":2,"text":"x"}],"counters":{"a":-1},"note":"o",
		"created":"2026-01-01T00:00:00Z","number":7}`), true)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x5a, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := s.DecodeJSON(b, false)
		noPanic(t, err)
		if err != nil {
			return
		}
		again, err := s.EncodeJSON(v, true)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		w, err := s.DecodeJSON(again, true)
		// A float field holding -0 reads as "-0", which the value model keeps as int64 0; it goes
		// back as +0 (as FuzzParseJSON allows), which proto3 leaves out and reads back as uint64 0.
		if err != nil || !sameValue(normalizeZero(v), normalizeZero(w)) {
			t.Fatalf("round trip changed the value: %v (%v) vs %v", v, err, w)
		}
	})
}

func FuzzFlatBufferDecoder(f *testing.F) {
	enc := codec.FlatBufferEncoder{}
	for _, p := range []codec.Payload{codec.JSONPayload(obj("k", "v", "n", uint64(1))), codec.TextPayload("t"), codec.RawPayload([]byte{1, 2, 3})} {
		b, err := enc.Encode(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	dec, _ := codec.NewDecoder(postcard.SchemaFlatBuffer, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := dec.Decode(b)
		noPanic(t, err)
		if (err == nil) != (len(b) > 0 && codec.VerifyFlatBuffer(b) == nil) {
			t.Fatalf("Decode error %v disagrees with VerifyFlatBuffer", err)
		}
		if err != nil {
			return
		}
		size, _ := p.JSON.(*codec.OrderedMap).Get("buffer_size")
		if size != uint64(len(b)) {
			t.Fatalf("buffer_size %v, want %d", size, len(b))
		}
	})
}
