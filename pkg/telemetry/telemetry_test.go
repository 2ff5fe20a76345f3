package telemetry_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// enabledConfig points traces and logs at the given transports and endpoints.
func enabledConfig(service, tracesTransport, tracesURL, logsTransport, logsURL string) config.Telemetry {
	return config.Telemetry{
		Enabled:     true,
		ServiceName: service,
		Traces:      config.OTLPExporter{Transport: tracesTransport, Endpoint: tracesURL},
		Logs:        config.OTLPExporter{Transport: logsTransport, Endpoint: logsURL},
	}
}

func TestExportSpansAndLogsToOTLPReceiver(t *testing.T) {
	grpcRecv := testkit.StartOTLPGRPCReceiver(t)
	grpcURL := grpcRecv.URL
	httpRecv := testkit.StartOTLPReceiver(t)
	httpURL := httpRecv.URL
	tests := []struct {
		name              string
		traces, logs      string
		tracesAt, logsAt  string
		spansIn, recordIn *testkit.OTLPReceiver
	}{
		{"grpc", "grpc", "grpc", grpcURL, grpcURL, grpcRecv, grpcRecv},
		{"http", "http", "http", httpURL, httpURL, httpRecv, httpRecv},
		{"traces grpc, logs http", "grpc", "http", grpcURL, httpURL, grpcRecv, httpRecv},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "pg-" + strings.ReplaceAll(tt.name, " ", "")
			pid := 40000 + i
			cfg := enabledConfig("connectors-test", tt.traces, tt.tracesAt, tt.logs, tt.logsAt)
			tel, err := telemetry.Setup(t.Context(), cfg, telemetry.Resource{ConnectorKey: key, ConnectorKind: "sink", PID: pid, ServiceVersion: "0.1.0"})
			if err != nil {
				t.Fatal(err)
			}
			var printed bytes.Buffer
			h, err := logging.NewHandler(&printed, logging.Options{
				Format: "json", Filter: "info", Target: logging.TargetRunner,
				Also:  []slog.Handler{tel.LogHandler()},
				Attrs: []slog.Attr{slog.String("connector_key", key), slog.String("connector_type", "sink")},
			})
			if err != nil {
				t.Fatal(err)
			}
			log := slog.New(h)
			log.Info("sink running", "topics", 2)
			log.Debug("not exported: below the filter")

			start := time.Now().Add(-time.Second)
			rep := tel.Reporter(log, true)
			rep.Sink(context.Background(), telemetry.SinkBatch{
				Start: start, Stream: "s", Topic: "t", PartitionID: 3, CurrentOffset: 99, BatchSize: 10, ProcessedCount: 9,
				Decode: 10 * time.Millisecond, Prepare: 20 * time.Millisecond, FFI: 30 * time.Millisecond, Total: 70 * time.Millisecond,
			})
			rep.Sink(context.Background(), telemetry.SinkBatch{Start: start, Stream: "s", Topic: "t", BatchSize: 5, Total: time.Millisecond, Err: errors.New("consume failed")})
			if err := tel.Shutdown(t.Context()); err != nil {
				t.Fatalf("shutdown: %v", err)
			}

			spans := spansOf(tt.spansIn, key)
			wantResource(t, "span", spans[0].Resource, key, pid)
			batches := byName(spans, telemetry.SpanSinkBatch)
			if len(batches) != 2 {
				t.Fatalf("got %d %q spans, want 2 (all: %v)", len(batches), telemetry.SpanSinkBatch, names(spans))
			}
			done, failed := batches[0], batches[1]
			if done.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				done, failed = failed, done
			}
			if failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || failed.Status.GetMessage() != "consume failed" {
				t.Errorf("failed batch status = %v, want error 'consume failed'", failed.Status)
			}
			if a := testkit.OTLPAttrs(done.Attributes); a["stream"] != "s" || a["topic"] != "t" || a["partition_id"] != int64(3) ||
				a["current_offset"] != int64(99) || a["batch_size"] != int64(10) || a["processed_count"] != int64(9) {
				t.Errorf("batch span attributes = %v", a)
			}
			if done.Kind != tracepb.Span_SPAN_KIND_CONSUMER || done.StartTimeUnixNano != uint64(start.UnixNano()) ||
				done.EndTimeUnixNano != uint64(start.Add(70*time.Millisecond).UnixNano()) {
				t.Errorf("batch span kind %v, times %d..%d, want consumer from the batch start for 70ms", done.Kind, done.StartTimeUnixNano, done.EndTimeUnixNano)
			}

			// Children: decode, prepare, ffi under the successful batch, end to end.
			at := start
			for _, stage := range []struct {
				name string
				d    time.Duration
			}{{"decode", 10 * time.Millisecond}, {"prepare", 20 * time.Millisecond}, {"ffi", 30 * time.Millisecond}} {
				children := childrenOf(spans, done, stage.name)
				if len(children) != 1 {
					t.Fatalf("stage %q: %d child spans of the batch, want 1", stage.name, len(children))
				}
				c := children[0]
				if c.StartTimeUnixNano != uint64(at.UnixNano()) || c.EndTimeUnixNano != uint64(at.Add(stage.d).UnixNano()) {
					t.Errorf("stage %q spans %d..%d, want %d..%d", stage.name, c.StartTimeUnixNano, c.EndTimeUnixNano, at.UnixNano(), at.Add(stage.d).UnixNano())
				}
				at = at.Add(stage.d)
			}
			if n := len(childrenOf(spans, failed, "")); n != 0 {
				t.Errorf("failed batch has %d stage spans, want none (stages are not recorded for a failed batch)", n)
			}

			logs := logsOf(tt.recordIn, key)
			wantResource(t, "log record", logs[0].Resource, key, pid)
			bodies := map[string]testkit.ReceivedLog{}
			for _, l := range logs {
				bodies[l.Record.GetBody().GetStringValue()] = l
			}
			if _, ok := bodies["not exported: below the filter"]; ok {
				t.Errorf("a record below the RUST_LOG filter was exported")
			}
			running, ok := bodies["sink running"]
			if !ok {
				t.Fatalf("no 'sink running' record among %d", len(logs))
			}
			if a := testkit.OTLPAttrs(running.Record.Attributes); a["topics"] != int64(2) || a["connector_type"] != "sink" {
				t.Errorf("'sink running' attributes = %v", a)
			}
			bench, ok := bodies[telemetry.BenchmarkMessage]
			if !ok {
				t.Fatalf("no benchmark record exported")
			}
			if a := testkit.OTLPAttrs(bench.Record.Attributes); a["target"] != logging.TargetBenchmark || a["total_us"] == nil {
				t.Errorf("benchmark record attributes = %v", a)
			}
			for _, line := range strings.Split(strings.TrimSpace(printed.String()), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("printed line is not JSON: %s", line)
				}
			}
		})
	}
}

