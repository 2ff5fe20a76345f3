package supervisor_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// lifecycleStates are the values of the iggy_connector_state gauge's state label.
var lifecycleStates = []string{"starting", "running", "paused", "stopping", "stopped", "error", "standby"}

// stateShown reports whether /metrics shows state (1) and no other state (0) for the connector,
// and whether iggy_connector_up is up.
func stateShown(t *testing.T, p *testkit.SupervisorProc, kind, key, state string, up float64) bool {
	t.Helper()
	_, body, err := p.Do(http.MethodGet, "/metrics", withKey(), "")
	if err != nil {
		t.Fatal(err)
	}
	labels := `connector_key="` + key + `",connector_type="` + kind + `"`
	for _, s := range lifecycleStates {
		want := 0.0
		if s == state {
			want = 1
		}
		if v, ok := testkit.MetricValue(string(body), `iggy_connector_state{`+labels+`,state="`+s+`"}`); !ok || v != want {
			return false
		}
	}
	v, ok := testkit.MetricValue(string(body), `iggy_connector_up{`+labels+`}`)
	return ok && v == up
}

// lifecycleCase is a lifecycle request answered with status (an error body with code for 4xx).
func lifecycleCase(name, path string, status int, code string) apiCase {
	c := apiCase{name: name, method: http.MethodPost, path: path, header: withKey(), status: status}
	if code != "" {
		c.contentType, c.jsonKeys, c.jsonFields = jsonType, errorKeys, map[string]string{"code": `"` + code + `"`}
	}
	return c
}

// statusEverywhere checks that /sinks, /sinks/{key} and /stats all show status for the connector.
func statusEverywhere(t *testing.T, p *testkit.SupervisorProc, kind, key, status string) {
	t.Helper()
	var list []struct{ Key, Status string }
	getJSON(t, p, withKey(), "/"+kind+"s", &list)
	var one struct{ Status string }
	getJSON(t, p, withKey(), "/"+kind+"s/"+key, &one)
	stats := statsOf(t, p, withKey())[kind+"/"+key]
	for _, c := range list {
		if c.Key == key && c.Status != status {
			t.Errorf("GET /%ss shows %s %q, want %q", kind, key, c.Status, status)
		}
	}
	if one.Status != status || stats.Status != status {
		t.Errorf("%s/%s: GET /%ss/%s status %q, /stats %q; want %q", kind, key, kind, key, one.Status, stats.Status, status)
	}
}

