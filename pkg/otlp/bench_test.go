package otlp_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
)

// batchOfSpans is one full export batch (512) of spans shaped like ours: a
// sink batch span with its attributes, three stage spans under it.
func batchOfSpans() []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", "iggy-connectors"), attribute.Int("process.pid", 1234),
		attribute.String("iggy.connector.key", "bench"), attribute.String("iggy.connector.type", "sink"))
	start := time.Now()
	var stubs tracetest.SpanStubs
	for i := range 128 {
		tid := trace.TraceID{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
		parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{byte(i), 1}, TraceFlags: trace.FlagsSampled})
		stubs = append(stubs, tracetest.SpanStub{Name: "sink batch", SpanContext: parent, SpanKind: trace.SpanKindConsumer, StartTime: start, EndTime: start.Add(time.Millisecond),
			Attributes: []attribute.KeyValue{attribute.String("stream", "s"), attribute.String("topic", "t"), attribute.Int64("partition_id", 1),
				attribute.Int64("current_offset", int64(i)), attribute.Int("batch_size", 100), attribute.Int("processed_count", 100)},
			Status: sdktrace.Status{Code: codes.Unset}, Resource: res})
		for j, stage := range []string{"decode", "prepare", "ffi"} {
			stubs = append(stubs, tracetest.SpanStub{Name: stage, SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{byte(i), 2, byte(j)}, TraceFlags: trace.FlagsSampled}),
				Parent: parent, StartTime: start, EndTime: start.Add(time.Microsecond), Resource: res})
		}
	}
	return stubs.Snapshots()
}

func batchOfRecords(b *testing.B) []sdklog.Record {
	rec := &recorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "iggy-connectors"))), sdklog.WithProcessor(rec))
	b.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	l := lp.Logger("github.com/iggy-connectors-go/runtime")
	for range 512 {
		var r otellog.Record
		r.SetTimestamp(time.Now())
		r.SetSeverity(otellog.SeverityInfo)
		r.SetSeverityText("INFO")
		r.SetBody(attribute.StringValue("sink batch processed"))
		r.AddAttributes(attribute.String("target", "iggy_connectors::runner"), attribute.String("connector_key", "bench"),
			attribute.String("stream", "s"), attribute.String("topic", "t"), attribute.Int("batch_size", 100))
		l.Emit(context.Background(), r)
	}
	return rec.records
}

// BenchmarkExport is one export of a full batch (512 spans or log records)
// to a live receiver, ours against the OpenTelemetry exporter, side by side.
// The receiver decodes in the same process, so its cost is in both figures.
func BenchmarkExport(b *testing.B) {
	spans := batchOfSpans()
	records := batchOfRecords(b)
	benchExporters(b, "spans", spanExporterPairs(), func(ctx context.Context, e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, spans) },
		func(ctx context.Context, e sdktrace.SpanExporter) error { return e.Shutdown(ctx) })
	benchExporters(b, "logs", logExporterPairs(), func(ctx context.Context, e sdklog.Exporter) error { return e.Export(ctx, records) },
		func(ctx context.Context, e sdklog.Exporter) error { return e.Shutdown(ctx) })
}

func benchExporters[E any](b *testing.B, signal string, pairs []exporterPair[E], export, shutdown func(context.Context, E) error) {
	ctx := context.Background()
	for _, p := range pairs {
		url := startReceiver(b, p.transport).URL
		for _, side := range []struct {
			name string
			make func() (E, error)
		}{
			{"official", func() (E, error) { return p.official(ctx, url) }},
			{"ours", func() (E, error) { return p.ours(url) }},
		} {
			b.Run(signal+"/"+p.transport+"/"+side.name, func(b *testing.B) {
				exp, err := side.make()
				if err != nil {
					b.Fatal(err)
				}
				defer shutdown(ctx, exp)
				b.ReportAllocs()
				for b.Loop() {
					if err := export(ctx, exp); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkEncode is our encoding alone of a full batch.
func BenchmarkEncode(b *testing.B) {
	spans := batchOfSpans()
	records := batchOfRecords(b)
	for _, c := range []struct {
		name   string
		encode func([]byte) []byte
	}{
		{"spans", func(buf []byte) []byte { return otlp.AppendTraceRequest(buf, spans) }},
		{"logs", func(buf []byte) []byte { return otlp.AppendLogsRequest(buf, records) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				buf = c.encode(buf[:0])
			}
			b.ReportMetric(float64(len(buf)), "bytes/request")
		})
	}
}
