package supervisor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// With IGGY_SUPERVISOR_RESTART_LIMIT a connector whose runner keeps exiting (here its stream does
// not exist yet, a fatal error) is restarted that many times within the window and then left
// "failed", its last_error naming the limit and the last exit, iggy_connector_restart_limit_reached
// 1 and state failed; no runner is started for it any more. Once the operator fixed the cause
// (created the stream), POST .../start runs it again and clears all of it.
func TestRestartLimitReachesFailedAndStartClearsIt(t *testing.T) {
	broker := testkit.StartBroker(t)
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/late.toml", sinkFile("late", f.plugin("null_sink"), "late", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_SUPERVISOR_RESTART_LIMIT=2", "IGGY_SUPERVISOR_RESTART_WINDOW=10m"), waitLong)

	waitFor(t, p, waitLong, "the restart limit", func() bool { return statsOf(t, p, nil)["sink/late"].Status == "failed" })
	c := statsOf(t, p, nil)["sink/late"]
	if c.Restarts != 2 || c.PID != 0 || c.LastError == nil ||
		!strings.Contains(c.LastError.Message, "restart limit reached") || !strings.Contains(c.LastError.Message, "last exit: runner exited with code 1") {
		t.Fatalf("failed connector: %+v (last error %+v)", c, c.LastError)
	}
	statusEverywhere(t, p, "sink", "late", "failed")
	metricIs(t, p, `iggy_connector_restart_limit_reached{connector_key="late",connector_type="sink"}`, 1)
	metricIs(t, p, `iggy_connector_state{connector_key="late",connector_type="sink",state="failed"}`, 1)
	// Nothing restarts it: past the next restart's backoff (at most 1 s here) and ten health
	// intervals it is still failed with 2 restarts. What is tested is that nothing happens while
	// time passes, so time passes.
	time.Sleep(time.Second)
	if c := statsOf(t, p, nil)["sink/late"]; c.Status != "failed" || c.Restarts != 2 {
		t.Fatalf("after the limit: %+v", c)
	}
	if !strings.Contains(p.Logs(), "restart limit reached") {
		t.Errorf("the limit is not logged:\n%s", p.Logs())
	}

	if err := testkit.DialClient(t, broker).EnsureTopic(context.Background(), "late", "events", 1); err != nil {
		t.Fatal(err)
	}
	if resp, body, err := p.Do(http.MethodPost, "/sinks/late/start", nil, ""); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /sinks/late/start: %v %v %s", resp, err, body)
	}
	waitFor(t, p, waitLong, "the connector to run again", func() bool { return statsOf(t, p, nil)["sink/late"].Status == "running" })
	metricIs(t, p, `iggy_connector_restart_limit_reached{connector_key="late",connector_type="sink"}`, 0)
	metricIs(t, p, `iggy_connector_state{connector_key="late",connector_type="sink",state="running"}`, 1)
}

// metricIs fails the test unless the supervisor's /metrics has series at want.
func metricIs(t *testing.T, p *testkit.SupervisorProc, series string, want float64) {
	t.Helper()
	_, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := testkit.MetricValue(string(body), series); !ok || v != want {
		t.Fatalf("%s = %v (present %v), want %v", series, v, ok, want)
	}
}
