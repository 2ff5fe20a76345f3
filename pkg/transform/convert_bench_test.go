package transform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// BenchmarkConvertBatch measures a source-side conversion to the format
// followed by the sink-side conversion back, over 1,000-message batches of
// a ~100-byte event. Reported as messages per second.
func BenchmarkConvertBatch(b *testing.B) {
	dir := b.TempDir()
	protoFile := filepath.Join(dir, "event.proto")
	if err := os.WriteFile(protoFile, []byte(`syntax = "proto3";
package bench;
message Event { int64 id = 1; string user = 2; string event = 3; double amount = 4; repeated string tags = 5; bool ok = 6; }
`), 0o600); err != nil {
		b.Fatal(err)
	}
	avroSchema := `schema_json = '{"type":"record","name":"Event","fields":[{"name":"id","type":"long"},{"name":"user","type":"string"},` +
		`{"name":"event","type":"string"},{"name":"amount","type":"double"},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"ok","type":"boolean"}]}'`
	protoSchema := `schema_path = "` + protoFile + `"` + "\nmessage_type = \"bench.Event\"\n"
	cases := []struct{ name, there, back string }{
		{"proto_convert", testkit.ProtoConvertTOML("json", "proto", protoSchema), testkit.ProtoConvertTOML("proto", "json", protoSchema)},
		{"avro_convert", testkit.AvroConvertTOML("json", "avro", avroSchema), testkit.AvroConvertTOML("avro", "json", avroSchema)},
		{"flat_buffer_convert", flatBufferConvertTOML("json", "flat_buffer", ""), flatBufferConvertTOML("flat_buffer", "json", "")},
	}
	event := `{"id":100042,"user":"user-0042","event":"click","amount":42.25,"tags":["web","eu"],"ok":true}`
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			there, back := buildTOML(b, c.there), buildTOML(b, c.back)
			in := jsonMessage(b, event).Payload
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for range 1000 {
					m := codec.Message{Payload: codec.JSONPayload(codec.Clone(in.JSON))}
					if _, err := transform.Run(there, &m); err != nil {
						b.Fatal(err)
					}
					if _, err := transform.Run(back, &m); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
