// Package telemetry exports a process's logs and traces over OpenTelemetry
// (OTLP over gRPC or HTTP/protobuf, per [telemetry] in the runtime config)
// and reports each finished batch of a connector.
//
//   - The exporters are pkg/otlp's, not the OpenTelemetry OTLP exporter
//     modules (which link gRPC and cost the supervisor about 3 MiB of memory);
//     the OTEL_EXPORTER_OTLP_* headers, compression and certificate
//     variables apply as they did.
//   - Setup builds the tracer and logger providers with a resource naming the
//     service, the connector (iggy.connector.key, iggy.connector.type) and the
//     process (process.pid). Disabled telemetry gives no-op providers.
//     LogHandler is the slog bridge (otelslog) to pass to
//     logging.Options.Also; Shutdown flushes within a bound.
//   - Spans and log records go through batch processors with bounded queues:
//     a dead or slow collector drops telemetry, it never blocks or slows the
//     data path (see the benchmarks). Export errors are logged, rate-limited,
//     on the logger given to SetErrorLogger.
//   - Reporter takes a pump's measurements of one batch (SinkBatch,
//     SourceBatch) and records a "sink batch" or "source batch" span with one
//     child span per stage (decode, prepare, ffi or iggy_send, state_save; the
//     stage names of the duration histogram), and, in benchmark mode, the
//     per-batch "benchmark" event of docs/pipeline.md §6 on target
//     iggy_connectors::benchmark. The stage histograms themselves stay with
//     pkg/metrics, recorded always.
package telemetry
