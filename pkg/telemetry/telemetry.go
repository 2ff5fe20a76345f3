package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/otlp"
)

// Transports of [telemetry.logs] and [telemetry.traces].
const (
	TransportGRPC = otlp.GRPC
	TransportHTTP = otlp.HTTP // OTLP/HTTP with protobuf bodies
)

// Resource attribute keys. service.name, service.version and process.pid are
// OpenTelemetry's semantic conventions; the connector keys are ours.
const (
	AttrServiceName    = "service.name"
	AttrServiceVersion = "service.version"
	AttrProcessPID     = "process.pid"
	AttrConnectorKey   = "iggy.connector.key"
	AttrConnectorType  = "iggy.connector.type"
)

// ScopeName is the instrumentation scope of our tracer and log bridge.
const ScopeName = "github.com/iggy-connectors-go/runtime"

// Bounds that keep a dead or slow collector away from the data path: spans
// and log records wait in bounded queues and are dropped when those are
// full; exports run on the processors' own goroutines.
const (
	QueueSize       = 2048
	ExportBatchSize = 512
	ExportInterval  = time.Second
	ExportTimeout   = 5 * time.Second
	// ShutdownTimeout bounds Shutdown whatever the caller's context allows.
	ShutdownTimeout = 5 * time.Second
)

// ErrInvalidConfig is returned by Setup for a bad [telemetry] section.
var ErrInvalidConfig = errors.New("invalid telemetry configuration")

// Resource describes the process the telemetry comes from.
type Resource struct {
	// ServiceName overrides telemetry.service_name when set.
	ServiceName    string
	ServiceVersion string
	// ConnectorKey and ConnectorKind ("sink" or "source") name a runner's
	// connector; the supervisor leaves them empty.
	ConnectorKey  string
	ConnectorKind string
	// PID is the process id; 0 means this process.
	PID int
	// Attributes are added as they are.
	Attributes []attribute.KeyValue
}

// Telemetry holds the process's tracer and logger providers. With telemetry
// disabled both are no-ops and LogHandler is nil. A nil *Telemetry behaves
// as a disabled one.
type Telemetry struct {
	tracerProvider trace.TracerProvider
	loggerProvider otellog.LoggerProvider
	tracer         trace.Tracer
	logHandler     slog.Handler
	shutdowns      []func(context.Context) error
	shutdownOnce   sync.Once
	shutdownErr    error
}

// Setup builds the OTLP exporters and providers cfg asks for. Nothing is
// dialled yet: an unreachable endpoint shows up later as export errors
// (reported on the error logger, see SetErrorLogger), never as a failure here
// or a delay on the data path.
func Setup(ctx context.Context, cfg config.Telemetry, res Resource) (*Telemetry, error) {
	if !cfg.Enabled {
		return disabled(), nil
	}
	if err := validate(cfg); err != nil {
		return nil, err
	}
	installErrorHandler()
	r := res.build(cfg.ServiceName)

	spanExp, err := newSpanExporter(cfg.Traces)
	if err != nil {
		return nil, fmt.Errorf("telemetry traces exporter (%s %s): %w", cfg.Traces.Transport, cfg.Traces.Endpoint, err)
	}
	logExp, err := newLogExporter(cfg.Logs)
	if err != nil {
		_ = spanExp.Shutdown(ctx)
		return nil, fmt.Errorf("telemetry logs exporter (%s %s): %w", cfg.Logs.Transport, cfg.Logs.Endpoint, err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(r),
		sdktrace.WithBatcher(spanExp,
			sdktrace.WithMaxQueueSize(QueueSize),
			sdktrace.WithMaxExportBatchSize(ExportBatchSize),
			sdktrace.WithBatchTimeout(ExportInterval),
			sdktrace.WithExportTimeout(ExportTimeout),
		),
	)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(r),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(logExp,
			sdklog.WithMaxQueueSize(QueueSize),
			sdklog.WithExportMaxBatchSize(ExportBatchSize),
			sdklog.WithExportInterval(ExportInterval),
			sdklog.WithExportTimeout(ExportTimeout),
		)),
	)
	return &Telemetry{
		tracerProvider: tp,
		loggerProvider: lp,
		tracer:         tp.Tracer(ScopeName),
		logHandler:     otelslog.NewHandler(ScopeName, otelslog.WithLoggerProvider(lp)),
		shutdowns:      []func(context.Context) error{tp.Shutdown, lp.Shutdown},
	}, nil
}

func disabled() *Telemetry {
	tp := tracenoop.NewTracerProvider()
	return &Telemetry{tracerProvider: tp, loggerProvider: lognoop.NewLoggerProvider(), tracer: tp.Tracer(ScopeName)}
}

// Enabled reports whether anything is exported.
func (t *Telemetry) Enabled() bool { return t != nil && t.logHandler != nil }

// TracerProvider is the provider spans are exported through (a no-op one
// when disabled).
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.tracerProvider
}

// LoggerProvider is the provider log records are exported through (a no-op
// one when disabled).
func (t *Telemetry) LoggerProvider() otellog.LoggerProvider {
	if t == nil {
		return lognoop.NewLoggerProvider()
	}
	return t.loggerProvider
}

// LogHandler is the slog bridge into LoggerProvider, nil when disabled. Hand
// it to logging.Options.Also so exported records pass the same RUST_LOG
// filter as the printed ones.
func (t *Telemetry) LogHandler() slog.Handler {
	if t == nil {
		return nil
	}
	return t.logHandler
}

