package supervisor

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// sinkFamilies is what a runner of sink key exposes after processing n messages with e errors.
func sinkFamilies(key string, n, e uint64) []*dto.MetricFamily {
	reg := prometheus.NewRegistry()
	c := metrics.NewConnector(reg, key, metrics.KindSink)
	c.AddConsumed(n)
	c.AddProcessed(n)
	c.AddErrors(e)
	c.ObserveStage(metrics.StageFFI, 1000)
	fams, _ := reg.Gather()
	return fams
}

func counterValue(fams []*dto.MetricFamily, name string) (float64, int) {
	for _, f := range fams {
		if f.GetName() == name {
			if len(f.Metric) == 0 {
				return 0, 0
			}
			return f.Metric[0].GetCounter().GetValue(), len(f.Metric)
		}
	}
	return -1, 0
}

func TestAddCountersCarriesTotalsIntoANewRun(t *testing.T) {
	carried := counts{Consumed: 100, Processed: 90, Filtered: 7, Errors: 3}
	cases := []struct {
		family string
		want   float64
	}{
		{metrics.FamilyMessagesConsumed, 105}, // 100 earlier + 5 now
		{metrics.FamilyMessagesProcessed, 95}, // 90 + 5
		{metrics.FamilyMessagesFiltered, 7},   // series only in the carried set: appended
		{metrics.FamilyErrors, 4},             // 3 + 1
		{metrics.FamilyMessagesProduced, -1},  // a sink has no produced family, carried or not
	}
	merged := addCounters(sinkFamilies("s", 5, 1), carried.families("s", metrics.KindSink))
	for _, c := range cases {
		got, series := counterValue(merged, c.family)
		if got != c.want || (c.want >= 0 && series != 1) {
			t.Errorf("%s = %v in %d series, want %v in one", c.family, got, series, c.want)
		}
	}
	for _, f := range merged {
		if f.GetName() == metrics.FamilyStageDuration && f.Metric[0].GetHistogram().GetSampleCount() != 1 {
			t.Errorf("histogram changed by the carry: %v", f)
		}
	}
}

func TestCountsAddToOnlyTheKindsCounters(t *testing.T) {
	one := uint64(1)
	st := metrics.ConnectorStats{MessagesConsumed: &one, MessagesProcessed: &one, MessagesFiltered: &one, Errors: 1}
	counts{Produced: 9, Consumed: 2, Processed: 3, Filtered: 4, Errors: 5}.addTo(&st)
	if st.MessagesProduced != nil || *st.MessagesConsumed != 3 || *st.MessagesProcessed != 4 || *st.MessagesFiltered != 5 || st.Errors != 6 {
		t.Errorf("sink stats after carry: %+v", st)
	}
}
