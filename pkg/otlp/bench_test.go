package otlp_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
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
func BenchmarkExport(b *testing.B) {
	spans := batchOfSpans()
	records := batchOfRecords(b)
	httpURL := testkit.StartOTLPReceiver(b).URL
	grpcURL := testkit.StartOTLPGRPCReceiver(b).URL
	ctx := context.Background()
	spanExporters := []struct {
		name string
		make func() (sdktrace.SpanExporter, error)
	}{
		{"spans/http/official", func() (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(httpURL+"/v1/traces"))
		}},
		{"spans/http/ours", func() (sdktrace.SpanExporter, error) {
			return otlp.NewSpanExporter(otlp.Config{Transport: otlp.HTTP, URL: httpURL + "/v1/traces"})
		}},
		{"spans/grpc/official", func() (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(grpcURL))
		}},
		{"spans/grpc/ours", func() (sdktrace.SpanExporter, error) {
			return otlp.NewSpanExporter(otlp.Config{Transport: otlp.GRPC, URL: grpcURL})
		}},
	}
	for _, e := range spanExporters {
		b.Run(e.name, func(b *testing.B) {
			exp, err := e.make()
			if err != nil {
				b.Fatal(err)
			}
			defer exp.Shutdown(ctx)
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.ExportSpans(ctx, spans); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	logExporters := []struct {
		name string
		make func() (sdklog.Exporter, error)
	}{
		{"logs/http/official", func() (sdklog.Exporter, error) {
			return otlploghttp.New(ctx, otlploghttp.WithEndpointURL(httpURL+"/v1/logs"))
		}},
		{"logs/http/ours", func() (sdklog.Exporter, error) {
			return otlp.NewLogExporter(otlp.Config{Transport: otlp.HTTP, URL: httpURL + "/v1/logs"})
		}},
		{"logs/grpc/official", func() (sdklog.Exporter, error) { return otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(grpcURL)) }},
		{"logs/grpc/ours", func() (sdklog.Exporter, error) {
			return otlp.NewLogExporter(otlp.Config{Transport: otlp.GRPC, URL: grpcURL})
		}},
	}
	for _, e := range logExporters {
		b.Run(e.name, func(b *testing.B) {
			exp, err := e.make()
			if err != nil {
				b.Fatal(err)
			}
			defer exp.Shutdown(ctx)
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.Export(ctx, records); err != nil {
					b.Fatal(err)
				}
			}
		})
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
