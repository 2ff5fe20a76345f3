package otlp_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// everyValue is an attribute of each value type the SDK has.
func everyValue() []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("string", "s"),
		attribute.String("empty string", ""),
		attribute.Bool("true", true),
		attribute.Bool("false", false),
		attribute.Int64("int", -42),
		attribute.Int64("zero", 0),
		attribute.Float64("float", 3.25),
		attribute.Float64("float zero", 0),
		attribute.ByteSlice("bytes", []byte{0, 1, 2}),
		attribute.ByteSlice("no bytes", []byte{}),
		attribute.BoolSlice("bools", []bool{true, false}),
		attribute.Int64Slice("ints", []int64{1, -2, 1 << 40}),
		attribute.Float64Slice("floats", []float64{1.5, -0.5}),
		attribute.StringSlice("strings", []string{"a", "", "c"}),
		attribute.StringSlice("no strings", nil),
		attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("x"), attribute.Value{}, attribute.SliceValue(attribute.BoolValue(true))),
		attribute.Map("map", attribute.String("k", "v"), attribute.Int("n", 2), attribute.Map("nested", attribute.Bool("ok", true))),
		{Key: "empty value"},
		attribute.String("long", string(make([]byte, 300))), // a length past one varint byte
	}
}

func testSpans() []sdktrace.ReadOnlySpan {
	res := resource.NewWithAttributes("https://example.com/schema", attribute.String("service.name", "svc"), attribute.Int("process.pid", 7), attribute.String("a", "b"))
	otherRes := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "scope", Version: "v1", SchemaURL: "https://example.com/scope", Attributes: attribute.NewSet(attribute.String("sa", "sv"))}
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("k1=v1,k2=v2")
	start := time.Unix(1700000000, 123456789)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}, TraceFlags: trace.FlagsSampled})
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{8, 8, 8, 8, 8, 8, 8, 8}, TraceFlags: trace.FlagsSampled, Remote: true})
	stubs := tracetest.SpanStubs{
		{
			Name:        "sink batch",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, TraceFlags: trace.FlagsSampled, TraceState: ts}),
			SpanKind:    trace.SpanKindConsumer,
			StartTime:   start,
			EndTime:     start.Add(70 * time.Millisecond),
			Attributes:  everyValue(),
			Status:      sdktrace.Status{Code: codes.Error, Description: "consume failed"},
			Events: []sdktrace.Event{
				{Name: "ev", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("i", 1)}, DroppedAttributeCount: 2},
				{Name: "", Time: time.Unix(-5, 0)},
			},
			Links: []sdktrace.Link{
				{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("l", "x")}, DroppedAttributeCount: 1},
				{SpanContext: parent},
			},
			DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5,
			Resource:             res,
			InstrumentationScope: scope,
		},
		{Name: "decode", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}}), Parent: parent, StartTime: start, EndTime: start.Add(time.Millisecond),
			Status: sdktrace.Status{Code: codes.Ok}, Resource: res, InstrumentationScope: scope},
		{Name: "remote child", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{3}}), Parent: remote, SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "second scope"}},
		{Name: "no scope", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{4}}), SpanKind: trace.SpanKindClient, Resource: otherRes},
		{Name: "internal", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{5}}), SpanKind: trace.SpanKindInternal, Resource: res, InstrumentationScope: scope},
		{Name: "producer", SpanKind: trace.SpanKindProducer, Resource: otherRes},
	}
	return stubs.Snapshots()
}

// recorder is a log processor keeping what it is given, as the batch
// processor hands records to its exporter.
type recorder struct{ records []sdklog.Record }

func (r *recorder) OnEmit(_ context.Context, rec *sdklog.Record) error {
	r.records = append(r.records, rec.Clone())
	return nil
}
func (*recorder) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (*recorder) Shutdown(context.Context) error                         { return nil }
func (*recorder) ForceFlush(context.Context) error                       { return nil }

