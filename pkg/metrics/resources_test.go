package metrics_test

import (
	"os"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// TestResourcesFamilies reads this test process's real figures through the collector: one memory
// gauge and one CPU counter per connector the read function returns, labelled by key and kind.
func TestResourcesFamilies(t *testing.T) {
	self, err := metrics.ReadProcess(int32(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	live := []metrics.ConnectorProcess{{Key: "pg", Kind: metrics.KindSink, Process: self}}
	if err := metrics.RegisterResources(reg, func() []metrics.ConnectorProcess { return live }); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != 2 || m.GetLabel()[0].GetValue() != "pg" || m.GetLabel()[1].GetValue() != "sink" {
				t.Errorf("%s: labels %v", f.GetName(), m.GetLabel())
			}
			got[f.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	if got[metrics.FamilyConnectorMemory] != float64(self.RSS) || self.RSS == 0 {
		t.Errorf("memory = %v, want the process RSS %d", got[metrics.FamilyConnectorMemory], self.RSS)
	}
	if _, ok := got[metrics.FamilyConnectorCPU]; !ok {
		t.Errorf("no %s family in %v", metrics.FamilyConnectorCPU, got)
	}
	live = nil // no live process: no series
	if families, _ = reg.Gather(); len(families) != 0 {
		t.Errorf("families without live processes: %v", families)
	}
	if err := metrics.RegisterResources(reg, func() []metrics.ConnectorProcess { return nil }); err == nil {
		t.Error("registering the families twice in one registry must fail")
	}
}
