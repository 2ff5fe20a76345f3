package transform_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

const batchSize = 1000

// batchPayloads returns a batch of ~100-byte JSON payloads.
func batchPayloads() [][]byte {
	out := make([][]byte, batchSize)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"id":%d,"user":"user-%04d","event":"click","amount":%d.25,"tags":["web","eu"],"ok":true}`,
			100000+i, i, i%500)
	}
	return out
}

const benchTransforms = `
[transforms.add_fields]
enabled = true
fields = [{ key = "source", value = { static = "bench" } }, { key = "ingested_at", value = { computed = "timestamp_millis" } }]
[transforms.delete_fields]
enabled = true
fields = ["tags"]
[transforms.update_fields]
enabled = true
fields = [{ key = "ok", value = { static = false }, condition = "key_exists" }]
`

// benchClock measures both wall time and the process's CPU time (user +
// system, GC included): on a shared, loaded machine the CPU figure is the
// stable one.
type benchClock struct {
	wall time.Time
	cpu  time.Duration
}

func startClock() benchClock { return benchClock{wall: time.Now(), cpu: processCPU()} }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportPerMessage(b *testing.B, c benchClock) {
	msgs := float64(b.N * batchSize)
	b.ReportMetric(float64(time.Since(c.wall).Nanoseconds())/msgs, "ns/msg")
	b.ReportMetric(float64((processCPU()-c.cpu).Nanoseconds())/msgs, "cpu-ns/msg")
}

// BenchmarkSinkBatch: the sink data path per message of a 1,000-message
// batch: json decode, three transforms, payload bytes for the plugin (into a
// reused buffer, as the runner builds the postcard batch).
func BenchmarkSinkBatch(b *testing.B) {
	for _, withTransforms := range []bool{false, true} {
		b.Run(fmt.Sprintf("transforms=%v", withTransforms), func(b *testing.B) {
			payloads := batchPayloads()
			var ts []transform.Transform
			if withTransforms {
				ts = buildTOML(b, benchTransforms)
			}
			dec, err := codec.NewDecoder(postcard.SchemaJSON, nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 256*batchSize)
			b.ReportAllocs()
			b.ResetTimer()
			start := startClock()
			for range b.N {
				buf = buf[:0]
				for _, p := range payloads {
					pl, err := dec.Decode(p)
					if err != nil {
						b.Fatal(err)
					}
					m := codec.Message{Payload: pl}
					if keep, err := transform.Run(ts, &m); !keep || err != nil {
						b.Fatal(keep, err)
					}
					if buf, err = codec.AppendPayloadToFFI(buf, m.Payload); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPerMessage(b, start)
		})
	}
}

// BenchmarkSourceBatch: the source data path per message: plugin bytes to
// payload (json), three transforms, json encoding for Iggy.
func BenchmarkSourceBatch(b *testing.B) {
	payloads := batchPayloads()
	ts := buildTOML(b, benchTransforms)
	enc, err := codec.NewEncoder(postcard.SchemaJSON, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := startClock()
	for range b.N {
		for _, p := range payloads {
			pl, err := codec.PayloadFromFFI(postcard.SchemaJSON, p)
			if err != nil {
				b.Fatal(err)
			}
			m := codec.Message{Payload: pl}
			if keep, err := transform.Run(ts, &m); !keep || err != nil {
				b.Fatal(keep, err)
			}
			if _, err := enc.Encode(m.Payload); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportPerMessage(b, start)
}
