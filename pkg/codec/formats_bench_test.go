package codec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Encode plus decode of one 1,000-message batch of benchPayload-like events
// per format, the way the pipeline uses each codec: the stream encoder on the
// source side and the stream decoder on the sink side, plus the schema-driven
// conversions the *_convert transforms run. Reported as messages per second.

const benchBatch = 1000

const benchAvroSchema = `{"type":"record","name":"Event","fields":[
	{"name":"id","type":"long"},{"name":"user","type":"string"},{"name":"event","type":"string"},
	{"name":"amount","type":"double"},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"ok","type":"boolean"}]}`

const benchProto = `syntax = "proto3";
package bench;
message Event { int64 id = 1; string user = 2; string event = 3; double amount = 4; repeated string tags = 5; bool ok = 6; }
`

// roundTripBatch runs encode then decode over the batch b.N times.
func roundTripBatch(b *testing.B, encode func(codec.Payload) ([]byte, error), decode func([]byte) error) {
	in, err := codec.ParseJSON(benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	p := codec.JSONPayload(in)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for range benchBatch {
			wire, err := encode(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := decode(wire); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
}

func streamPair(b *testing.B, s postcard.Schema, opts codec.Options) (func(codec.Payload) ([]byte, error), func([]byte) error) {
	enc, err := codec.NewEncoder(s, opts)
	if err != nil {
		b.Fatal(err)
	}
	dec, err := codec.NewDecoder(s, opts)
	if err != nil {
		b.Fatal(err)
	}
	return enc.Encode, func(w []byte) error { _, err := dec.Decode(w); return err }
}

func BenchmarkFormatBatch(b *testing.B) {
	b.Run("json", func(b *testing.B) {
		enc, dec := streamPair(b, postcard.SchemaJSON, nil)
		roundTripBatch(b, enc, dec)
	})
	b.Run("avro", func(b *testing.B) {
		enc, dec := streamPair(b, postcard.SchemaAvro, codec.Options{"avro_schema_json": benchAvroSchema})
		roundTripBatch(b, enc, dec)
	})
	b.Run("proto_any", func(b *testing.B) {
		enc, dec := streamPair(b, postcard.SchemaProto, nil)
		roundTripBatch(b, enc, dec)
	})
	b.Run("proto_schema", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "bench.proto")
		if err := os.WriteFile(path, []byte(benchProto), 0o600); err != nil {
			b.Fatal(err)
		}
		s, err := codec.LoadProtoSchema(path, nil, "bench.Event")
		if err != nil {
			b.Fatal(err)
		}
		roundTripBatch(b,
			func(p codec.Payload) ([]byte, error) { return s.EncodeJSON(p.JSON, true) },
			func(w []byte) error { _, err := s.DecodeJSON(w, true); return err })
	})
	b.Run("flat_buffer", func(b *testing.B) {
		enc, dec := streamPair(b, postcard.SchemaFlatBuffer, nil)
		roundTripBatch(b, enc, dec)
	})
}

// BenchmarkProtoEncodeJSONText wraps one canonical 100 B JSON record in the Any a proto stream
// sends, as a source with a json plugin and a proto stream does per message.
func BenchmarkProtoEncodeJSONText(b *testing.B) {
	enc, err := codec.NewEncoder(postcard.SchemaProto, nil)
	if err != nil {
		b.Fatal(err)
	}
	text := []byte(`{"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","title":"Hello","name":"World","text":"abcdefghijklmn"}`)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out, _ = enc.(codec.JSONTextEncoder).AppendEncodedJSONText(out[:0], text)
	}
}
