package runner_test

import (
	"net/http"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// groupPolls is how many polls the broker served to a sink's default consumer group.
func groupPolls(t *testing.T, srv *devbroker.Server, stream, topic, key string) uint64 {
	t.Helper()
	n, err := srv.GroupPolls(stream, topic, config.DefaultConsumerGroup(key))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Three idle sinks side by side at poll_interval 5ms, each on its own empty topic: idle_poll_max
// "0" and "5ms" keep upstream's fixed interval, the default backs off. Counted by the broker over
// the same stretch (until the first fixed sink made 400 polls, at least 2 s since its polls are
// 5 ms apart at the closest), the backing-off sink polls far less and the two fixed ones alike. A
// message sent to each afterwards is delivered.
func TestIdleSinkBacksOff(t *testing.T) { testkit.OverProtocols(t, idleSinkBacksOff) }

func idleSinkBacksOff(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("idle", map[string]uint32{"fixed": 1, "equal": 1, "adaptive": 1}))
	sinks := []struct{ key, extra string }{
		{"fixed", "poll_interval = \"5ms\"\nidle_poll_max = \"0\""},
		{"equal", "poll_interval = \"5ms\"\nidle_poll_max = \"5ms\""},
		{"adaptive", "poll_interval = \"5ms\""},
	}
	procs := map[string]*testkit.RunnerProc{}
	for _, s := range sinks {
		p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()),
			sinkTOML(s.key, testkit.PluginPath(t, "null_sink"), "idle", s.key, s.extra, "")))
		procs[s.key] = p
	}
	for _, p := range procs {
		p.WaitStatus(t, "running", waitLong)
	}
	start := map[string]uint64{}
	for _, s := range sinks {
		start[s.key] = groupPolls(t, srv, "idle", s.key, s.key)
	}
	procs["fixed"].WaitUntil(t, waitLong, "400 polls of the fixed-interval sink", func() bool {
		return groupPolls(t, srv, "idle", "fixed", "fixed")-start["fixed"] >= 400
	})
	got := map[string]uint64{}
	for _, s := range sinks {
		got[s.key] = groupPolls(t, srv, "idle", s.key, s.key) - start[s.key]
	}
	t.Logf("polls over the stretch: %v", got)
	if got["adaptive"]*4 >= got["fixed"] {
		t.Errorf("the idle sink with the default idle_poll_max polled %d times while the fixed one polled %d; want under a quarter", got["adaptive"], got["fixed"])
	}
	if got["equal"]*4 < got["fixed"] {
		t.Errorf("idle_poll_max = poll_interval polled %d times while idle_poll_max = 0 polled %d; both keep the fixed interval", got["equal"], got["fixed"])
	}

	for _, s := range sinks {
		fillTopic(t, srv, "idle", s.key, 1)
	}
	for _, s := range sinks {
		p := procs[s.key]
		p.WaitUntil(t, waitLong, "the message after the idle spell", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) == 1 })
		stopRunner(t, p)
	}
}

// A sink deep in its idle back-off (idle_poll_max 1h: after 11 empty polls, 5 ms apart at first,
// its next wait is over 2.5 s) still pauses at once, polls at once after resume, and stops at once
// on SIGTERM. With IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=1s a wait that held either up would show: the
// pause would answer before the connector parked, the stop would exit 1 (batch not settled). Two
// runners, one paused and one stopped, are each counted from their first poll: the depth of the
// wait then follows from the count alone (a count read after a delivered message could not say
// how many polls followed it, and so how long the next wait is).
func TestLongIdleWaitEndsOnPauseAndStop(t *testing.T) {
	testkit.OverProtocols(t, longIdleWaitEndsOnPauseAndStop)
}

func longIdleWaitEndsOnPauseAndStop(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("idle", map[string]uint32{"paused": 1, "stopped": 1}))
	key := http.Header{"Api-Key": {"k"}}
	start := func(name string) *testkit.RunnerProc {
		return testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()),
			sinkTOML(name, testkit.PluginPath(t, "null_sink"), "idle", name, "poll_interval = \"5ms\"\nidle_poll_max = \"1h\"", "")),
			"IGGY_CONNECTORS_HTTP_API_KEY=k", "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=1s"))
	}
	paused, stopped := start("paused"), start("stopped")
	for name, p := range map[string]*testkit.RunnerProc{"paused": paused, "stopped": stopped} {
		p.WaitStatus(t, "running", waitLong)
		p.WaitUntil(t, waitLong, "11 empty polls of "+name, func() bool { return groupPolls(t, srv, "idle", name, name) >= 11 })
	}

	post(t, paused, "/pause", key, http.StatusNoContent)
	if h, _ := paused.Health(); h.ConnectorStatus != "paused" {
		t.Fatalf("status right after POST /pause = %q, want paused: the idle wait held the pause up", h.ConnectorStatus)
	}
	post(t, paused, "/resume", key, http.StatusNoContent)
	fillTopic(t, srv, "idle", "paused", 1)
	paused.WaitUntil(t, waitLong, "the message sent after resume", func() bool {
		return testkit.OrZero(statsWithKey(t, paused, key).MessagesProcessed) == 1
	})

	stopRunner(t, stopped)
	stopRunner(t, paused)
}
