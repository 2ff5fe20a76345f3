package supervisor_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

var jsonBody = http.Header{"Content-Type": {"application/json"}}

// put sends PUT path with a JSON body and fails the test unless the supervisor answers want; it
// returns the answer's body.
func put(t *testing.T, p *testkit.SupervisorProc, path, body string, want int) []byte {
	t.Helper()
	resp, out, err := p.Do(http.MethodPut, path, jsonBody, body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("PUT %s %s: %v %v %s; want %d", path, body, resp, err, out, want)
	}
	return out
}

func supervisorLevel(t *testing.T, p *testkit.SupervisorProc, path string) logging.LevelState {
	t.Helper()
	var s logging.LevelState
	getJSON(t, p, nil, path, &s)
	return s
}

// killRunner kills the connector's runner with SIGKILL and waits until the supervisor restarted it
// and it runs again.
func killRunner(t *testing.T, p *testkit.SupervisorProc, kind, key string) {
	t.Helper()
	before := statsOf(t, p, nil)[kind+"/"+key]
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, waitLong, "the crashed runner to be restarted", func() bool {
		c := statsOf(t, p, nil)[kind+"/"+key]
		return c.Restarts > before.Restarts && c.Status == "running" && c.PID != before.PID
	})
}

// A connector's log filter changes at run time through the supervisor, its plugin's lines
// included (the runners are opened with a debug ceiling). A crash restart keeps a change; an
// operator's restart returns to the configured filter unless it was persisted, in the connector's
// target-state file, which a reset clears. PUT /log_level changes the supervisor's own filter and
// every connector's.
func TestLogLevelThroughTheSupervisor(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\ninterval_ms = 20\nmessages_per_batch = 2\n")
	f.write(t, "connectors/noisy.toml", sinkFile("noisy", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nlog_lines = 1\nlog_level = \"debug\"\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTOR_PLUGIN_LOG_CEILING=debug"), waitLong)
	noise := func() int { return strings.Count(strings.Join(linesOf(p.Logs(), "noisy"), "\n"), "noise line") }

	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "info" || s.Configured != "info" || s.PluginFilter != "debug" || s.Persisted {
		t.Fatalf("GET /sinks/noisy/log_level = %+v", s)
	}
	if n := noise(); n != 0 {
		t.Fatalf("%d DEBUG plugin lines at info", n)
	}
	var s logging.LevelState
	if err := json.Unmarshal(put(t, p, "/sinks/noisy/log_level", `{"filter": "debug", "persist": true}`, http.StatusOK), &s); err != nil || s.Filter != "debug" || !s.Persisted {
		t.Fatalf("PUT persist answered %+v, %v", s, err)
	}
	waitFor(t, p, waitLong, "the plugin's DEBUG lines relayed", func() bool { return noise() > 0 })
	targetFile := filepath.Join(f.dir, "state", "sink_noisy.target.json")
	if data, err := os.ReadFile(targetFile); err != nil || !strings.Contains(string(data), `"log_filter":"debug"`) {
		t.Fatalf("target-state file %s: %s %v", targetFile, data, err)
	}

	// An operator's restart keeps a persisted filter.
	if resp, body, err := p.Do(http.MethodPost, "/sinks/noisy/restart", nil, ""); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("restart: %v %v %s", resp, err, body)
	}
	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "debug" || !s.Persisted {
		t.Fatalf("after restart with a persisted filter: %+v", s)
	}
	// A reset clears it, from the runner and from the file.
	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "debug" {
		t.Fatalf("%+v", s)
	}
	put(t, p, "/sinks/noisy/log_level", `null`, http.StatusOK)
	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "info" || s.Persisted {
		t.Fatalf("after reset: %+v", s)
	}
	if data, _ := os.ReadFile(targetFile); strings.Contains(string(data), "log_filter") {
		t.Fatalf("the reset left the filter in %s: %s", targetFile, data)
	}

	// The global route: the supervisor's own filter and every connector's, not persisted.
	put(t, p, "/log_level", `"warn"`, http.StatusOK)
	if s := supervisorLevel(t, p, "/log_level"); s.Filter != "warn" || s.Configured != "info" {
		t.Fatalf("GET /log_level = %+v", s)
	}
	for _, path := range []string{"/sinks/noisy/log_level", "/sources/gen/log_level"} {
		if s := supervisorLevel(t, p, path); s.Filter != "warn" {
			t.Fatalf("GET %s after PUT /log_level = %+v", path, s)
		}
	}
	killRunner(t, p, "sink", "noisy") // a crash restart keeps it
	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "warn" {
		t.Fatalf("after a crash restart: %+v, want the run-time warn kept", s)
	}
	if resp, body, err := p.Do(http.MethodPost, "/sinks/noisy/restart", nil, ""); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("restart: %v %v %s", resp, err, body)
	}
	if s := supervisorLevel(t, p, "/sinks/noisy/log_level"); s.Filter != "info" {
		t.Fatalf("after an operator's restart: %+v, want the configured info", s)
	}

	put(t, p, "/sinks/noisy/log_level", `"debug,x=loud"`, http.StatusBadRequest)
	put(t, p, "/sinks/nope/log_level", `"debug"`, http.StatusNotFound)
}

