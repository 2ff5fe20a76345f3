package logging_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// BenchmarkHandler compares one info line through slog's own JSON handler
// with the same line through ours: with only a default level, and with
// per-target directives (the record's attributes are then scanned for a
// target).
func BenchmarkHandler(b *testing.B) {
	ours := func(filter string) slog.Handler {
		h, err := logging.NewHandler(io.Discard, logging.Options{Format: "json", Filter: filter})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	cases := []struct {
		name string
		h    slog.Handler
	}{
		{"slog-json", slog.NewJSONHandler(io.Discard, nil)},
		{"level-only", ours("info")},
		{"per-target", ours("info,connector=debug,iggy_connectors::benchmark=off")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			log := slog.New(c.h).With("connector_key", "pg", "connector_type", "sink")
			b.ReportAllocs()
			for b.Loop() {
				log.Info("sink batch processed", "stream", "s", "topic", "t", "batch_size", 100, "total_us", 42)
			}
		})
	}
	b.Run("filtered-out-debug", func(b *testing.B) {
		log := slog.New(ours("info,connector=debug"))
		b.ReportAllocs()
		for b.Loop() {
			log.Debug("per-message detail", "offset", 1)
		}
	})
}
