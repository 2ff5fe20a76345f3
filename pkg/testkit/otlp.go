package testkit

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	_ "google.golang.org/grpc/encoding/gzip" // the receiver accepts gzip-compressed exports
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// OTLPReceiver is an OpenTelemetry collector endpoint for tests: it serves OTLP/HTTP with
// protobuf bodies on /v1/traces and /v1/logs (StartOTLPReceiver) or the collector's gRPC
// trace and logs services (StartOTLPGRPCReceiver), and keeps everything it is sent. Point
// [telemetry.traces] and [telemetry.logs] (transport "http" or "grpc") at URL.
type OTLPReceiver struct {
	URL string

	delay      time.Duration
	tls        *TLSCert
	clientAuth bool
	stop       chan struct{} // closed when the test ends: a slow export returns at once
	arrived    chan struct{} // closed when the first export arrives

	mu            sync.Mutex
	replies       []OTLPReply // answers for the next exports, first first
	exports       int
	headers       http.Header // of the last export (gRPC: its metadata)
	spans         []ReceivedSpan
	logs          []ReceivedLog
	traceRequests []*coltracepb.ExportTraceServiceRequest
	logRequests   []*collogspb.ExportLogsServiceRequest
}

// OTLPReply is how a receiver answers one export other than with plain
// success (see WithReplies). The zero value is a success.
type OTLPReply struct {
	HTTPStatus int        // OTLP/HTTP: the status (0 is 200)
	Code       codes.Code // gRPC: the status code (0 is OK), sent trailers-only as gRPC servers do
	// HeadersFirst makes a gRPC failure send response headers before the
	// status, so the status arrives in trailers rather than trailers-only.
	HeadersFirst bool
	Message      string // the error text of a failed reply
	// RetryAfter is a throttling hint: Retry-After (HTTP, whole seconds) or a
	// google.rpc.RetryInfo detail (gRPC).
	RetryAfter time.Duration
	// Rejected and RejectMessage make a successful reply a partial success.
	Rejected      int64
	RejectMessage string
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

// WithReplies makes the receiver answer its next exports with replies, one
// each in order, then succeed as usual. A failed reply keeps nothing.
func WithReplies(replies ...OTLPReply) OTLPReceiverOption {
	return func(r *OTLPReceiver) { r.replies = append(r.replies, replies...) }
}

// WithTLS serves the receiver over TLS with cert (HTTP/2 and HTTP/1.1 for
// OTLP/HTTP); its URL is then https://.
func WithTLS(cert TLSCert) OTLPReceiverOption {
	return func(r *OTLPReceiver) { r.tls = &cert }
}

// WithClientAuth makes a WithTLS receiver require a client certificate
// issued by its certificate's CA (mutual TLS).
func WithClientAuth() OTLPReceiverOption {
	return func(r *OTLPReceiver) { r.clientAuth = true }
}

// serverTLS is the receiver's TLS configuration.
func (r *OTLPReceiver) serverTLS(tb testing.TB) *tls.Config {
	cert, err := tls.LoadX509KeyPair(r.tls.CertFile, r.tls.KeyFile)
	if err != nil {
		tb.Fatalf("OTLP receiver certificate: %v", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if r.clientAuth {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, r.tls.CAPool
	}
	return cfg
}

// next counts an export, keeps its headers, holds it for the configured
// delay and returns the reply it gets.
func (r *OTLPReceiver) next(ctx context.Context, headers http.Header) OTLPReply {
	r.mu.Lock()
	r.exports++
	if r.exports == 1 {
		close(r.arrived)
	}
	r.headers = headers
	var reply OTLPReply
	if len(r.replies) > 0 {
		reply = r.replies[0]
		r.replies = r.replies[1:]
	}
	r.mu.Unlock()
	r.wait(ctx)
	return reply
}

// LastHeaders returns the headers of the last export request (for gRPC its
// metadata).
func (r *OTLPReceiver) LastHeaders() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers.Clone()
}

// Exports is how many export requests arrived, answered or refused.
func (r *OTLPReceiver) Exports() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exports
}

// Arrived is closed when the first export request arrives (before it is held or answered).
func (r *OTLPReceiver) Arrived() <-chan struct{} { return r.arrived }

// TraceRequests returns the trace export requests kept so far, as decoded.
func (r *OTLPReceiver) TraceRequests() []*coltracepb.ExportTraceServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), r.traceRequests...)
}

// LogRequests returns the log export requests kept so far, as decoded.
func (r *OTLPReceiver) LogRequests() []*collogspb.ExportLogsServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*collogspb.ExportLogsServiceRequest(nil), r.logRequests...)
}

func newOTLPReceiver(opts []OTLPReceiverOption) *OTLPReceiver {
	r := &OTLPReceiver{stop: make(chan struct{}), arrived: make(chan struct{})}
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
		reply := r.next(req.Context(), req.Header.Clone())
		if writeHTTPFailure(w, reply) {
			return
		}
		r.addSpans(&in)
		writeOTLP(w, traceResponse(reply))
	})
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var in collogspb.ExportLogsServiceRequest
		if !readOTLP(w, req, &in) {
			return
		}
		reply := r.next(req.Context(), req.Header.Clone())
		if writeHTTPFailure(w, reply) {
			return
		}
		r.addLogs(&in)
		writeOTLP(w, logsResponse(reply))
	})
	srv := httptest.NewUnstartedServer(mux)
	if r.tls != nil {
		srv.EnableHTTP2 = true
		srv.TLS = r.serverTLS(tb)
		srv.StartTLS()
	} else {
		srv.Start()
	}
	tb.Cleanup(srv.Close)
	tb.Cleanup(func() { close(r.stop) }) // runs first, so Close does not wait for slow exports
	r.URL = srv.URL
	return r
}