// Every lifecycle transition through the supervisor's API, with its 409 and 404 answers: a sink
// paused during a busy drain keeps its counts frozen and finishes everything after resume; a
// stopped sink has no runner and starts again; a paused source closes its plugin. Status shows
// in /sinks, /sinks/{key} and /stats, the state gauge and iggy_connector_up on /metrics.
func TestLifecycleRoutes(t *testing.T) {
	const total = 4000
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.FillTopic(t, broker, "demo", "events", total)
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/busy.toml", sinkFile("busy", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nsleep_ms = 15\n")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "made", "")+"\n[plugin_config]\nmessages_per_batch = 10\ninterval_ms = 10\n")
	f.write(t, "connectors/off.toml", disabled(sinkFile("off", f.plugin("null_sink"), "demo", "events", "")))
	f.write(t, "connectors/lost.toml", sinkFile("lost", "plugins/no_such_plugin", "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	f.write(t, "connectors/bad.toml", "type = \"sink\"\nkey = \"bad\"\nenabled = true\n[[streams]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	waitFor(t, p, waitLong, "the busy sink to begin its drain", func() bool {
		return testkit.OrZero(statsOf(t, p, withKey())["sink/busy"].MessagesProcessed) > 0
	})

	var cases []apiCase
	for _, op := range []string{"pause", "resume", "stop", "start"} {
		cases = append(cases,
			lifecycleCase(op+" a disabled sink", "/sinks/off/"+op, http.StatusConflict, "invalid_state"),
			lifecycleCase(op+" a sink whose plugin is missing", "/sinks/lost/"+op, http.StatusConflict, "invalid_state"),
			lifecycleCase(op+" a sink whose config does not load", "/sinks/bad/"+op, http.StatusConflict, "invalid_state"),
			lifecycleCase(op+" an unknown sink", "/sinks/nope/"+op, http.StatusNotFound, "sink_not_found"),
			lifecycleCase(op+" an unknown source", "/sources/busy/"+op, http.StatusNotFound, "source_not_found"))
	}
	runAPICases(t, p, append(cases,
		apiCase{name: "pause without the API key", method: http.MethodPost, path: "/sinks/busy/pause", status: http.StatusUnauthorized, exactBody: str("")},
		lifecycleCase("resume a running sink", "/sinks/busy/resume", http.StatusConflict, "invalid_state"),
		lifecycleCase("start a running sink", "/sinks/busy/start", http.StatusConflict, "invalid_state"),
		lifecycleCase("resume a running source", "/sources/gen/resume", http.StatusConflict, "invalid_state"),
		lifecycleCase("pause the busy sink", "/sinks/busy/pause", http.StatusNoContent, ""),
	))
	statusEverywhere(t, p, "sink", "busy", "paused")
	first := statsOf(t, p, withKey())["sink/busy"]
	// Counts stay frozen while paused: a window in which the running sink moved several batches
	// (15 ms a batch). What is tested is that nothing moves while time passes, so time passes.
	time.Sleep(400 * time.Millisecond)
	second := statsOf(t, p, withKey())["sink/busy"]
	if *first.MessagesConsumed != *second.MessagesConsumed || *first.MessagesProcessed != *second.MessagesProcessed || first.PID != second.PID || first.PID == 0 {
		t.Errorf("paused sink: consumed %d -> %d, processed %d -> %d, pid %d -> %d; want frozen counts and the same live runner",
			*first.MessagesConsumed, *second.MessagesConsumed, *first.MessagesProcessed, *second.MessagesProcessed, first.PID, second.PID)
	}
	if n := *first.MessagesProcessed; n >= total || n != *first.MessagesConsumed {
		t.Errorf("paused with %d of %d processed, %d consumed: want a settled batch mid-drain", n, total, *first.MessagesConsumed)
	}
	if !stateShown(t, p, "sink", "busy", "paused", 1) {
		t.Errorf("/metrics does not show the busy sink paused and up")
	}
	runAPICases(t, p, []apiCase{
		lifecycleCase("pause a paused sink", "/sinks/busy/pause", http.StatusConflict, "invalid_state"),
		lifecycleCase("start a paused sink", "/sinks/busy/start", http.StatusConflict, "invalid_state"),
		lifecycleCase("resume the busy sink", "/sinks/busy/resume", http.StatusNoContent, ""),
	})
	statusEverywhere(t, p, "sink", "busy", "running")
	waitFor(t, p, waitLong, "every message after resume", func() bool {
		return testkit.OrZero(statsOf(t, p, withKey())["sink/busy"].MessagesProcessed) == total
	})

	runAPICases(t, p, []apiCase{lifecycleCase("stop the busy sink", "/sinks/busy/stop", http.StatusNoContent, "")})
	statusEverywhere(t, p, "sink", "busy", "stopped")
	if st := statsOf(t, p, withKey())["sink/busy"]; st.PID != 0 {
		t.Errorf("a stopped sink still has runner pid %d", st.PID)
	}
	if !stateShown(t, p, "sink", "busy", "stopped", 0) {
		t.Errorf("/metrics does not show the busy sink stopped and down")
	}
	runAPICases(t, p, []apiCase{
		lifecycleCase("stop a stopped sink", "/sinks/busy/stop", http.StatusConflict, "invalid_state"),
		lifecycleCase("pause a stopped sink", "/sinks/busy/pause", http.StatusConflict, "invalid_state"),
		lifecycleCase("resume a stopped sink", "/sinks/busy/resume", http.StatusConflict, "invalid_state"),
		lifecycleCase("start the busy sink", "/sinks/busy/start", http.StatusNoContent, ""),
	})
	statusEverywhere(t, p, "sink", "busy", "running")
	if !stateShown(t, p, "sink", "busy", "running", 1) {
		t.Errorf("/metrics does not show the restarted sink running and up")
	}

	// The answers come once the runner is in the new state, so the status is read at once; the
	// plugin's own log lines reach the supervisor's log through two pipes, so they are waited for.
	genLog := func() string { return strings.Join(linesOf(p.Logs(), "gen"), "\n") }
	runAPICases(t, p, []apiCase{lifecycleCase("pause the source", "/sources/gen/pause", http.StatusNoContent, "")})
	statusEverywhere(t, p, "source", "gen", "paused")
	waitFor(t, p, waitLong, "the paused source's plugin to log its close", func() bool {
		return strings.Contains(genLog(), "Fault source with ID: 1 closed")
	})
	runAPICases(t, p, []apiCase{lifecycleCase("resume the source", "/sources/gen/resume", http.StatusNoContent, "")})
	statusEverywhere(t, p, "source", "gen", "running")
	opened := func() int { return strings.Count(genLog(), "Opened fault source connector with ID: 1,") }
	waitFor(t, p, waitLong, "the resumed source's plugin to log its second open", func() bool { return opened() >= 2 })
	if opens := opened(); opens != 2 {
		t.Errorf("the source plugin was opened %d times with its id, want 2 (start, resume)", opens)
	}
}