// Shutdown flushes what is queued and stops the exporters, waiting at most
// ShutdownTimeout (less if ctx ends first). Later calls return the first
// call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.shutdownOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
		defer cancel()
		errs := make([]error, len(t.shutdowns))
		var wg sync.WaitGroup
		for i, stop := range t.shutdowns {
			wg.Go(func() { errs[i] = stop(ctx) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.shutdownErr = fmt.Errorf("telemetry shutdown: %w", err)
		}
	})
	return t.shutdownErr
}

func validate(cfg config.Telemetry) error {
	var errs []error
	for _, e := range []struct {
		key string
		exp config.OTLPExporter
	}{{"telemetry.traces", cfg.Traces}, {"telemetry.logs", cfg.Logs}} {
		if e.exp.Transport != TransportGRPC && e.exp.Transport != TransportHTTP {
			errs = append(errs, fmt.Errorf("%w: %s.transport %q: must be %q or %q", ErrInvalidConfig, e.key, e.exp.Transport, TransportGRPC, TransportHTTP))
		}
		if _, err := parseEndpoint(e.exp.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s.endpoint %q: %w", ErrInvalidConfig, e.key, e.exp.Endpoint, err))
		}
	}
	return errors.Join(errs...)
}

// parseEndpoint accepts an absolute http or https URL with a host.
func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("must be an http:// or https:// URL")
	}
	if u.Host == "" {
		return nil, errors.New("has no host")
	}
	return u, nil
}

// signalURL is the OTLP/HTTP URL of one signal: the endpoint as given when
// it has a path, else the endpoint with the standard signal path.
func signalURL(endpoint, signalPath string) string {
	u, _ := parseEndpoint(endpoint)
	if strings.Trim(u.Path, "/") == "" {
		u.Path = signalPath
	}
	return u.String()
}

// exporterConfig is the otlp configuration of one signal: for HTTP the
// signal URL, for gRPC the endpoint (its path is not used); headers,
// compression and certificates from the OTEL_EXPORTER_OTLP_* variables.
func exporterConfig(e config.OTLPExporter, signal, signalPath string) (otlp.Config, error) {
	u := e.Endpoint
	if e.Transport == TransportHTTP {
		u = signalURL(e.Endpoint, signalPath)
	}
	cfg := otlp.Config{Transport: e.Transport, URL: u, Timeout: ExportTimeout, Retry: retry}
	if err := otlp.ApplyEnv(&cfg, signal, os.Getenv); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return cfg, nil
}

func newSpanExporter(e config.OTLPExporter) (sdktrace.SpanExporter, error) {
	cfg, err := exporterConfig(e, "traces", "/v1/traces")
	if err != nil {
		return nil, err
	}
	return otlp.NewSpanExporter(cfg)
}

func newLogExporter(e config.OTLPExporter) (sdklog.Exporter, error) {
	cfg, err := exporterConfig(e, "logs", "/v1/logs")
	if err != nil {
		return nil, err
	}
	return otlp.NewLogExporter(cfg)
}

// retry gives up on one export batch after 15 s, so a collector outage costs
// a few dropped batches instead of a queue that never drains (in practice
// ExportTimeout ends an export first).
var retry = otlp.Retry{
	Enabled:         true,
	InitialInterval: 500 * time.Millisecond,
	MaxInterval:     5 * time.Second,
	MaxElapsedTime:  15 * time.Second,
}

func (res Resource) build(configured string) *resource.Resource {
	name := res.ServiceName
	if name == "" {
		name = configured
	}
	if name == "" {
		name = config.DefaultRuntime().Telemetry.ServiceName
	}
	pid := res.PID
	if pid == 0 {
		pid = os.Getpid()
	}
	attrs := []attribute.KeyValue{attribute.String(AttrServiceName, name), attribute.Int(AttrProcessPID, pid)}
	if res.ServiceVersion != "" {
		attrs = append(attrs, attribute.String(AttrServiceVersion, res.ServiceVersion))
	}
	if res.ConnectorKey != "" {
		attrs = append(attrs, attribute.String(AttrConnectorKey, res.ConnectorKey))
	}
	if res.ConnectorKind != "" {
		attrs = append(attrs, attribute.String(AttrConnectorType, res.ConnectorKind))
	}
	attrs = append(attrs, res.Attributes...)
	return resource.NewSchemaless(attrs...)
}

// Export errors (a dead collector) reach OpenTelemetry's global error
// handler. It is set once per process to log them at warn level, at most one
// line per errorInterval, on the logger given to SetErrorLogger.
const errorInterval = time.Minute

var (
	errorHandlerOnce sync.Once
	errorLog         = &errorReporter{}
)

type errorReporter struct {
	mu         sync.Mutex
	log        *slog.Logger
	last       time.Time
	suppressed int
}

func installErrorHandler() {
	errorHandlerOnce.Do(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(errorLog.report)) })
}

// SetErrorLogger sets where export errors are reported (slog.Default until
// then). Call it once the process logger exists.
func (t *Telemetry) SetErrorLogger(log *slog.Logger) {
	errorLog.mu.Lock()
	errorLog.log = log
	errorLog.mu.Unlock()
}

func (r *errorReporter) report(err error) {
	r.mu.Lock()
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < errorInterval {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	log, suppressed := r.log, r.suppressed
	r.last, r.suppressed = now, 0
	r.mu.Unlock()
	if log == nil {
		log = slog.Default()
	}
	log.Warn("telemetry export failed; telemetry is dropped while the collector is unreachable",
		"error", err, "errors_since_last_report", suppressed)
}
