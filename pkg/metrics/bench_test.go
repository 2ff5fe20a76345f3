package metrics_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

func busyConnector(reg prometheus.Registerer, key, kind string) *metrics.Connector {
	c := metrics.NewConnector(reg, key, kind)
	sink, source := c, c
	if kind == metrics.KindSink {
		source = metrics.NewConnector(nil, key, metrics.KindSource)
	} else {
		sink = metrics.NewConnector(nil, key, metrics.KindSink)
	}
	exercise(sink, source)
	c.Snapshot()
	return c
}

// BenchmarkSnapshot is one runner's /stats object, process figures included.
func BenchmarkSnapshot(b *testing.B) {
	c := busyConnector(prometheus.NewRegistry(), "pg_main", metrics.KindSink)
	for b.Loop() {
		_ = c.Snapshot()
	}
}

// BenchmarkGatherConnector is one runner's /metrics body: gather its
// families and encode them as OpenMetrics text.
func BenchmarkGatherConnector(b *testing.B) {
	reg := prometheus.NewRegistry()
	busyConnector(reg, "pg_main", metrics.KindSink)
	for b.Loop() {
		families, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		if err := metrics.WriteOpenMetrics(io.Discard, families); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountBatch is the per-batch hot path of a sink pump.
func BenchmarkCountBatch(b *testing.B) {
	c := metrics.NewConnector(prometheus.NewRegistry(), "pg_main", metrics.KindSink)
	for b.Loop() {
		c.AddConsumed(1000)
		c.AddProcessed(1000)
		c.AddFiltered(0)
		c.ObserveStage(metrics.StageDecode, 100*time.Microsecond)
		c.ObserveStage(metrics.StageFFI, 300*time.Microsecond)
		c.ObserveStage(metrics.StageTotal, 500*time.Microsecond)
	}
}

// runnerBodies encodes the families of n runners (alternating sinks and
// sources) in format, as each would answer a scrape.
func runnerBodies(b *testing.B, n int, format expfmt.Format) [][]byte {
	bodies := make([][]byte, n)
	for i := range n {
		reg := prometheus.NewRegistry()
		kind := metrics.KindSink
		if i%2 == 1 {
			kind = metrics.KindSource
		}
		busyConnector(reg, fmt.Sprintf("connector_%02d", i), kind)
		families, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if format.FormatType() == expfmt.TypeOpenMetrics {
			err = metrics.WriteOpenMetrics(&buf, families)
		} else {
			enc := expfmt.NewEncoder(&buf, format)
			for _, f := range families {
				if err = enc.Encode(f); err != nil {
					break
				}
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = buf.Bytes()
	}
	return bodies
}

// BenchmarkMerge50Runners is the supervisor's /metrics with 50 runners:
// merge their (already parsed) families with the local runtime set and
// encode the result.
func BenchmarkMerge50Runners(b *testing.B) {
	local := prometheus.NewRegistry()
	metrics.NewRuntime(local).SetTotals(25, 25)
	merged := metrics.NewMerged(local)
	for i, body := range runnerBodies(b, 50, expfmt.NewFormat(expfmt.TypeProtoDelim)) {
		families, err := testkit.ParseMetrics(bytes.NewReader(body), string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
		if err != nil {
			b.Fatal(err)
		}
		merged.Set(fmt.Sprint(i), families)
	}
	for b.Loop() {
		families, err := merged.Gather()
		if err != nil {
			b.Fatal(err)
		}
		if err := metrics.WriteOpenMetrics(io.Discard, families); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse50Runners parses 50 runners' bodies per iteration, in the
// format Scrape negotiates (protobuf) and in upstream's OpenMetrics text.
func BenchmarkParse50Runners(b *testing.B) {
	for _, tc := range []struct {
		name   string
		format expfmt.Format
		ct     string
	}{
		{"protobuf", expfmt.NewFormat(expfmt.TypeProtoDelim), string(expfmt.NewFormat(expfmt.TypeProtoDelim))},
		{"openmetrics-text", expfmt.NewFormat(expfmt.TypeOpenMetrics), metrics.TextContentType},
	} {
		b.Run(tc.name, func(b *testing.B) {
			bodies := runnerBodies(b, 50, tc.format)
			var families []*dto.MetricFamily
			for b.Loop() {
				for _, body := range bodies {
					var err error
					if families, err = testkit.ParseMetrics(bytes.NewReader(body), tc.ct); err != nil {
						b.Fatal(err)
					}
				}
			}
			_ = families
		})
	}
}
