package otlp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/codes"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// transports are the two ways to a collector: a receiver and the exporter
// configuration pointing at it.
var transports = []struct {
	name   string
	config func(url string) otlp.Config
}{
	{"http", func(url string) otlp.Config {
		return otlp.Config{Transport: otlp.HTTP, URL: url + "/v1/traces", Timeout: 10 * time.Second, Retry: fastRetry}
	}},
	{"grpc", func(url string) otlp.Config {
		return otlp.Config{Transport: otlp.GRPC, URL: url, Timeout: 10 * time.Second, Retry: fastRetry}
	}},
}

var fastRetry = otlp.Retry{Enabled: true, InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, MaxElapsedTime: 10 * time.Second}

// configFor is the exporter configuration of one transport pointing at url.
func configFor(t *testing.T, transport, url string) otlp.Config {
	t.Helper()
	for _, tr := range transports {
		if tr.name == transport {
			return tr.config(url)
		}
	}
	t.Fatalf("no transport %q", transport)
	return otlp.Config{}
}

// newSpanExporter makes a span exporter, shut down when the test ends.
func newSpanExporter(t *testing.T, cfg otlp.Config) *otlp.SpanExporter {
	t.Helper()
	exp, err := otlp.NewSpanExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func exportSpans(t *testing.T, cfg otlp.Config) error {
	t.Helper()
	return newSpanExporter(t, cfg).ExportSpans(t.Context(), testSpans()[:2])
}

// wantKept checks the receiver kept the two exported spans.
func wantKept(t *testing.T, recv *testkit.OTLPReceiver) {
	t.Helper()
	if n := len(recv.Spans()); n != 2 {
		t.Errorf("receiver kept %d spans, want 2", n)
	}
}

func TestRetryableRepliesAreRetried(t *testing.T) {
	tests := []struct {
		name      string
		transport string
		replies   []testkit.OTLPReply
	}{
		{"http 503 then 200", "http", []testkit.OTLPReply{{HTTPStatus: 503, Message: "busy"}}},
		{"http 429, 502, 504 then 200", "http", []testkit.OTLPReply{{HTTPStatus: 429}, {HTTPStatus: 502}, {HTTPStatus: 504}}},
		{"http 503 with Retry-After", "http", []testkit.OTLPReply{{HTTPStatus: 503, RetryAfter: time.Second}}},
		{"grpc UNAVAILABLE then OK", "grpc", []testkit.OTLPReply{{Code: codes.Unavailable, Message: "busy"}}},
		{"grpc UNAVAILABLE in trailers then OK", "grpc", []testkit.OTLPReply{{Code: codes.Unavailable, HeadersFirst: true}}},
		{"grpc ABORTED, DATA_LOSS, OUT_OF_RANGE then OK", "grpc", []testkit.OTLPReply{{Code: codes.Aborted}, {Code: codes.DataLoss}, {Code: codes.OutOfRange}}},
		{"grpc RESOURCE_EXHAUSTED with RetryInfo", "grpc", []testkit.OTLPReply{{Code: codes.ResourceExhausted, RetryAfter: 100 * time.Millisecond}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recv := startReceiver(t, tt.transport, testkit.WithReplies(tt.replies...))
			if err := exportSpans(t, configFor(t, tt.transport, recv.URL)); err != nil {
				t.Fatalf("export: %v", err)
			}
			if got, want := recv.Exports(), len(tt.replies)+1; got != want {
				t.Errorf("receiver saw %d exports, want %d (one per refusal plus the success)", got, want)
			}
			wantKept(t, recv)
		})
	}
}

func TestFailedRepliesAreNotRetried(t *testing.T) {
	tests := []struct {
		name      string
		transport string
		reply     testkit.OTLPReply
		check     func(t *testing.T, err error)
	}{
		{"http 400", "http", testkit.OTLPReply{HTTPStatus: 400, Message: "bad request body"}, func(t *testing.T, err error) {
			var se *otlp.HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != 400 || !strings.Contains(se.Body, "bad request body") {
				t.Errorf("error = %v, want HTTP 400 with the body", err)
			}
		}},
		{"http 500", "http", testkit.OTLPReply{HTTPStatus: 500}, func(t *testing.T, err error) {
			var se *otlp.HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != 500 {
				t.Errorf("error = %v, want HTTP 500", err)
			}
		}},
		{"grpc INVALID_ARGUMENT trailers-only", "grpc", testkit.OTLPReply{Code: codes.InvalidArgument, Message: "bad span: ünïcode 100%"}, wantGRPC(codes.InvalidArgument, "bad span: ünïcode 100%")},
		{"grpc PERMISSION_DENIED in trailers", "grpc", testkit.OTLPReply{Code: codes.PermissionDenied, Message: "no", HeadersFirst: true}, wantGRPC(codes.PermissionDenied, "no")},
		{"grpc RESOURCE_EXHAUSTED without RetryInfo", "grpc", testkit.OTLPReply{Code: codes.ResourceExhausted, Message: "full"}, wantGRPC(codes.ResourceExhausted, "full")},
		{"grpc UNIMPLEMENTED", "grpc", testkit.OTLPReply{Code: codes.Unimplemented}, wantGRPC(codes.Unimplemented, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recv := startReceiver(t, tt.transport, testkit.WithReplies(tt.reply))
			err := exportSpans(t, configFor(t, tt.transport, recv.URL))
			if err == nil {
				t.Fatal("export succeeded against a refusing collector")
			}
			tt.check(t, err)
			if n := recv.Exports(); n != 1 {
				t.Errorf("receiver saw %d exports, want 1 (not retried)", n)
			}
		})
	}
}

func wantGRPC(code codes.Code, msg string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var se *otlp.GRPCStatusError
		if !errors.As(err, &se) || se.Code != int(code) || se.Message != msg {
			t.Errorf("error = %v, want gRPC status %v %q", err, code, msg)
		}
	}
}