func testRecords(t *testing.T) []sdklog.Record {
	rec := &recorder{}
	res := resource.NewWithAttributes("https://example.com/schema", attribute.String("service.name", "svc"), attribute.String("iggy.connector.key", "k"))
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(rec))
	emptyLP := sdklog.NewLoggerProvider(sdklog.WithResource(resource.Empty()), sdklog.WithProcessor(rec))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()); _ = emptyLP.Shutdown(context.Background()) })

	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled}))
	at := time.Unix(1700000000, 42)
	emit := func(l otellog.Logger, ctx context.Context, sev otellog.Severity, body attribute.Value, event string, attrs ...attribute.KeyValue) {
		var r otellog.Record
		r.SetTimestamp(at)
		r.SetObservedTimestamp(at.Add(time.Microsecond))
		r.SetSeverity(sev)
		r.SetSeverityText(sev.String())
		r.SetBody(body)
		r.SetEventName(event)
		r.AddAttributes(attrs...)
		l.Emit(ctx, r)
	}
	scoped := lp.Logger("github.com/iggy-connectors-go/runtime", otellog.WithInstrumentationVersion("1.0"), otellog.WithSchemaURL("https://example.com/scope"),
		otellog.WithInstrumentationAttributeSet(attribute.NewSet(attribute.String("sa", "sv"))))
	emit(scoped, context.Background(), otellog.SeverityInfo, attribute.StringValue("sink running"), "", attribute.Int("topics", 2), attribute.String("target", "iggy_connectors::runner"))
	emit(scoped, ctx, otellog.SeverityError4, attribute.StringValue("in a span"), "ev.name", everyValue()...)
	emit(scoped, context.Background(), otellog.SeverityUndefined, attribute.Value{}, "")
	emit(scoped, context.Background(), otellog.Severity(99), attribute.MapValue(attribute.String("k", "v")), "")
	emit(lp.Logger(""), context.Background(), otellog.SeverityDebug, attribute.Int64Value(5), "")
	emit(emptyLP.Logger("x"), context.Background(), otellog.SeverityWarn, attribute.StringValue("no resource"), "")
	if len(rec.records) != 6 {
		t.Fatalf("recorded %d log records, want 6", len(rec.records))
	}
	return rec.records
}

// exporterPair is the official exporter and ours for one signal over one
// transport ("http" or "grpc"), each pointed at a receiver's URL.
type exporterPair[E any] struct {
	transport string
	official  func(ctx context.Context, url string) (E, error)
	ours      func(url string) (E, error)
}

func spanExporterPairs() []exporterPair[sdktrace.SpanExporter] {
	return []exporterPair[sdktrace.SpanExporter]{
		{"http", func(ctx context.Context, url string) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+"/v1/traces"))
		}, func(url string) (sdktrace.SpanExporter, error) {
			return otlp.NewSpanExporter(otlp.Config{Transport: otlp.HTTP, URL: url + "/v1/traces", Timeout: 5 * time.Second})
		}},
		{"grpc", func(ctx context.Context, url string) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(url))
		}, func(url string) (sdktrace.SpanExporter, error) {
			return otlp.NewSpanExporter(otlp.Config{Transport: otlp.GRPC, URL: url, Timeout: 5 * time.Second})
		}},
	}
}

func logExporterPairs() []exporterPair[sdklog.Exporter] {
	return []exporterPair[sdklog.Exporter]{
		{"http", func(ctx context.Context, url string) (sdklog.Exporter, error) {
			return otlploghttp.New(ctx, otlploghttp.WithEndpointURL(url+"/v1/logs"))
		}, func(url string) (sdklog.Exporter, error) {
			return otlp.NewLogExporter(otlp.Config{Transport: otlp.HTTP, URL: url + "/v1/logs", Timeout: 5 * time.Second})
		}},
		{"grpc", func(ctx context.Context, url string) (sdklog.Exporter, error) {
			return otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(url))
		}, func(url string) (sdklog.Exporter, error) {
			return otlp.NewLogExporter(otlp.Config{Transport: otlp.GRPC, URL: url, Timeout: 5 * time.Second})
		}},
	}
}

// startReceiver starts the test collector of a transport.
func startReceiver(tb testing.TB, transport string, opts ...testkit.OTLPReceiverOption) *testkit.OTLPReceiver {
	if transport == "grpc" {
		return testkit.StartOTLPGRPCReceiver(tb, opts...)
	}
	return testkit.StartOTLPReceiver(tb, opts...)
}

// exporterOps is how a test drives one kind of exporter and reads what its
// receiver got.
type exporterOps[E any, R proto.Message] struct {
	export    func(ctx context.Context, e E) error
	shutdown  func(ctx context.Context, e E) error
	requests  func(*testkit.OTLPReceiver) []R
	normalise func(R)
	resources func(R) int
}

