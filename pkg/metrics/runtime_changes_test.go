package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// The supervisor's rollback counter and restart-limit gauge have no series until used, so
// /metrics of a supervisor that never rolled back or has no restart limit is as before.
func TestRuntimeRollbacksAndRestartLimit(t *testing.T) {
	reg := prometheus.NewRegistry()
	rt := metrics.NewRuntime(reg)
	find := func(name string) *dto.MetricFamily {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == name {
				return f
			}
		}
		return nil
	}
	if find(metrics.FamilyConfigRollbacks) != nil || find(metrics.FamilyRestartLimitReached) != nil {
		t.Fatal("rollback or restart-limit series before any was recorded")
	}
	rt.IncRollbacks("pg", metrics.KindSink)
	rt.IncRollbacks("pg", metrics.KindSink)
	rt.SetRestartLimitReached("pg", metrics.KindSink, true)
	rt.SetRestartLimitReached("gen", metrics.KindSource, false)
	if f := find(metrics.FamilyConfigRollbacks); f == nil || len(f.Metric) != 1 || f.Metric[0].GetCounter().GetValue() != 2 {
		t.Fatalf("rollbacks: %v", f)
	}
	f := find(metrics.FamilyRestartLimitReached)
	if f == nil || len(f.Metric) != 2 {
		t.Fatalf("restart limit: %v", f)
	}
	for _, m := range f.Metric {
		want := 0.0
		if m.GetLabel()[0].GetValue() == "pg" {
			want = 1
		}
		if m.GetGauge().GetValue() != want {
			t.Errorf("restart limit of %v = %v, want %v", m.GetLabel(), m.GetGauge().GetValue(), want)
		}
	}
	rt.Forget("pg", metrics.KindSink)
	if f := find(metrics.FamilyRestartLimitReached); f == nil || len(f.Metric) != 1 {
		t.Fatalf("after Forget: %v", f)
	}
}
