package otlp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Transports.
const (
	GRPC = "grpc"
	HTTP = "http" // OTLP/HTTP with protobuf bodies
)

// Config is where and how one exporter sends.
type Config struct {
	Transport string // GRPC or HTTP
	// URL is, for HTTP, the full URL requests are posted to (e.g.
	// http://collector:4318/v1/traces); for gRPC, the collector's
	// http:// (plain-text HTTP/2) or https:// URL, whose path is ignored.
	URL string
	// Timeout bounds one export, retries included (none when 0).
	Timeout time.Duration
	Retry   Retry
	// TLS configures https:// connections; nil verifies against the system
	// roots.
	TLS *tls.Config
	// Headers are sent with every request (over gRPC as call metadata).
	Headers map[string]string
	// Compression is Gzip or "" (none).
	Compression string
}

// Gzip is the one compression OTLP exporters support.
const Gzip = "gzip"

// sender makes one export attempt with an encoded request.
type sender interface {
	// prefixLen is how many bytes of room finish needs before the message.
	prefixLen() int
	// finish turns an encoded request (after prefixLen bytes of room) into
	// the body send posts: compressed if configured, framed for gRPC.
	finish(body []byte) ([]byte, error)
	send(ctx context.Context, body []byte) error
	close()
}

// exporter is what the span and log exporters share: the sender, the export
// bounds and the shutdown state.
type exporter struct {
	signal  string // "traces" or "logs", for errors
	url     string
	send    sender
	timeout time.Duration
	retry   Retry

	stopped context.Context // done once Shutdown was called
	stop    context.CancelFunc

	sizeHint atomic.Int64 // the last request's size, to size the next buffer
}

func newExporter(cfg Config, signal, what, grpcPath string) (*exporter, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("otlp %s endpoint %q: %w", signal, cfg.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otlp %s endpoint %q: must be an http:// or https:// URL with a host", signal, cfg.URL)
	}
	if cfg.Compression != "" && cfg.Compression != Gzip {
		return nil, fmt.Errorf("otlp %s compression %q: must be %q or none", signal, cfg.Compression, Gzip)
	}
	gzip := cfg.Compression == Gzip
	var s sender
	switch cfg.Transport {
	case HTTP:
		s = newHTTPSender((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), what, cfg.TLS, cfg.Headers, gzip)
	case GRPC:
		s = newGRPCSender(u.Scheme, u.Host, grpcPath, what, cfg.TLS, cfg.Headers, gzip)
	default:
		return nil, fmt.Errorf("otlp %s transport %q: must be %q or %q", signal, cfg.Transport, GRPC, HTTP)
	}
	stopped, stop := context.WithCancel(context.Background())
	e := &exporter{signal: signal, url: cfg.URL, send: s, timeout: cfg.Timeout, retry: cfg.Retry, stopped: stopped, stop: stop}
	e.sizeHint.Store(4096)
	return e, nil
}

// export encodes a request with appendRequest and sends it, retrying within
// the bounds. Shutdown ends an export in flight.
func (e *exporter) export(ctx context.Context, appendRequest func([]byte) []byte) error {
	if e.stopped.Err() != nil {
		return ErrShutdown
	}
	prefix := e.send.prefixLen()
	body := appendRequest(make([]byte, prefix, prefix+int(e.sizeHint.Load())))
	e.sizeHint.Store(int64(len(body)))
	body, err := e.send.finish(body)
	if err != nil {
		return fmt.Errorf("otlp %s export: %w", e.signal, err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.stopped, cancel)()
	if e.timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, e.timeout, errors.New("otlp export timeout"))
		defer cancelTimeout()
	}
	err = e.retry.do(ctx, func(ctx context.Context) error { return e.send.send(ctx, body) })
	if err != nil {
		if e.stopped.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrShutdown, err)
		}
		return fmt.Errorf("otlp %s export to %s: %w", e.signal, e.url, err)
	}
	return nil
}

func (e *exporter) shutdown(ctx context.Context) error {
	e.stop()
	e.send.close()
	return ctx.Err()
}

// SpanExporter sends spans to an OTLP collector; it implements
// sdktrace.SpanExporter.
type SpanExporter struct{ e *exporter }

// NewSpanExporter makes a span exporter. Nothing is dialled until the first
// export.
func NewSpanExporter(cfg Config) (*SpanExporter, error) {
	e, err := newExporter(cfg, "traces", "spans", traceExportPath)
	if err != nil {
		return nil, err
	}
	return &SpanExporter{e: e}, nil
}

// ExportSpans sends spans as one ExportTraceServiceRequest.
func (x *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return x.e.export(ctx, func(b []byte) []byte { return AppendTraceRequest(b, spans) })
}

// Shutdown ends an export in flight and makes later ones fail with
// ErrShutdown.
func (x *SpanExporter) Shutdown(ctx context.Context) error { return x.e.shutdown(ctx) }

// LogExporter sends log records to an OTLP collector; it implements
// sdklog.Exporter.
type LogExporter struct{ e *exporter }

// NewLogExporter makes a log exporter. Nothing is dialled until the first
// export.
func NewLogExporter(cfg Config) (*LogExporter, error) {
	e, err := newExporter(cfg, "logs", "log records", logsExportPath)
	if err != nil {
		return nil, err
	}
	return &LogExporter{e: e}, nil
}

// Export sends records as one ExportLogsServiceRequest.
func (x *LogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	if x.e.stopped.Err() != nil {
		return sdklog.ErrExporterShutdown
	}
	if len(records) == 0 {
		return nil
	}
	return x.e.export(ctx, func(b []byte) []byte { return AppendLogsRequest(b, records) })
}

// Shutdown ends an export in flight and makes later ones fail with
// sdklog.ErrExporterShutdown.
func (x *LogExporter) Shutdown(ctx context.Context) error { return x.e.shutdown(ctx) }

// ForceFlush does nothing: the exporter holds no records between exports.
func (x *LogExporter) ForceFlush(context.Context) error { return nil }

var (
	_ sdktrace.SpanExporter = (*SpanExporter)(nil)
	_ sdklog.Exporter       = (*LogExporter)(nil)
)