// A resume the runner takes but cannot confirm in time (the source's plugin hangs in its reopen)
// is 504 naming the connector; the target stays running, since the runner is resumed and runs
// once its plugin opens, while the status still shows paused.
func TestResumeUnconfirmedKeepsTheTarget(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/hang.toml", sourceFile("hang", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nopen_hang = true\n")
	f.write(t, "state/source_hang.target.json", `{"target":"paused"}`)
	// The runner waits 1 s for its source to run; its hung plugin is killed after the drain.
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=1s", "IGGY_CONNECTOR_PLUGIN_TIMEOUT=0",
		"IGGY_SUPERVISOR_DRAIN_TIMEOUT=5s"), waitLong)
	waitFor(t, p, waitLong, "the source's runner to show paused", func() bool {
		st := statsOf(t, p, withKey())["source/hang"]
		return st.Status == "paused" && st.PID != 0
	})
	c := lifecycleCase("resume a source whose plugin hangs in open", "/sources/hang/resume", http.StatusGatewayTimeout, "timeout")
	c.bodyHas = []string{"Cannot confirm resume of source with key: hang:", "not running after 1s (status paused)"}
	runAPICases(t, p, []apiCase{c})
	if data, err := os.ReadFile(filepath.Join(f.dir, "state", "source_hang.target.json")); err != nil || !strings.Contains(string(data), `"target":"running"`) {
		t.Errorf("source_hang.target.json: %s (%v), want the running target", data, err)
	}
	statusEverywhere(t, p, "source", "hang", "paused")
}

// The target state outlives runners and the supervisor: a paused source whose runner is killed -9
// comes back paused (its plugin never opened), and after a supervisor restart a stopped sink stays
// stopped and the paused source and sink stay paused. A corrupt target-state file is named in the
// log and its connector's last_error, and the connector starts paused.
func TestTargetStateSurvivesCrashAndRestart(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/a.toml", sinkFile("a", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	f.write(t, "connectors/c.toml", sinkFile("c", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	f.write(t, "connectors/b.toml", sourceFile("b", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 10\n")
	f.write(t, "state/sink_c.target.json", "{not json")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	corrupt := filepath.Join(f.dir, "state", "sink_c.target.json")
	if !strings.Contains(p.Logs(), "target-state file is unreadable; the connector starts paused") || !strings.Contains(p.Logs(), corrupt) {
		t.Errorf("no log line names the corrupt target-state file %s", corrupt)
	}
	statusEverywhere(t, p, "sink", "c", "paused")
	if st := statsOf(t, p, withKey())["sink/c"]; st.LastError == nil || !strings.Contains(st.LastError.Message, corrupt) ||
		!strings.Contains(st.LastError.Message, "started paused") {
		t.Errorf("sink/c last_error = %+v, want it to name the corrupt file and the pause", st.LastError)
	}

	runAPICases(t, p, []apiCase{
		lifecycleCase("stop a", "/sinks/a/stop", http.StatusNoContent, ""),
		lifecycleCase("pause b", "/sources/b/pause", http.StatusNoContent, ""),
		lifecycleCase("resume c", "/sinks/c/resume", http.StatusNoContent, ""), // its corrupt file is replaced
		lifecycleCase("pause c", "/sinks/c/pause", http.StatusNoContent, ""),
	})
	if data, err := os.ReadFile(filepath.Join(f.dir, "state", "sink_a.target.json")); err != nil || !strings.Contains(string(data), `"target":"stopped"`) {
		t.Errorf("sink_a.target.json: %s (%v), want the stopped target", data, err)
	}
	opensOfB := func(logs string) int {
		return strings.Count(strings.Join(linesOf(logs, "b"), "\n"), "Opened fault source connector")
	}
	before := statsOf(t, p, withKey())["source/b"]
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, waitLong, "the killed paused runner to be back", func() bool {
		st := statsOf(t, p, withKey())["source/b"]
		return st.Restarts == 1 && st.PID != before.PID && st.PID != 0 && st.Status == "paused"
	})
	if n := opensOfB(p.Logs()); n != 1 {
		t.Errorf("the source plugin was opened %d times; the runner restarted paused must not open it", n)
	}

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(waitLong); err != nil || code != 0 {
		t.Fatalf("supervisor exit %d, %v", code, err)
	}
	p2 := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	statusEverywhere(t, p2, "sink", "a", "stopped")
	statusEverywhere(t, p2, "source", "b", "paused")
	statusEverywhere(t, p2, "sink", "c", "paused")
	if st := statsOf(t, p2, withKey())["sink/a"]; st.PID != 0 {
		t.Errorf("the stopped sink has runner pid %d after the supervisor restart", st.PID)
	}
	if n := opensOfB(p2.Logs()); n != 0 {
		t.Errorf("the paused source opened its plugin %d times after the supervisor restart", n)
	}
	runAPICases(t, p2, []apiCase{
		lifecycleCase("start a", "/sinks/a/start", http.StatusNoContent, ""),
		lifecycleCase("resume b", "/sources/b/resume", http.StatusNoContent, ""),
		lifecycleCase("resume c", "/sinks/c/resume", http.StatusNoContent, ""),
	})
	statusEverywhere(t, p2, "sink", "a", "running")
	statusEverywhere(t, p2, "source", "b", "running")
	statusEverywhere(t, p2, "sink", "c", "running")
}
