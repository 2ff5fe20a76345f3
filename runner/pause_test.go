package runner_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// post sends POST path to the runner and fails the test unless it answers want.
func post(t *testing.T, p *testkit.RunnerProc, path string, header http.Header, want int) {
	t.Helper()
	code, body, err := p.Do(http.MethodPost, path, header)
	if err != nil || code != want {
		t.Fatalf("POST %s: status %d (err %v), want %d; body %s", path, code, err, want, body)
	}
	if want == http.StatusConflict && !strings.Contains(string(body), `"code":"invalid_state"`) {
		t.Errorf("POST %s: 409 body %s lacks the error code", path, body)
	}
}

// stateIs reports whether the runner's own iggy_connector_state gauge has state at 1 and every
// other state at 0.
func stateIs(t *testing.T, p *testkit.RunnerProc, header http.Header, key, kind, state string) bool {
	t.Helper()
	code, body, err := p.Get("/metrics", header)
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	text := string(body)
	for _, s := range []string{"starting", "running", "paused", "stopping", "stopped", "error", "standby"} {
		want := 0.0
		if s == state {
			want = 1
		}
		v, ok := testkit.MetricValue(text, `iggy_connector_state{connector_key="`+key+`",connector_type="`+kind+`",state="`+s+`"}`)
		if !ok || v != want {
			return false
		}
	}
	return true
}

// A standalone sink paused in the middle of a busy drain settles its batch and stops there: its
// counts stay frozen while paused, its state gauge says paused, POST /pause and /resume are guarded
// by the API key and answer 409 when they do not apply. After resume every message is delivered
// exactly once: the plugin, closed at the end, counts them.
func TestStandaloneSinkPauseResume(t *testing.T) { testkit.OverProtocols(t, standaloneSinkPauseResume) }

func standaloneSinkPauseResume(t *testing.T, protocol string) {
	const total = 4000
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", total)
	key := http.Header{"Api-Key": {"k"}}
	p := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()), sinkTOML("busy", testkit.PluginPath(t, "fault"), "demo", "events",
		"batch_length = 50\npoll_interval = \"1ms\"", "sleep_ms = 15")), "IGGY_CONNECTORS_HTTP_API_KEY=k"))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "the drain to begin", func() bool { return testkit.OrZero(statsWithKey(t, p, key).MessagesProcessed) > 0 })

	if code, _, _ := p.Do(http.MethodPost, "/pause", nil); code != http.StatusUnauthorized {
		t.Errorf("POST /pause without the API key: status %d, want 401", code)
	}
	post(t, p, "/resume", key, http.StatusConflict) // not paused
	post(t, p, "/pause", key, http.StatusNoContent)
	if h, _ := p.Health(); h.ConnectorStatus != "paused" {
		t.Fatalf("status after POST /pause = %q, want paused", h.ConnectorStatus)
	}
	post(t, p, "/pause", key, http.StatusConflict) // paused already
	first := statsWithKey(t, p, key)
	// Counts stay frozen while paused: a window in which the running sink moved several batches
	// (15 ms a batch). What is tested is that nothing moves while time passes, so time passes.
	time.Sleep(400 * time.Millisecond)
	second := statsWithKey(t, p, key)
	if *first.MessagesConsumed != *second.MessagesConsumed || *first.MessagesProcessed != *second.MessagesProcessed {
		t.Errorf("counts moved while paused: consumed %d -> %d, processed %d -> %d", *first.MessagesConsumed, *second.MessagesConsumed,
			*first.MessagesProcessed, *second.MessagesProcessed)
	}
	if *first.MessagesProcessed >= total || *first.MessagesProcessed != *first.MessagesConsumed {
		t.Errorf("paused with %d of %d processed and %d consumed; want a settled batch mid-drain", *first.MessagesProcessed, total, *first.MessagesConsumed)
	}
	if !stateIs(t, p, key, "busy", "sink", "paused") {
		t.Errorf("iggy_connector_state does not show paused")
	}

	post(t, p, "/resume", key, http.StatusNoContent)
	p.WaitUntil(t, waitLong, "every message after resume", func() bool { return testkit.OrZero(statsWithKey(t, p, key).MessagesProcessed) == total })
	if !stateIs(t, p, key, "busy", "sink", "running") {
		t.Errorf("iggy_connector_state does not show running after resume")
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(waitLong); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if !regexp.MustCompile(`closed after \d+ batches, 4000 messages`).MatchString(p.Logs()) {
		t.Errorf("the plugin did not receive exactly %d messages; logs:\n%s", total, p.Logs())
	}
	if opens := strings.Count(p.Logs(), "Opened fault sink connector"); opens != 1 {
		t.Errorf("the sink plugin was opened %d times; a pause leaves it open", opens)
	}
}