func TestPartialSuccess(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name+" spans", func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithReplies(testkit.OTLPReply{Rejected: 1, RejectMessage: "span too old"}))
			err := exportSpans(t, tr.config(recv.URL))
			ps, ok := errorsAsPartial(err)
			if !ok || ps.Rejected != 1 || ps.Message != "span too old" || ps.What != "spans" {
				t.Fatalf("error = %v, want a partial success rejecting 1 span", err)
			}
			if n := recv.Exports(); n != 1 {
				t.Errorf("receiver saw %d exports, want 1 (a partial success is not retried)", n)
			}
			wantKept(t, recv)
		})
		t.Run(tr.name+" logs", func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithReplies(testkit.OTLPReply{RejectMessage: "just a warning"}))
			cfg := tr.config(recv.URL)
			cfg.URL = strings.Replace(cfg.URL, "/v1/traces", "/v1/logs", 1)
			exp, err := otlp.NewLogExporter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Shutdown(context.Background())
			err = exp.Export(t.Context(), testRecords(t))
			ps, ok := errorsAsPartial(err)
			if !ok || ps.Rejected != 0 || ps.Message != "just a warning" || ps.What != "log records" {
				t.Fatalf("error = %v, want a partial success with a message only", err)
			}
			if n := len(recv.Logs()); n != 6 {
				t.Errorf("receiver kept %d records, want 6", n)
			}
		})
	}
}

// within fails the test unless f returns within limit: the exporter's
// bounds must hold whatever the collector does.
func within(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("export still running after %v", limit)
		return nil
	}
}

func TestDeadCollectorFailsWithinTheTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cfg := tr.config(testkit.DeadURL(t))
			cfg.Timeout = 500 * time.Millisecond
			exp := newSpanExporter(t, cfg)
			err := within(t, 20*time.Second, func() error { return exp.ExportSpans(context.Background(), testSpans()) })
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("error = %v, want connection refused", err)
			}
		})
	}
}

