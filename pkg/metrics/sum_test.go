package metrics_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

func TestSumReplicas(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	a := metrics.ConnectorStats{Key: "pg", ConnectorType: "sink", MessagesConsumed: u(3), MessagesProcessed: u(2), Errors: 1, MemoryUsage: 10, CPUUsage: 1.5}
	b := metrics.ConnectorStats{Key: "pg", ConnectorType: "sink", MessagesConsumed: u(4), Lag: u(7), Errors: 2, MemoryUsage: 5, CPUUsage: 0.5}
	got := metrics.SumReplicas([]metrics.ConnectorStats{a, b})
	if got.Key != "pg" || *got.MessagesConsumed != 7 || *got.MessagesProcessed != 2 || *got.Lag != 7 || got.Errors != 3 ||
		got.MemoryUsage != 15 || got.CPUUsage != 2 || got.MessagesProduced != nil {
		t.Fatalf("SumReplicas = %+v", got)
	}
	if *a.MessagesConsumed != 3 {
		t.Fatal("SumReplicas changed its input")
	}
}
