package metrics_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// A runner's lag per partition shows on the supervisor's side of the page as the same gauge series
// its own registry serves, summed in /stats; a new runner starts the table over; partitions beyond
// the cap are refused, not mixed up.
func TestConsumerLagThroughThePage(t *testing.T) {
	sup := newPage(t, "lagging", metrics.KindSink)
	if st := sup.Stats(false); st.Lag != nil {
		t.Fatalf("lag before any poll = %d, want absent", *st.Lag)
	}
	reg := prometheus.NewRegistry()
	c := attach(t, reg, openPage(t, sup.Path(), "lagging", metrics.KindSink))
	c.SetLag("orders", "eu", 10, 7)
	c.SetLag("orders", "eu", 2, 100)
	c.SetLag("orders", "eu", 10, 3) // a later poll of the same partition replaces its figure
	if st := sup.Stats(false); st.Lag == nil || *st.Lag != 103 {
		t.Fatalf("/stats lag = %v, want 103", st.Lag)
	}
	text := sameAsRegistry(t, reg, sup)
	for _, want := range []string{
		"# TYPE iggy_connector_consumer_lag gauge",
		`iggy_connector_consumer_lag{connector_key="lagging",connector_type="sink",partition="10",stream="orders",topic="eu"} 3`,
		`iggy_connector_consumer_lag{connector_key="lagging",connector_type="sink",partition="2",stream="orders",topic="eu"} 100`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %s:\n%s", want, text)
		}
	}

	next := attach(t, nil, openPage(t, sup.Path(), "lagging", metrics.KindSink))
	if st := sup.Stats(false); st.Lag != nil {
		t.Fatalf("lag after a new runner attached = %d, want absent until it polls", *st.Lag)
	}
	for i := range metrics.MaxLagPartitions {
		if !next.SetLag(strings.Repeat("s", 255), fmt.Sprintf("t%d", i), 0, 1) {
			t.Fatalf("partition %d refused below the cap", i)
		}
	}
	if next.SetLag("one", "more", 0, 1) {
		t.Fatal("a partition beyond the cap was recorded")
	}
	if st := sup.Stats(false); st.Lag == nil || *st.Lag != metrics.MaxLagPartitions {
		t.Fatalf("/stats lag at the cap = %v, want %d", st.Lag, metrics.MaxLagPartitions)
	}
	if !strings.Contains(render(t, sup), `partition="0",stream="`+strings.Repeat("s", 255)+`",topic="t63"} 1`) {
		t.Fatal("a 255-byte stream name did not survive the table")
	}
}

func render(t *testing.T, p *metrics.Page) string {
	t.Helper()
	var out bytes.Buffer
	if err := metrics.WriteOpenMetrics(&out, p.Families()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
