package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// collectorCases are the collectors the data path is measured against:
// none (telemetry disabled), a live one, a dead one and one that takes a
// second per export.
func collectorCases(b *testing.B) []struct {
	name string
	cfg  config.Telemetry
} {
	grpcLive := testkit.StartOTLPGRPCReceiver(b).URL
	grpcSlow := testkit.StartOTLPGRPCReceiver(b, testkit.WithExportDelay(time.Second)).URL
	httpLive := testkit.StartOTLPReceiver(b).URL
	httpSlow := testkit.StartOTLPReceiver(b, testkit.WithExportDelay(time.Second)).URL
	dead := testkit.DeadURL(b)
	return []struct {
		name string
		cfg  config.Telemetry
	}{
		{"disabled", config.DefaultRuntime().Telemetry},
		{"grpc-live", enabledConfig("bench", "grpc", grpcLive, "grpc", grpcLive)},
		{"grpc-dead", enabledConfig("bench", "grpc", dead, "grpc", dead)},
		{"grpc-slow", enabledConfig("bench", "grpc", grpcSlow, "grpc", grpcSlow)},
		{"http-live", enabledConfig("bench", "http", httpLive, "http", httpLive)},
		{"http-dead", enabledConfig("bench", "http", dead, "http", dead)},
		{"http-slow", enabledConfig("bench", "http", httpSlow, "http", httpSlow)},
	}
}

// BenchmarkReportSinkBatch is the per-batch cost the pump pays for tracing:
// one batch span and three stage spans queued for export. Against a dead or
// slow collector it must stay near the live figure (spans are dropped when
// the bounded queue is full, never waited for).
func BenchmarkReportSinkBatch(b *testing.B) {
	for _, c := range collectorCases(b) {
		b.Run(c.name, func(b *testing.B) {
			tel, err := telemetry.Setup(context.Background(), c.cfg, telemetry.Resource{ConnectorKey: "bench", ConnectorKind: "sink"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { shutdownQuickly(tel) })
			tel.SetErrorLogger(slog.New(slog.DiscardHandler))
			rep := tel.Reporter(slog.New(slog.DiscardHandler), false)
			batch := telemetry.SinkBatch{Start: time.Now(), Stream: "s", Topic: "t", PartitionID: 1, CurrentOffset: 100, BatchSize: 100, ProcessedCount: 100,
				Decode: 30 * time.Microsecond, Prepare: 20 * time.Microsecond, FFI: 50 * time.Microsecond, Total: 110 * time.Microsecond}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rep.Sink(ctx, batch)
			}
		})
	}
}

// BenchmarkLogLine is the cost of one info line through the process logger
// (JSON to a discarded writer) with its records also bridged to OTLP.
func BenchmarkLogLine(b *testing.B) {
	for _, c := range collectorCases(b) {
		b.Run(c.name, func(b *testing.B) {
			tel, err := telemetry.Setup(context.Background(), c.cfg, telemetry.Resource{ConnectorKey: "bench", ConnectorKind: "sink"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { shutdownQuickly(tel) })
			tel.SetErrorLogger(slog.New(slog.DiscardHandler))
			h, err := logging.NewHandler(io.Discard, logging.Options{Format: "json", Also: []slog.Handler{tel.LogHandler()},
				Attrs: []slog.Attr{slog.String("connector_key", "bench")}})
			if err != nil {
				b.Fatal(err)
			}
			log := slog.New(h)
			b.ReportAllocs()
			for b.Loop() {
				log.Info("sink batch processed", "stream", "s", "topic", "t", "batch_size", 100)
			}
		})
	}
}

// shutdownQuickly stops the exporters without waiting out a dead collector.
func shutdownQuickly(tel *telemetry.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = tel.Shutdown(ctx)
}
