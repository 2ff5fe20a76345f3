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
	var out []sdklog.Record
	for _, r := range rec.records {
		out = append(out, r)
	}
	if len(out) != 6 {
		t.Fatalf("recorded %d log records, want 6", len(out))
	}
	return out
}

type traceExporterCase struct {
	name     string
	official func(t *testing.T, url string) sdktrace.SpanExporter
	recv     func(tb testing.TB, opts ...testkit.OTLPReceiverOption) *testkit.OTLPReceiver
	ours     func(url string) otlp.Config
}

func traceCases() []traceExporterCase {
	return []traceExporterCase{
		{
			name: "http",
			official: func(t *testing.T, url string) sdktrace.SpanExporter {
				e, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(url+"/v1/traces"))
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
			recv: testkit.StartOTLPReceiver,
			ours: func(url string) otlp.Config {
				return otlp.Config{Transport: otlp.HTTP, URL: url + "/v1/traces", Timeout: 5 * time.Second}
			},
		},
		{
			name: "grpc",
			official: func(t *testing.T, url string) sdktrace.SpanExporter {
				e, err := otlptracegrpc.New(t.Context(), otlptracegrpc.WithEndpointURL(url))
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
			recv: testkit.StartOTLPGRPCReceiver,
			ours: func(url string) otlp.Config {
				return otlp.Config{Transport: otlp.GRPC, URL: url, Timeout: 5 * time.Second}
			},
		},
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
	for _, tc := range traceCases() {
		t.Run(tc.name, func(t *testing.T) {
			theirsAt, oursAt := tc.recv(t), tc.recv(t)
			official := tc.official(t, theirsAt.URL)
			defer official.Shutdown(context.Background())
			if err := official.ExportSpans(t.Context(), spans); err != nil {
				t.Fatalf("official exporter: %v", err)
			}
			ours, err := otlp.NewSpanExporter(tc.ours(oursAt.URL))
			if err != nil {
				t.Fatal(err)
			}
			defer ours.Shutdown(context.Background())
			if err := ours.ExportSpans(t.Context(), spans); err != nil {
				t.Fatalf("our exporter: %v", err)
			}
			theirs, got := theirsAt.TraceRequests(), oursAt.TraceRequests()
			if len(theirs) != 1 || len(got) != 1 {
				t.Fatalf("requests received: official %d, ours %d; want 1 each", len(theirs), len(got))
			}
			if n := len(got[0].ResourceSpans); n != 2 {
				t.Fatalf("our request has %d ResourceSpans, want 2", n)
			}
			sortTraceRequest(theirs[0])
			sortTraceRequest(got[0])
			wantEqual(t, theirs[0], got[0])
		})
	}
}

func TestLogRequestsEqualTheOfficialExporters(t *testing.T) {
	records := testRecords(t)
	for _, tc := range []struct {
		name     string
		official func(t *testing.T, url string) sdklog.Exporter
		recv     func(tb testing.TB, opts ...testkit.OTLPReceiverOption) *testkit.OTLPReceiver
		ours     func(url string) otlp.Config
	}{
		{
			name: "http",
			official: func(t *testing.T, url string) sdklog.Exporter {
				e, err := otlploghttp.New(t.Context(), otlploghttp.WithEndpointURL(url+"/v1/logs"))
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
			recv: testkit.StartOTLPReceiver,
			ours: func(url string) otlp.Config {
				return otlp.Config{Transport: otlp.HTTP, URL: url + "/v1/logs", Timeout: 5 * time.Second}
			},
		},
		{
			name: "grpc",
			official: func(t *testing.T, url string) sdklog.Exporter {
				e, err := otlploggrpc.New(t.Context(), otlploggrpc.WithEndpointURL(url))
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
			recv: testkit.StartOTLPGRPCReceiver,
			ours: func(url string) otlp.Config {
				return otlp.Config{Transport: otlp.GRPC, URL: url, Timeout: 5 * time.Second}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			theirsAt, oursAt := tc.recv(t), tc.recv(t)
			official := tc.official(t, theirsAt.URL)
			defer official.Shutdown(context.Background())
			if err := official.Export(t.Context(), records); err != nil {
				t.Fatalf("official exporter: %v", err)
			}
			ours, err := otlp.NewLogExporter(tc.ours(oursAt.URL))
			if err != nil {
				t.Fatal(err)
			}
			defer ours.Shutdown(context.Background())
			if err := ours.Export(t.Context(), records); err != nil {
				t.Fatalf("our exporter: %v", err)
			}
			theirs, got := theirsAt.LogRequests(), oursAt.LogRequests()
			if len(theirs) != 1 || len(got) != 1 {
				t.Fatalf("requests received: official %d, ours %d; want 1 each", len(theirs), len(got))
			}
			if n := len(got[0].ResourceLogs); n != 2 {
				t.Fatalf("our request has %d ResourceLogs, want 2", n)
			}
			sortLogsRequest(theirs[0])
			sortLogsRequest(got[0])
			wantEqual(t, theirs[0], got[0])
		})
	}
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
