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

func TestSumReplicasAddsDroppedCounts(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	a := metrics.ConnectorStats{Key: "pg", ConnectorType: "sink", TapDropped: u(5), LogLinesDropped: u(1)}
	b := metrics.ConnectorStats{Key: "pg", ConnectorType: "sink", TapDropped: u(2)}
	c := metrics.ConnectorStats{Key: "pg", ConnectorType: "sink"}
	got := metrics.SumReplicas([]metrics.ConnectorStats{c, a, b})
	if got.TapDropped == nil || *got.TapDropped != 7 || got.LogLinesDropped == nil || *got.LogLinesDropped != 1 {
		t.Fatalf("SumReplicas tap_dropped %v, log_lines_dropped %v; want 7 and 1", got.TapDropped, got.LogLinesDropped)
	}
	if got := metrics.SumReplicas([]metrics.ConnectorStats{c, c}); got.TapDropped != nil {
		t.Fatalf("no replica dropped anything, yet tap_dropped = %d", *got.TapDropped)
	}
}

func TestTapDroppedInStatsAndFamilies(t *testing.T) {
	c := metrics.NewConnector(nil, "pg", metrics.KindSink)
	if s := c.Snapshot(); s.TapDropped != nil {
		t.Fatalf("tap_dropped before any drop: %d", *s.TapDropped)
	}
	c.AddTapDropped(3)
	c.AddTapDropped(4)
	if s := c.Snapshot(); s.TapDropped == nil || *s.TapDropped != 7 {
		t.Fatalf("tap_dropped = %v, want 7", s.TapDropped)
	}
	for _, f := range c.Families() {
		if f.GetName() == metrics.FamilyTapDropped {
			if v := f.Metric[0].GetCounter().GetValue(); v != 7 {
				t.Fatalf("%s = %v, want 7", metrics.FamilyTapDropped, v)
			}
			return
		}
	}
	t.Fatalf("no %s family", metrics.FamilyTapDropped)
}
