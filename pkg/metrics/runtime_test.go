package metrics_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

func TestRuntimeGauges(t *testing.T) {
	tests := []struct {
		name                               string
		steps                              func(r *metrics.Runtime)
		srcTotal, srcRun, sinkTot, sinkRun uint32
	}{
		{"fresh set is zero", func(*metrics.Runtime) {}, 0, 0, 0, 0},
		{"totals are set once", func(r *metrics.Runtime) { r.SetTotals(3, 2) }, 3, 0, 2, 0},
		{"running moves per kind", func(r *metrics.Runtime) {
			r.IncRunning(metrics.KindSource)
			r.IncRunning(metrics.KindSource)
			r.IncRunning(metrics.KindSink)
			r.DecRunning(metrics.KindSource)
		}, 0, 1, 0, 1},
		{"running can be set from counted statuses", func(r *metrics.Runtime) { r.SetRunning(4, 5) }, 0, 4, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := metrics.NewRuntime(prometheus.NewRegistry())
			tt.steps(r)
			a, b, c, d := r.Counts()
			if a != tt.srcTotal || b != tt.srcRun || c != tt.sinkTot || d != tt.sinkRun {
				t.Fatalf("Counts = %d %d %d %d, want %d %d %d %d", a, b, c, d, tt.srcTotal, tt.srcRun, tt.sinkTot, tt.sinkRun)
			}
		})
	}
}

func TestRuntimeUpAndRestarts(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := metrics.NewRuntime(reg)
	r.SetUp("pg_main", metrics.KindSink, true)
	r.SetUp("gen", metrics.KindSource, false)
	r.IncRestarts("gen", metrics.KindSource)
	if n := r.IncRestarts("gen", metrics.KindSource); n != 2 {
		t.Errorf("IncRestarts returned %d, want 2", n)
	}
	if got := upValue(t, reg, "pg_main"); got != 1 {
		t.Errorf("up{pg_main} = %v, want 1", got)
	}
	if got := upValue(t, reg, "gen"); got != 0 {
		t.Errorf("up{gen} = %v, want 0", got)
	}
}

// upValue reads the iggy_connector_up series of key back from reg.
func upValue(t *testing.T, reg *prometheus.Registry, key string) float64 {
	t.Helper()
	for _, s := range seriesValues(t, reg, metrics.FamilyConnectorUp) {
		if s.labels[metrics.LabelConnectorKey] == key {
			return s.value
		}
	}
	t.Fatalf("no %s series for %q", metrics.FamilyConnectorUp, key)
	return 0
}

// iggy_connector_state has one series per state for every connector set, 1 for its current state
// and 0 for the others; a state change moves the 1.
func TestRuntimeStateGauge(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := metrics.NewRuntime(reg)
	r.SetState("pg", metrics.KindSink, metrics.StatusRunning)
	r.SetState("pg", metrics.KindSink, metrics.StatusPaused)
	r.SetState("gen", metrics.KindSource, metrics.StatusStopped)
	want := map[string]string{"pg": metrics.StatusPaused, "gen": metrics.StatusStopped}
	seen := map[string]int{}
	for _, s := range seriesValues(t, reg, metrics.FamilyConnectorState) {
		key, state := s.labels[metrics.LabelConnectorKey], s.labels[metrics.LabelState]
		seen[key]++
		if w := map[bool]float64{true: 1, false: 0}[state == want[key]]; s.value != w {
			t.Errorf("%s state=%q = %v, want %v", key, state, s.value, w)
		}
	}
	for key := range want {
		if seen[key] != len(metrics.ConnectorStates) {
			t.Errorf("%s has %d state series, want %d", key, seen[key], len(metrics.ConnectorStates))
		}
	}
}

// Forget drops a gone connector's up and state series and leaves the others.
func TestRuntimeForget(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := metrics.NewRuntime(reg)
	for _, key := range []string{"a", "b"} {
		r.SetUp(key, "sink", true)
		r.SetState(key, "sink", metrics.StatusRunning)
	}
	r.Forget("a", "sink")
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for _, f := range families {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == metrics.LabelConnectorKey {
					keys[l.GetValue()]++
				}
			}
		}
	}
	if keys["a"] != 0 || keys["b"] == 0 {
		t.Fatalf("series per connector key after Forget(a) = %v", keys)
	}
}