func TestSourceBatchSpans(t *testing.T) {
	recv := testkit.StartOTLPReceiver(t)
	url := recv.URL
	tel, err := telemetry.Setup(t.Context(), enabledConfig("", "http", url+"/v1/traces", "http", url), telemetry.Resource{ConnectorKey: "rnd", ConnectorKind: "source"})
	if err != nil {
		t.Fatal(err)
	}
	rep := tel.Reporter(slog.New(slog.DiscardHandler), false)
	start := time.Now()
	tests := []struct {
		name   string
		batch  telemetry.SourceBatch
		stages []string
	}{
		{"saved state", telemetry.SourceBatch{Start: start, Stream: "a", BatchSize: 4, SentCount: 4, Decode: 1, Prepare: 2, IggySend: 3, StateSaved: true, StateSave: 4, Total: 10}, []string{"decode", "prepare", "iggy_send", "state_save"}},
		{"no state", telemetry.SourceBatch{Start: start, Stream: "b", BatchSize: 4, SentCount: 4, Decode: 1, Prepare: 2, IggySend: 3, Total: 6}, []string{"decode", "prepare", "iggy_send"}},
	}
	for _, tt := range tests {
		rep.Source(context.Background(), tt.batch)
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := spansOf(recv, "rnd")
	if svc := spans[0].Resource["service.name"]; svc != "iggy-connectors" {
		t.Errorf("service.name = %v, want the default iggy-connectors", svc)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parent *tracepb.Span
			for _, s := range byName(spans, telemetry.SpanSourceBatch) {
				if testkit.OTLPAttrs(s.Attributes)["stream"] == tt.batch.Stream {
					parent = s
				}
			}
			if parent == nil {
				t.Fatalf("no source batch span for stream %q", tt.batch.Stream)
			}
			if parent.Kind != tracepb.Span_SPAN_KIND_PRODUCER || testkit.OTLPAttrs(parent.Attributes)["state_saved"] != tt.batch.StateSaved {
				t.Errorf("batch span kind %v attributes %v", parent.Kind, testkit.OTLPAttrs(parent.Attributes))
			}
			var got []string
			for _, c := range childrenOf(spans, parent, "") {
				got = append(got, c.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.stages, ",") {
				t.Errorf("stage spans %v, want %v", got, tt.stages)
			}
		})
	}
}

