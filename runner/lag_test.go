package runner_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Every poll sets the partition's consumer lag (the messages after the last one polled) in the
// runner's /metrics and /stats: with 30 messages, batches of 10 and a slow plugin it reads 20, then
// 10, then 0 once everything was polled.
func TestSinkReportsConsumerLagOnEveryPoll(t *testing.T) {
	testkit.OverProtocols(t, sinkReportsConsumerLagOnEveryPoll)
}

func sinkReportsConsumerLagOnEveryPoll(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 30)
	p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sinkTOML("slow", testkit.PluginPath(t, "fault"), "demo", "events", "batch_length = 10", "sleep_ms = 300")))
	p.WaitStatus(t, "running", waitLong)
	seen := map[uint64]bool{}
	p.WaitUntil(t, waitLong, "lag 0 after the last batch", func() bool {
		st := p.Stats(t)
		if st.Lag != nil {
			seen[*st.Lag] = true
		}
		return st.Lag != nil && *st.Lag == 0 && testkit.OrZero(st.MessagesProcessed) == 30
	})
	for lag := range seen {
		if lag != 20 && lag != 10 && lag != 0 {
			t.Errorf("/stats lag was %d; only 20, 10 and 0 are possible", lag)
		}
	}
	if !seen[20] && !seen[10] {
		t.Errorf("/stats lag never showed the messages still to poll (seen %v)", seen)
	}
	series := `iggy_connector_consumer_lag{connector_key="slow",connector_type="sink",partition="0",stream="demo",topic="events"}`
	if got := testkit.RequireMetric(t, p.Metrics(t), series); got != 0 {
		t.Errorf("%s = %v, want 0", series, got)
	}
}