func statsWithKey(t *testing.T, p *testkit.RunnerProc, header http.Header) (s struct {
	MessagesConsumed  *uint64 `json:"messages_consumed"`
	MessagesProcessed *uint64 `json:"messages_processed"`
	MessagesProduced  *uint64 `json:"messages_produced"`
	MessagesSent      *uint64 `json:"messages_sent"`
}) {
	t.Helper()
	code, body, err := p.Get("/stats", header)
	if err != nil || code != http.StatusOK {
		t.Fatalf("/stats: %d %v %s", code, err, body)
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

var openedWithState = regexp.MustCompile(`Restored state for fault source connector with ID: \d+\. Messages produced: (\d+)`)

// A standalone source started paused opens no plugin until resumed; paused later it settles its
// batch and closes the plugin (state saved), and resumed it reopens the plugin with that state:
// the topic holds every sequence number once, no gap and no repeat.
func TestStandaloneSourceStartPausedPauseResume(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	p := testkit.StartRunner(t, append(withConfig(baseEnv(srv, t.TempDir()), sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events",
		"linger_time = \"1ms\"", "messages_per_batch = 10\ninterval_ms = 5")), "IGGY_CONNECTOR_START_PAUSED=true"))
	p.WaitStatus(t, "paused", waitLong)
	if n := testkit.OrZero(p.Stats(t).MessagesSent); n != 0 {
		t.Fatalf("a source started paused sent %d messages", n)
	}
	post(t, p, "/pause", nil, http.StatusConflict)
	post(t, p, "/resume", nil, http.StatusNoContent)
	// Its output is one pipe, in the order it was written: a plugin opened before the resume
	// shows before the runner's "connector resumed".
	p.WaitUntil(t, waitLong, "the resume logged", func() bool { return strings.Contains(p.Logs(), "connector resumed") })
	if before, _, _ := strings.Cut(p.Logs(), "connector resumed"); strings.Contains(before, "Opened fault source connector") {
		t.Fatalf("a source started paused opened its plugin before it was resumed; logs:\n%s", p.Logs())
	}
	p.WaitUntil(t, waitLong, "100 messages sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= 100 })

	post(t, p, "/pause", nil, http.StatusNoContent)
	if h, _ := p.Health(); h.ConnectorStatus != "paused" {
		t.Fatalf("status after POST /pause = %q, want paused", h.ConnectorStatus)
	}
	// The plugin's lines reach p.Logs through a pipe the test copies on its own: waited for.
	p.WaitUntil(t, waitLong, "the paused source's plugin to log its close", func() bool {
		return strings.Contains(p.Logs(), "Fault source with ID: 1 closed")
	})
	sent := testkit.OrZero(p.Stats(t).MessagesSent)
	// Nothing is sent while paused: a window of 60 batch intervals. What is tested is that nothing
	// moves while time passes, so time passes.
	time.Sleep(300 * time.Millisecond)
	if now := testkit.OrZero(p.Stats(t).MessagesSent); now != sent {
		t.Errorf("messages sent moved while paused: %d -> %d", sent, now)
	}
	post(t, p, "/resume", nil, http.StatusNoContent)
	p.WaitUntil(t, waitLong, "100 more messages", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= sent+100 })
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(waitLong); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	// The process has exited: its logs are complete.
	if m := openedWithState.FindStringSubmatch(p.Logs()); m == nil || m[1] != strconv.FormatUint(sent, 10) {
		t.Errorf("the reopened plugin did not get the state of the %d messages sent before the pause (got %v)", sent, m)
	}
	checkSequence(t, readTopic(t, srv, "demo", "events"), 0) // every sequence number once
	if opens := strings.Count(p.Logs(), "Opened fault source connector"); opens != 2 {
		t.Errorf("the source plugin was opened %d times, want 2 (resume from start-paused, resume after pause)", opens)
	}
}

// POST /resume answers once the source runs again, so a read after it never sees a stale state:
// 204 with its plugin open and its poll loop started (the status is running at once); 500 naming
// the error when the plugin does not open again; 504 when the source does not run within
// IGGY_CONNECTOR_SHUTDOWN_TIMEOUT (its open hangs), still paused.
func TestStandaloneSourceResumeAnswersOnceRunning(t *testing.T) {
	cases := []struct {
		name, pluginConfig string
		env                []string
		status             int
		body               string // part of the error body
		after              string // the status /health shows right after the answer ("" when the runner exits)
	}{
		{name: "the plugin opens", status: http.StatusNoContent, after: "running"},
		{name: "the plugin does not open", pluginConfig: "open_code = -1", status: http.StatusInternalServerError,
			body: `"code":"error","reason":"resumed, but the connector did not run again (status error): source \"gen\": plugin initialization failed`},
		{name: "the plugin's open hangs", pluginConfig: "open_hang = true",
			env:    []string{"IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=1s", "IGGY_CONNECTOR_PLUGIN_TIMEOUT=0"},
			status: http.StatusGatewayTimeout, body: `"code":"timeout","reason":"resumed, but the connector is not running after 1s (status paused)`, after: "paused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
			env := append(withConfig(baseEnv(srv, t.TempDir()), sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events",
				"linger_time = \"1ms\"", "messages_per_batch = 10\ninterval_ms = 5\n"+c.pluginConfig)), "IGGY_CONNECTOR_START_PAUSED=true")
			p := testkit.StartRunner(t, append(env, c.env...))
			p.WaitStatus(t, "paused", waitLong)
			code, body, err := p.Do(http.MethodPost, "/resume", nil)
			if err != nil || code != c.status || !strings.Contains(string(body), c.body) {
				t.Fatalf("POST /resume: status %d (err %v) body %s; want %d with %s", code, err, body, c.status, c.body)
			}
			if c.after != "" {
				if h, err := p.Health(); err != nil || h.ConnectorStatus != c.after {
					t.Errorf("status right after POST /resume = %q (%v), want %q", h.ConnectorStatus, err, c.after)
				}
			}
			if c.status == http.StatusNoContent {
				p.WaitUntil(t, waitLong, "the plugin's open in the log", func() bool { return strings.Contains(p.Logs(), "Opened fault source connector") })
			}
		})
	}
}