// writeHTTPFailure answers a failed reply, reporting whether it did.
func writeHTTPFailure(w http.ResponseWriter, reply OTLPReply) bool {
	if reply.HTTPStatus == 0 || (reply.HTTPStatus >= 200 && reply.HTTPStatus <= 299) {
		return false
	}
	if reply.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(reply.RetryAfter/time.Second)))
	}
	http.Error(w, reply.Message, reply.HTTPStatus)
	return true
}

func incomingHeaders(ctx context.Context) http.Header {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// grpcFailure is the error a gRPC service returns for a failed reply, nil
// for a successful one.
func grpcFailure(ctx context.Context, reply OTLPReply) error {
	if reply.Code == codes.OK {
		return nil
	}
	if reply.HeadersFirst {
		_ = grpc.SendHeader(ctx, metadata.Pairs("x-test", "headers-first"))
	}
	st := status.New(reply.Code, reply.Message)
	if reply.RetryAfter > 0 {
		if withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(reply.RetryAfter)}); err == nil {
			st = withInfo
		}
	}
	return st.Err()
}

// StartOTLPGRPCReceiver starts a receiver serving the collector's gRPC trace and logs services
// on a loopback port, stopped at test cleanup. Its URL is http://host:port (https:// WithTLS).
func StartOTLPGRPCReceiver(tb testing.TB, opts ...OTLPReceiverOption) *OTLPReceiver {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen for the OTLP gRPC receiver: %v", err)
	}
	r := newOTLPReceiver(opts)
	var serverOpts []grpc.ServerOption
	scheme := "http"
	if r.tls != nil {
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(r.serverTLS(tb))))
		scheme = "https"
	}
	srv := grpc.NewServer(serverOpts...)
	coltracepb.RegisterTraceServiceServer(srv, otlpTraceService{r: r})
	collogspb.RegisterLogsServiceServer(srv, otlpLogsService{r: r})
	go func() { _ = srv.Serve(lis) }()
	tb.Cleanup(srv.Stop)
	tb.Cleanup(func() { close(r.stop) }) // runs first
	r.URL = scheme + "://" + lis.Addr().String()
	return r
}

type otlpTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *OTLPReceiver
}

func (s otlpTraceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	reply := s.r.next(ctx, incomingHeaders(ctx))
	if err := grpcFailure(ctx, reply); err != nil {
		return nil, err
	}
	s.r.addSpans(req)
	return traceResponse(reply), nil
}

// traceResponse is the answer to a trace export that did not fail: a
// partial success when reply rejects some spans.
func traceResponse(reply OTLPReply) *coltracepb.ExportTraceServiceResponse {
	resp := &coltracepb.ExportTraceServiceResponse{}
	if reply.Rejected != 0 || reply.RejectMessage != "" {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: reply.Rejected, ErrorMessage: reply.RejectMessage}
	}
	return resp
}

type otlpLogsService struct {
	collogspb.UnimplementedLogsServiceServer
	r *OTLPReceiver
}

func (s otlpLogsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	reply := s.r.next(ctx, incomingHeaders(ctx))
	if err := grpcFailure(ctx, reply); err != nil {
		return nil, err
	}
	s.r.addLogs(req)
	return logsResponse(reply), nil
}

// logsResponse is the answer to a logs export that did not fail: a partial
// success when reply rejects some records.
func logsResponse(reply OTLPReply) *collogspb.ExportLogsServiceResponse {
	resp := &collogspb.ExportLogsServiceResponse{}
	if reply.Rejected != 0 || reply.RejectMessage != "" {
		resp.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: reply.Rejected, ErrorMessage: reply.RejectMessage}
	}
	return resp
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

func (r *OTLPReceiver) addSpans(req *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traceRequests = append(r.traceRequests, req)
	for _, rs := range req.GetResourceSpans() {
		res := OTLPAttrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, ReceivedSpan{Resource: res, Attrs: OTLPAttrs(s.GetAttributes()), Span: s})
			}
		}
	}
}

func (r *OTLPReceiver) addLogs(req *collogspb.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logRequests = append(r.logRequests, req)
	for _, rl := range req.GetResourceLogs() {
		res := OTLPAttrs(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, l := range sl.GetLogRecords() {
				r.logs = append(r.logs, ReceivedLog{Resource: res, Attrs: OTLPAttrs(l.GetAttributes()), Record: l})
			}
		}
	}
}

// DeadURL is an http:// URL on a loopback port nothing listens on
// (connections are refused): a dead collector.
func DeadURL(tb testing.TB) string {
	tb.Helper()
	return "http://" + FreeLoopbackAddr(tb)
}

// FreeLoopbackAddr is a loopback host:port that was free a moment ago:
// listened on, then closed.
func FreeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
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