func TestDisabledTelemetry(t *testing.T) {
	tel, err := telemetry.Setup(t.Context(), config.DefaultRuntime().Telemetry, telemetry.Resource{ConnectorKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() || tel.LogHandler() != nil {
		t.Fatalf("default config: Enabled = %v, LogHandler = %v; want off", tel.Enabled(), tel.LogHandler())
	}
	_, span := tel.TracerProvider().Tracer("x").Start(context.Background(), "s")
	if span.IsRecording() {
		t.Errorf("disabled tracer provider records spans")
	}
	var nilTel *telemetry.Telemetry
	if nilTel.Enabled() || nilTel.Shutdown(t.Context()) != nil || nilTel.LogHandler() != nil {
		t.Errorf("a nil *Telemetry is not a disabled one")
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestSetupRejectsBadConfig(t *testing.T) {
	good := "http://localhost:4317"
	tests := []struct {
		name    string
		cfg     config.Telemetry
		wantKey string
	}{
		{"transport", enabledConfig("s", "udp", good, "grpc", good), "telemetry.traces.transport"},
		{"uppercase transport", enabledConfig("s", "grpc", good, "GRPC", good), "telemetry.logs.transport"},
		{"endpoint without scheme", enabledConfig("s", "grpc", "localhost:4317", "grpc", good), "telemetry.traces.endpoint"},
		{"endpoint without host", enabledConfig("s", "grpc", good, "http", "http://"), "telemetry.logs.endpoint"},
		{"endpoint not a URL", enabledConfig("s", "grpc", good, "http", "http://[::1"), "telemetry.logs.endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := telemetry.Setup(t.Context(), tt.cfg, telemetry.Resource{})
			if !errors.Is(err, telemetry.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantKey) {
				t.Fatalf("error = %v, want ErrInvalidConfig naming %s", err, tt.wantKey)
			}
		})
	}
}

func TestSetupRejectsBadOTLPEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "zstd")
	good := "http://localhost:4317"
	_, err := telemetry.Setup(t.Context(), enabledConfig("s", "grpc", good, "grpc", good), telemetry.Resource{})
	if !errors.Is(err, telemetry.ErrInvalidConfig) || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION") {
		t.Fatalf("error = %v, want ErrInvalidConfig naming OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", err)
	}
}

