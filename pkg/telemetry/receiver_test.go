package telemetry_test

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

// receiver is an OTLP collector endpoint for tests: the collector's gRPC
// trace and logs services, or the OTLP/HTTP protobuf routes, keeping what
// it is sent. delay makes it a slow collector.
type receiver struct {
	delay time.Duration
	stop  chan struct{} // closed when the test ends: a slow export returns at once

	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
	logs  []*logspb.ResourceLogs
}

func (r *receiver) addSpans(rs []*tracepb.ResourceSpans) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans = append(r.spans, rs...)
}

func (r *receiver) addLogs(rl []*logspb.ResourceLogs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, rl...)
}

func (r *receiver) wait(ctx context.Context) {
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
		case <-r.stop:
		}
	}
}

// receivedSpan is one span with the resource it came with.
type receivedSpan struct {
	resource map[string]any
	span     *tracepb.Span
}

type receivedLog struct {
	resource map[string]any
	record   *logspb.LogRecord
}

func (r *receiver) receivedSpans() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedSpan
	for _, rs := range r.spans {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				out = append(out, receivedSpan{res, s})
			}
		}
	}
	return out
}

func (r *receiver) receivedLogs() []receivedLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedLog
	for _, rl := range r.logs {
		res := attrMap(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, l := range sl.GetLogRecords() {
				out = append(out, receivedLog{res, l})
			}
		}
	}
	return out
}

// attrMap flattens OTLP attributes to Go values (string, int64, bool, float64).
func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
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

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *receiver
}

func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.wait(ctx)
	s.r.addSpans(req.GetResourceSpans())
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type logsService struct {
	collogspb.UnimplementedLogsServiceServer
	r *receiver
}

func (s logsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	s.r.wait(ctx)
	s.r.addLogs(req.GetResourceLogs())
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// startGRPCReceiver serves the OTLP gRPC services on a loopback port and
// returns its endpoint URL.
func startGRPCReceiver(t testing.TB, delay time.Duration) (string, *receiver) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{delay: delay, stop: make(chan struct{})}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, traceService{r: r})
	collogspb.RegisterLogsServiceServer(srv, logsService{r: r})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	t.Cleanup(func() { close(r.stop) }) // runs first
	return "http://" + lis.Addr().String(), r
}

// startHTTPReceiver serves OTLP/HTTP (protobuf bodies) on /v1/traces and
// /v1/logs and returns its base URL.
func startHTTPReceiver(t testing.TB, delay time.Duration) (string, *receiver) {
	t.Helper()
	r := &receiver{delay: delay, stop: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !readProto(w, req, &in) {
			return
		}
		r.wait(req.Context())
		r.addSpans(in.GetResourceSpans())
		writeProto(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var in collogspb.ExportLogsServiceRequest
		if !readProto(w, req, &in) {
			return
		}
		r.wait(req.Context())
		r.addLogs(in.GetResourceLogs())
		writeProto(w, &collogspb.ExportLogsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(r.stop) }) // runs first
	return srv.URL, r
}

func readProto(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
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

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}
