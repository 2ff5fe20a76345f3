package telemetry

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// Span names: one parent span per batch, one child per stage, the children
// named as the stage label of the duration histogram (docs/pipeline.md §6).
const (
	SpanSinkBatch   = "sink batch"
	SpanSourceBatch = "source batch"
)

// BenchmarkMessage is the message of the per-batch benchmark event; its
// target is logging.TargetBenchmark.
const BenchmarkMessage = "benchmark"

// SinkBatch is what a sink pump measured for one polled batch.
type SinkBatch struct {
	Start          time.Time // when processing began (after polling)
	Stream, Topic  string
	PartitionID    uint32
	CurrentOffset  uint64
	BatchSize      int // messages taken from the consumer
	ProcessedCount int // messages handed to the plugin
	// Stage durations: Decode and Prepare (transforms, encoding) are
	// interleaved per message; FFI is the consume call alone.
	Decode, Prepare, FFI time.Duration
	Total                time.Duration
	Err                  error // the batch failed (consume gave up)
}

// SourceBatch is what a source pump measured for one produced batch.
type SourceBatch struct {
	Start         time.Time // when the batch was taken off the queue
	Stream, Topic string
	BatchSize     int // messages the plugin produced
	SentCount     int // messages sent to Iggy (0 on failure)
	// Stage durations, in pipeline order.
	Decode, Prepare, IggySend time.Duration
	StateSaved                bool
	StateSave                 time.Duration // 0 unless StateSaved
	Total                     time.Duration
	Err                       error // the batch was rejected (NACK)
}

// Reporter reports one connector's finished batches: a span tree when
// telemetry is enabled, the benchmark event when benchmark mode is on. With
// both off a report costs two branches. Safe for concurrent use.
type Reporter struct {
	tracer    trace.Tracer // nil when telemetry is disabled
	log       *slog.Logger
	benchmark bool
}

// Reporter returns the batch reporter of a connector. log is the connector's
// logger: it must already carry connector_key and connector_type, which the
// benchmark event shows (a runner's logger does). t may be nil.
func (t *Telemetry) Reporter(log *slog.Logger, benchmark bool) *Reporter {
	r := &Reporter{log: log, benchmark: benchmark}
	if t.Enabled() {
		r.tracer = t.tracer
	}
	return r
}

// BenchmarkStarted logs the one info line benchmark mode starts with.
func (r *Reporter) BenchmarkStarted() {
	if r.benchmark {
		r.log.Info("benchmark mode enabled: per-batch events on target "+logging.TargetBenchmark, slog.String(logging.KeyTarget, logging.TargetBenchmark))
	}
}

// Sink reports a finished sink batch. ctx is the parent of the batch span (a
// plain context.Background() starts a new trace per batch).
func (r *Reporter) Sink(ctx context.Context, b SinkBatch) {
	if r.tracer != nil {
		r.traceSink(ctx, b)
	}
	if r.benchmark {
		LogSinkBenchmark(r.log, b)
	}
}

// Source reports a finished source batch.
func (r *Reporter) Source(ctx context.Context, b SourceBatch) {
	if r.tracer != nil {
		r.traceSource(ctx, b)
	}
	if r.benchmark {
		LogSourceBenchmark(r.log, b)
	}
}

// The stage spans are recorded when the batch is done, laid end to end from
// its start in pipeline order, each as long as its measured duration. The
// pumps then need no context threading and no work at all when telemetry is
// off. The sink's decode and prepare work is interleaved per message in
// reality; their spans show the summed durations.

func (r *Reporter) traceSink(ctx context.Context, b SinkBatch) {
	_, parent, layout := r.startParent(ctx, SpanSinkBatch, trace.SpanKindConsumer, b.Start, b.Err,
		attribute.String("stream", b.Stream),
		attribute.String("topic", b.Topic),
		attribute.Int64("partition_id", int64(b.PartitionID)),
		attribute.Int64("current_offset", int64(b.CurrentOffset)),
		attribute.Int("batch_size", b.BatchSize),
		attribute.Int("processed_count", b.ProcessedCount),
	)
	if b.Err == nil {
		layout.stage(metrics.StageDecode, b.Decode)
		layout.stage(metrics.StagePrepare, b.Prepare)
		layout.stage(metrics.StageFFI, b.FFI)
	}
	parent.End(trace.WithTimestamp(b.Start.Add(b.Total)))
}