func TestShutdownReturnsWhenTheCollectorHangs(t *testing.T) {
	// A collector that accepts connections and never answers.
	url := testkit.StartOTLPReceiver(t, testkit.WithExportDelay(time.Hour)).URL
	tel, err := telemetry.Setup(t.Context(), enabledConfig("s", "http", url, "http", url), telemetry.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	tel.Reporter(slog.New(slog.DiscardHandler), false).Sink(context.Background(), telemetry.SinkBatch{Total: time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := tel.Shutdown(ctx); err == nil {
		t.Fatalf("shutdown against a hung collector reported success")
	}
}

func TestBenchmarkEvents(t *testing.T) {
	tests := []struct {
		name   string
		report func(r *telemetry.Reporter)
		want   map[string]any
	}{
		{
			name: "sink",
			report: func(r *telemetry.Reporter) {
				r.Sink(context.Background(), telemetry.SinkBatch{Stream: "st", Topic: "tp", PartitionID: 1, CurrentOffset: 41, BatchSize: 10, ProcessedCount: 8,
					Decode: 1500 * time.Nanosecond, Prepare: 2 * time.Microsecond, FFI: 3999 * time.Nanosecond, Total: 9 * time.Microsecond})
			},
			want: map[string]any{"connector_type": "sink", "connector_key": "k", "stream": "st", "topic": "tp", "partition_id": 1.0, "current_offset": 41.0,
				"batch_size": 10.0, "processed_count": 8.0, "decode_us": 1.0, "prepare_us": 2.0, "ffi_us": 3.0, "total_us": 9.0},
		},
		{
			name: "failed sink batch",
			report: func(r *telemetry.Reporter) {
				r.Sink(context.Background(), telemetry.SinkBatch{Stream: "st", Topic: "tp", PartitionID: 1, CurrentOffset: 41, BatchSize: 10, ProcessedCount: 8,
					Decode: time.Millisecond, Prepare: time.Millisecond, FFI: time.Millisecond, Total: 5 * time.Millisecond, Err: errors.New("x")})
			},
			want: map[string]any{"connector_type": "sink", "stream": "st", "partition_id": 1.0, "batch_size": 10.0,
				"processed_count": 0.0, "decode_us": 0.0, "prepare_us": 0.0, "ffi_us": 0.0, "total_us": 5000.0},
		},
		{
			name: "source with state",
			report: func(r *telemetry.Reporter) {
				r.Source(context.Background(), telemetry.SourceBatch{Stream: "st", Topic: "tp", BatchSize: 7, SentCount: 7,
					Decode: time.Microsecond, Prepare: 2 * time.Microsecond, IggySend: 3 * time.Microsecond, StateSaved: true, StateSave: 4 * time.Microsecond, Total: 11 * time.Microsecond})
			},
			want: map[string]any{"connector_type": "source", "stream": "st", "topic": "tp", "batch_size": 7.0, "sent_count": 7.0, "decode_us": 1.0,
				"prepare_us": 2.0, "iggy_send_us": 3.0, "state_saved": true, "state_save_us": 4.0, "total_us": 11.0},
		},
		{
			name: "rejected source batch",
			report: func(r *telemetry.Reporter) {
				r.Source(context.Background(), telemetry.SourceBatch{Stream: "st", BatchSize: 7, SentCount: 3, IggySend: time.Millisecond, StateSave: time.Millisecond, Total: 2 * time.Millisecond, Err: errors.New("send failed")})
			},
			want: map[string]any{"sent_count": 0.0, "iggy_send_us": 1000.0, "state_saved": false, "state_save_us": 0.0, "total_us": 2000.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := "sink"
			if strings.Contains(tt.name, "source") {
				kind = "source"
			}
			var buf bytes.Buffer
			log, err := logging.New(&buf, "json", "warn,iggy_connectors::benchmark=info", slog.String("connector_key", "k"), slog.String("connector_type", kind))
			if err != nil {
				t.Fatal(err)
			}
			var disabled *telemetry.Telemetry
			tt.report(disabled.Reporter(log, true))

			var event map[string]any
			if err := json.Unmarshal(buf.Bytes(), &event); err != nil {
				t.Fatalf("benchmark event is not one JSON line: %v\n%s", err, buf.String())
			}
			if event["level"] != "INFO" || event["msg"] != "benchmark" || event["target"] != logging.TargetBenchmark {
				t.Errorf("event level/msg/target = %v/%v/%v", event["level"], event["msg"], event["target"])
			}
			for k, v := range tt.want {
				if event[k] != v {
					t.Errorf("%s = %v (%T), want %v", k, event[k], event[k], v)
				}
			}
		})
	}
}

func TestNoBenchmarkEventWhenOff(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "trace")
	if err != nil {
		t.Fatal(err)
	}
	rep := (*telemetry.Telemetry)(nil).Reporter(log, false)
	rep.BenchmarkStarted()
	rep.Sink(context.Background(), telemetry.SinkBatch{Total: time.Millisecond})
	rep.Source(context.Background(), telemetry.SourceBatch{Total: time.Millisecond})
	if buf.Len() != 0 {
		t.Fatalf("benchmark off, yet logged: %s", buf.String())
	}
}

// spansOf returns the spans whose resource names the connector, failing when
// there are none.
func spansOf(r *testkit.OTLPReceiver, key string) []testkit.ReceivedSpan {
	var out []testkit.ReceivedSpan
	for _, s := range r.Spans() {
		if s.Resource[telemetry.AttrConnectorKey] == key {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		panic("no spans received for connector " + key)
	}
	return out
}

func logsOf(r *testkit.OTLPReceiver, key string) []testkit.ReceivedLog {
	var out []testkit.ReceivedLog
	for _, l := range r.Logs() {
		if l.Resource[telemetry.AttrConnectorKey] == key {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		panic("no log records received for connector " + key)
	}
	return out
}

func wantResource(t *testing.T, what string, res map[string]any, key string, pid int) {
	t.Helper()
	want := map[string]any{
		"service.name": "connectors-test", "service.version": "0.1.0",
		telemetry.AttrConnectorKey: key, telemetry.AttrConnectorType: "sink", "process.pid": int64(pid),
	}
	for k, v := range want {
		if res[k] != v {
			t.Errorf("%s resource %s = %v, want %v", what, k, res[k], v)
		}
	}
}

func byName(spans []testkit.ReceivedSpan, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.Span.Name == name {
			out = append(out, s.Span)
		}
	}
	return out
}

// childrenOf returns parent's children named name (any name when empty) in
// start order.
func childrenOf(spans []testkit.ReceivedSpan, parent *tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		c := s.Span
		if bytes.Equal(c.ParentSpanId, parent.SpanId) && bytes.Equal(c.TraceId, parent.TraceId) && (name == "" || c.Name == name) {
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].StartTimeUnixNano < out[j-1].StartTimeUnixNano; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func names(spans []testkit.ReceivedSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Span.Name+"/"+hex.EncodeToString(s.Span.SpanId))
	}
	return out
}
