package testkit

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// OTLPReceiver is an OpenTelemetry collector endpoint for tests: it serves OTLP/HTTP with
// protobuf bodies on /v1/traces and /v1/logs (StartOTLPReceiver) or the collector's gRPC
// trace and logs services (StartOTLPGRPCReceiver), and keeps everything it is sent. Point
// [telemetry.traces] and [telemetry.logs] (transport "http" or "grpc") at URL.
type OTLPReceiver struct {
	URL string

	delay time.Duration
	stop  chan struct{} // closed when the test ends: a slow export returns at once

	mu    sync.Mutex
	spans []ReceivedSpan
	logs  []ReceivedLog
}

// ReceivedSpan is one exported span with the attributes of its resource and its own.
type ReceivedSpan struct {
	Resource map[string]any
	Attrs    map[string]any
	Span     *tracepb.Span
}

// ReceivedLog is one exported log record with the attributes of its resource and its own.
type ReceivedLog struct {
	Resource map[string]any
	Attrs    map[string]any
	Record   *logspb.LogRecord
}

// OTLPReceiverOption adjusts a receiver before it starts.
type OTLPReceiverOption func(*OTLPReceiver)

// WithExportDelay makes the receiver a slow collector: every export waits d (or until the
// exporter gives up, or the test ends) before it is kept and answered.
func WithExportDelay(d time.Duration) OTLPReceiverOption {
	return func(r *OTLPReceiver) { r.delay = d }
}

func newOTLPReceiver(opts []OTLPReceiverOption) *OTLPReceiver {
	r := &OTLPReceiver{stop: make(chan struct{})}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

// StartOTLPReceiver starts an OTLP/HTTP receiver on a loopback port, stopped at test cleanup.
func StartOTLPReceiver(tb testing.TB, opts ...OTLPReceiverOption) *OTLPReceiver {
	tb.Helper()
	r := newOTLPReceiver(opts)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !readOTLP(w, req, &in) {
			return
		}
		r.wait(req.Context())
		r.addSpans(in.GetResourceSpans())
		writeOTLP(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var in collogspb.ExportLogsServiceRequest
		if !readOTLP(w, req, &in) {
			return
		}
		r.wait(req.Context())
		r.addLogs(in.GetResourceLogs())
		writeOTLP(w, &collogspb.ExportLogsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	tb.Cleanup(func() { close(r.stop) }) // runs first, so Close does not wait for slow exports
	r.URL = srv.URL
	return r
}

// StartOTLPGRPCReceiver starts a receiver serving the collector's gRPC trace and logs services
// on a loopback port, stopped at test cleanup. Its URL is http://host:port.
func StartOTLPGRPCReceiver(tb testing.TB, opts ...OTLPReceiverOption) *OTLPReceiver {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen for the OTLP gRPC receiver: %v", err)
	}
	r := newOTLPReceiver(opts)
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, otlpTraceService{r: r})
	collogspb.RegisterLogsServiceServer(srv, otlpLogsService{r: r})
	go func() { _ = srv.Serve(lis) }()
	tb.Cleanup(srv.Stop)
	tb.Cleanup(func() { close(r.stop) }) // runs first
	r.URL = "http://" + lis.Addr().String()
	return r
}

type otlpTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *OTLPReceiver
}

func (s otlpTraceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.wait(ctx)
	s.r.addSpans(req.GetResourceSpans())
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type otlpLogsService struct {
	collogspb.UnimplementedLogsServiceServer
	r *OTLPReceiver
}

func (s otlpLogsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	s.r.wait(ctx)
	s.r.addLogs(req.GetResourceLogs())
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// wait holds an export for the configured delay.
func (r *OTLPReceiver) wait(ctx context.Context) {
	if r.delay <= 0 {
		return
	}
	select {
	case <-time.After(r.delay):
	case <-ctx.Done():
	case <-r.stop:
	}
}

// Spans returns a copy of the spans received so far.
func (r *OTLPReceiver) Spans() []ReceivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ReceivedSpan(nil), r.spans...)
}

// Logs returns a copy of the log records received so far.
func (r *OTLPReceiver) Logs() []ReceivedLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ReceivedLog(nil), r.logs...)
}

func (r *OTLPReceiver) addSpans(in []*tracepb.ResourceSpans) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range in {
		res := OTLPAttrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, ReceivedSpan{Resource: res, Attrs: OTLPAttrs(s.GetAttributes()), Span: s})
			}
		}
	}
}

func (r *OTLPReceiver) addLogs(in []*logspb.ResourceLogs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range in {
		res := OTLPAttrs(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, l := range sl.GetLogRecords() {
				r.logs = append(r.logs, ReceivedLog{Resource: res, Attrs: OTLPAttrs(l.GetAttributes()), Record: l})
			}
		}
	}
}

// OTLPAttrs flattens OTLP attributes to Go values: string, int64, bool or float64 (anything else
// as its protobuf text).
func OTLPAttrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = v.BoolValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = v.DoubleValue
		default:
			m[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return m
}

// readOTLP decodes a protobuf export request (gzip or plain), answering 415 or 400 when it cannot.
func readOTLP(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "unsupported content type "+ct, http.StatusUnsupportedMediaType)
		return false
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeOTLP(w http.ResponseWriter, m proto.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}