func (r *Reporter) traceSource(ctx context.Context, b SourceBatch) {
	_, parent, layout := r.startParent(ctx, SpanSourceBatch, trace.SpanKindProducer, b.Start, b.Err,
		attribute.String("stream", b.Stream),
		attribute.String("topic", b.Topic),
		attribute.Int("batch_size", b.BatchSize),
		attribute.Int("sent_count", b.SentCount),
		attribute.Bool("state_saved", b.StateSaved),
	)
	layout.stage(metrics.StageDecode, b.Decode)
	layout.stage(metrics.StagePrepare, b.Prepare)
	layout.stage(metrics.StageIggySend, b.IggySend)
	if b.StateSaved {
		layout.stage(metrics.StageStateSave, b.StateSave)
	}
	parent.End(trace.WithTimestamp(b.Start.Add(b.Total)))
}

func (r *Reporter) startParent(ctx context.Context, name string, kind trace.SpanKind, start time.Time, err error, attrs ...attribute.KeyValue) (context.Context, trace.Span, stageLayout) {
	if start.IsZero() {
		start = time.Now()
	}
	ctx, span := r.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return ctx, span, stageLayout{ctx: ctx, tracer: r.tracer, at: start}
}

// stageLayout places child spans one after another.
type stageLayout struct {
	ctx    context.Context
	tracer trace.Tracer
	at     time.Time
}

func (l *stageLayout) stage(name string, d time.Duration) {
	_, s := l.tracer.Start(l.ctx, name, trace.WithTimestamp(l.at))
	l.at = l.at.Add(d)
	s.End(trace.WithTimestamp(l.at))
}

// LogSinkBenchmark logs the sink benchmark event of docs/pipeline.md §6 on log
// (which carries connector_key and connector_type). As upstream, a failed
// batch reports 0 for processed_count and the stage times; total_us stays.
func LogSinkBenchmark(log *slog.Logger, b SinkBatch) {
	processed, decode, prepare, ffi := b.ProcessedCount, b.Decode, b.Prepare, b.FFI
	if b.Err != nil {
		processed, decode, prepare, ffi = 0, 0, 0, 0
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, BenchmarkMessage,
		slog.String(logging.KeyTarget, logging.TargetBenchmark),
		slog.String("stream", b.Stream),
		slog.String("topic", b.Topic),
		slog.Uint64("partition_id", uint64(b.PartitionID)),
		slog.Uint64("current_offset", b.CurrentOffset),
		slog.Int("batch_size", b.BatchSize),
		slog.Int("processed_count", processed),
		slog.Int64("decode_us", decode.Microseconds()),
		slog.Int64("prepare_us", prepare.Microseconds()),
		slog.Int64("ffi_us", ffi.Microseconds()),
		slog.Int64("total_us", b.Total.Microseconds()),
	)
}

// LogSourceBenchmark logs the source benchmark event of docs/pipeline.md §6.
// sent_count is 0 on failure and state_save_us 0 unless the state was saved.
func LogSourceBenchmark(log *slog.Logger, b SourceBatch) {
	sent, stateSave := b.SentCount, b.StateSave
	if b.Err != nil {
		sent = 0
	}
	if !b.StateSaved {
		stateSave = 0
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, BenchmarkMessage,
		slog.String(logging.KeyTarget, logging.TargetBenchmark),
		slog.String("stream", b.Stream),
		slog.String("topic", b.Topic),
		slog.Int("batch_size", b.BatchSize),
		slog.Int("sent_count", sent),
		slog.Int64("decode_us", b.Decode.Microseconds()),
		slog.Int64("prepare_us", b.Prepare.Microseconds()),
		slog.Int64("iggy_send_us", b.IggySend.Microseconds()),
		slog.Bool("state_saved", b.StateSaved),
		slog.Int64("state_save_us", stateSave.Microseconds()),
		slog.Int64("total_us", b.Total.Microseconds()),
	)
}