// compareWithOfficial exports the same data through the official exporter
// and ours into two receivers and wants equal requests.
func compareWithOfficial[E any, R proto.Message](t *testing.T, pairs []exporterPair[E], ops exporterOps[E, R], wantResources int) {
	for _, p := range pairs {
		t.Run(p.transport, func(t *testing.T) {
			theirsAt, oursAt := startReceiver(t, p.transport), startReceiver(t, p.transport)
			for _, side := range []struct {
				name string
				make func() (E, error)
			}{
				{"official", func() (E, error) { return p.official(t.Context(), theirsAt.URL) }},
				{"our", func() (E, error) { return p.ours(oursAt.URL) }},
			} {
				exp, err := side.make()
				if err != nil {
					t.Fatal(err)
				}
				if err := ops.export(t.Context(), exp); err != nil {
					t.Fatalf("%s exporter: %v", side.name, err)
				}
				_ = ops.shutdown(context.Background(), exp)
			}
			theirs, got := ops.requests(theirsAt), ops.requests(oursAt)
			if len(theirs) != 1 || len(got) != 1 {
				t.Fatalf("requests received: official %d, ours %d; want 1 each", len(theirs), len(got))
			}
			if n := ops.resources(got[0]); n != wantResources {
				t.Fatalf("our request has %d resources, want %d", n, wantResources)
			}
			ops.normalise(theirs[0])
			ops.normalise(got[0])
			wantEqual(t, theirs[0], got[0])
		})
	}
}

// The official exporters group by resource and scope through Go maps, so
// the order of ResourceSpans and ScopeSpans differs from run to run; ours
// keeps first-seen order. Only that order is normalised before comparing.
func sortTraceRequest(r *coltracepb.ExportTraceServiceRequest) {
	for _, rs := range r.ResourceSpans {
		sort.SliceStable(rs.ScopeSpans, func(i, j int) bool {
			return rs.ScopeSpans[i].GetScope().GetName() < rs.ScopeSpans[j].GetScope().GetName()
		})
	}
	sort.SliceStable(r.ResourceSpans, func(i, j int) bool {
		return prototext.Format(r.ResourceSpans[i].GetResource()) < prototext.Format(r.ResourceSpans[j].GetResource())
	})
}

func sortLogsRequest(r *collogspb.ExportLogsServiceRequest) {
	for _, rl := range r.ResourceLogs {
		sort.SliceStable(rl.ScopeLogs, func(i, j int) bool {
			return rl.ScopeLogs[i].GetScope().GetName() < rl.ScopeLogs[j].GetScope().GetName()
		})
	}
	sort.SliceStable(r.ResourceLogs, func(i, j int) bool {
		return prototext.Format(r.ResourceLogs[i].GetResource()) < prototext.Format(r.ResourceLogs[j].GetResource())
	})
}

func TestTraceRequestsEqualTheOfficialExporters(t *testing.T) {
	spans := testSpans()
	compareWithOfficial(t, spanExporterPairs(), exporterOps[sdktrace.SpanExporter, *coltracepb.ExportTraceServiceRequest]{
		export:    func(ctx context.Context, e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, spans) },
		shutdown:  func(ctx context.Context, e sdktrace.SpanExporter) error { return e.Shutdown(ctx) },
		requests:  (*testkit.OTLPReceiver).TraceRequests,
		normalise: sortTraceRequest,
		resources: func(r *coltracepb.ExportTraceServiceRequest) int { return len(r.ResourceSpans) },
	}, 2)
}

func TestLogRequestsEqualTheOfficialExporters(t *testing.T) {
	records := testRecords(t)
	compareWithOfficial(t, logExporterPairs(), exporterOps[sdklog.Exporter, *collogspb.ExportLogsServiceRequest]{
		export:    func(ctx context.Context, e sdklog.Exporter) error { return e.Export(ctx, records) },
		shutdown:  func(ctx context.Context, e sdklog.Exporter) error { return e.Shutdown(ctx) },
		requests:  (*testkit.OTLPReceiver).LogRequests,
		normalise: sortLogsRequest,
		resources: func(r *collogspb.ExportLogsServiceRequest) int { return len(r.ResourceLogs) },
	}, 2)
}

// wantEqual fails unless our decoded request equals the official one.
func wantEqual(t *testing.T, official, ours proto.Message) {
	t.Helper()
	if !proto.Equal(official, ours) {
		t.Errorf("our request differs from the official exporter's\nofficial:\n%s\nours:\n%s",
			prototext.Format(official), prototext.Format(ours))
	}
}

// errorsAsPartial is errors.As for *otlp.PartialSuccessError.
func errorsAsPartial(err error) (*otlp.PartialSuccessError, bool) {
	var ps *otlp.PartialSuccessError
	ok := errors.As(err, &ps)
	return ps, ok
}