func TestHungCollector(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name+" timeout", func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithExportDelay(time.Hour))
			cfg := tr.config(recv.URL)
			cfg.Timeout = 300 * time.Millisecond
			exp := newSpanExporter(t, cfg)
			err := within(t, 20*time.Second, func() error { return exp.ExportSpans(context.Background(), testSpans()) })
			if err == nil {
				t.Fatal("export to a hung collector succeeded")
			}
		})
		t.Run(tr.name+" shutdown ends the export", func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithExportDelay(time.Hour))
			cfg := tr.config(recv.URL)
			cfg.Timeout = time.Hour
			exp := newSpanExporter(t, cfg)
			go func() {
				select {
				case <-recv.Arrived():
					_ = exp.Shutdown(context.Background())
				case <-t.Context().Done():
				}
			}()
			err := within(t, 20*time.Second, func() error { return exp.ExportSpans(context.Background(), testSpans()) })
			if !errors.Is(err, otlp.ErrShutdown) {
				t.Fatalf("error = %v, want ErrShutdown", err)
			}
		})
	}
}

func TestExportAfterShutdown(t *testing.T) {
	url := testkit.DeadURL(t)
	spans, err := otlp.NewSpanExporter(otlp.Config{Transport: otlp.GRPC, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	logs, err := otlp.NewLogExporter(otlp.Config{Transport: otlp.HTTP, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	_ = spans.Shutdown(context.Background())
	_ = logs.Shutdown(context.Background())
	if err := spans.ExportSpans(context.Background(), testSpans()); !errors.Is(err, otlp.ErrShutdown) {
		t.Errorf("span export after shutdown = %v, want ErrShutdown", err)
	}
	if err := logs.Export(context.Background(), testRecords(t)); !errors.Is(err, sdklog.ErrExporterShutdown) {
		t.Errorf("log export after shutdown = %v, want sdklog.ErrExporterShutdown", err)
	}
}

func TestTLSEndpoints(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithTLS(cert))
			if !strings.HasPrefix(recv.URL, "https://") {
				t.Fatalf("TLS receiver URL %s", recv.URL)
			}
			cfg := tr.config(recv.URL)
			cfg.TLS = tlsTrusting(cert)
			if err := exportSpans(t, cfg); err != nil {
				t.Fatalf("export over TLS: %v", err)
			}
			wantKept(t, recv)

			// Without the CA (the system roots) the certificate is refused
			// (over gRPC as UNAVAILABLE, retried until the timeout).
			cfg.TLS = nil
			cfg.Timeout = time.Second
			err := exportSpans(t, cfg)
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("export to an untrusted certificate: %v, want a certificate error", err)
			}
		})
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []otlp.Config{
		{Transport: "udp", URL: "http://localhost:4317"},
		{Transport: otlp.GRPC, URL: "localhost:4317"},
		{Transport: otlp.HTTP, URL: "http://"},
		{Transport: otlp.HTTP, URL: "http://[::1"},
	} {
		if _, err := otlp.NewSpanExporter(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

var _ sdktrace.SpanExporter = (*otlp.SpanExporter)(nil)

func tlsTrusting(cert testkit.TLSCert) *tls.Config { return &tls.Config{RootCAs: cert.CAPool} }

func TestRetriesEndAtTheTimeout(t *testing.T) {
	busy := make([]testkit.OTLPReply, 1000)
	for i := range busy {
		busy[i] = testkit.OTLPReply{HTTPStatus: 503, Code: codes.Unavailable}
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithReplies(busy...))
			cfg := tr.config(recv.URL)
			cfg.Timeout = 300 * time.Millisecond
			// The last answer is in the error, whether the deadline came
			// during a wait or cut the last attempt short.
			err := within(t, 20*time.Second, func() error { return exportSpans(t, cfg) })
			if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") && !strings.Contains(err.Error(), "grpc status UNAVAILABLE") {
				t.Fatalf("error = %v, want the last 503 / UNAVAILABLE", err)
			}
			if n := recv.Exports(); n < 2 {
				t.Errorf("receiver saw %d exports, want retries", n)
			}
		})
	}
}
