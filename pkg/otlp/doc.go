// Package otlp exports spans and log records to an OpenTelemetry collector
// over OTLP, gRPC or HTTP/protobuf, without the OpenTelemetry exporter
// modules: those link google.golang.org/grpc, the generated OTLP protobuf
// types and grpc-gateway, about 3 MiB of resident memory in the supervisor
// and 1 MiB in a runner (Go runs every linked package's init; see
// supervisor/README.md). Here the requests are encoded by hand with protowire
// and sent with net/http (its HTTP/2 client for gRPC).
//
//   - exporter.go: SpanExporter (sdktrace.SpanExporter) and LogExporter
//     (sdklog.Exporter) over one shared core: encode, send with retries
//     within Config.Timeout, Shutdown ending an export in flight.
//   - wire.go: protobuf field helpers and the common messages (AnyValue,
//     KeyValue, Resource, InstrumentationScope).
//   - traces.go, logs.go: ExportTraceServiceRequest and
//     ExportLogsServiceRequest from SDK spans and records, the fields set as
//     the SDK's own OTLP exporters set them (the equivalence tests decode
//     both with the generated types and compare).
//   - http.go: OTLP/HTTP: POST to the signal URL, application/x-protobuf;
//     429/502/503/504 and temporary network errors retried. Also what both
//     senders share: the transport and the poster (URL, headers, client).
//   - grpc.go: OTLP/gRPC as a unary call over HTTP/2 (h2c for http://, TLS
//     for https://): length-prefixed message, grpc-status and grpc-message
//     from the trailers (or the headers of a trailers-only reply), retryable
//     codes as the OTLP specification lists them, RetryInfo honoured.
//   - retry.go: exponential backoff with jitter (pkg/backoff), bounded by the export
//     deadline and Retry.MaxElapsedTime.
//   - response.go: partial-success replies (PartialSuccessError) and
//     bounded reading of replies.
//   - env.go: ApplyEnv, the OTEL_EXPORTER_OTLP_* variables the OpenTelemetry
//     exporters honour besides endpoint and timeout: headers, gzip
//     compression, CA and client certificates.
package otlp