// A connector's rate limit changes at run time through the supervisor: the runner waits (the
// supervisor's /stats shows throttled_seconds), a crash restart keeps the change, and null is the
// configured section (none) again.
func TestRateLimitThroughTheSupervisor(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.FillTopic(t, broker, "demo", "events", 500)
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/slow.toml", sinkFile("slow", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	waitFor(t, p, waitLong, "the backlog drained", func() bool { return testkit.OrZero(statsOf(t, p, nil)["sink/slow"].MessagesProcessed) >= 500 })

	type answer struct {
		Limit            map[string]*float64 `json:"limit"`
		Configured       map[string]*float64 `json:"configured"`
		ThrottledSeconds float64             `json:"throttled_seconds"`
	}
	var a answer
	if err := json.Unmarshal(put(t, p, "/sinks/slow/rate_limit", `{"messages_per_second": 2}`, http.StatusOK), &a); err != nil ||
		a.Limit["messages_per_second"] == nil || *a.Limit["messages_per_second"] != 2 || a.Configured["messages_per_second"] != nil {
		t.Fatalf("PUT answered %+v, %v", a, err)
	}
	testkit.FillTopic(t, broker, "demo", "events", 100)
	throttled := func() float64 {
		var rs struct {
			Connectors []struct {
				Key              string   `json:"key"`
				ThrottledSeconds *float64 `json:"throttled_seconds"`
			} `json:"connectors"`
		}
		getJSON(t, p, nil, "/stats", &rs)
		for _, c := range rs.Connectors {
			if c.Key == "slow" && c.ThrottledSeconds != nil {
				return *c.ThrottledSeconds
			}
		}
		return 0
	}
	waitFor(t, p, waitLong, "the limit to hold the sink back", func() bool { return throttled() > 0 })
	_, body, _ := p.Do(http.MethodGet, "/metrics", nil, "")
	if v, ok := testkit.MetricValue(string(body), `iggy_connector_throttled_seconds_total{connector_key="slow",connector_type="sink"}`); !ok || v <= 0 {
		t.Fatalf("iggy_connector_throttled_seconds_total = %v (%v), want > 0", v, ok)
	}

	killRunner(t, p, "sink", "slow")
	getJSON(t, p, nil, "/sinks/slow/rate_limit", &a)
	if a.Limit["messages_per_second"] == nil || *a.Limit["messages_per_second"] != 2 {
		t.Fatalf("after a crash restart: %+v, want the run-time limit kept", a)
	}
	if err := json.Unmarshal(put(t, p, "/sinks/slow/rate_limit", `null`, http.StatusOK), &a); err != nil || a.Limit["messages_per_second"] != nil {
		t.Fatalf("reset answered %+v, %v", a, err)
	}
	waitFor(t, p, waitLong, "the rest to go through", func() bool { return testkit.OrZero(statsOf(t, p, nil)["sink/slow"].MessagesProcessed) >= 600 })
	put(t, p, "/sinks/slow/rate_limit", `{"messages_per_second": "fast"}`, http.StatusBadRequest)
}
