package supervisor_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A sink whose plugin segfaults on every first batch takes down only its own runner: the
// supervisor restarts it again and again (counted in /stats and /metrics) while a neighbour sink on
// the same topic keeps its process and keeps consuming.
func TestCrashingConnectorIsRestartedWhileOthersKeepFlowing(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+`
[plugin_config]
messages_per_batch = 5
interval_ms = 20
`)
	f.write(t, "connectors/crashy.toml", sinkFile("crashy", f.plugin("fault"), "demo", "events", "")+`
[plugin_config]
crash_on_batch = 1
`)
	f.write(t, "connectors/steady.toml", sinkFile("steady", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	first := statsOf(t, p, nil)["sink/steady"]
	waitFor(t, p, waitLong, "the crashing sink to be restarted twice", func() bool {
		return statsOf(t, p, nil)["sink/crashy"].Restarts >= 2
	})
	st := statsOf(t, p, nil)
	steady, crashy := st["sink/steady"], st["sink/crashy"]
	if steady.PID != first.PID || steady.Restarts != 0 || steady.Status != "running" {
		t.Errorf("neighbour sink: pid %d -> %d, restarts %d, status %s; want the same process, running", first.PID, steady.PID, steady.Restarts, steady.Status)
	}
	waitFor(t, p, waitLong, "the neighbour sink to keep consuming", func() bool {
		return testkit.OrZero(statsOf(t, p, nil)["sink/steady"].MessagesProcessed) > testkit.OrZero(steady.MessagesProcessed)
	})
	resp, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %v %v", resp, err)
	}
	if v, ok := testkit.MetricValue(string(body), `iggy_connector_restarts_total{connector_key="crashy",connector_type="sink"}`); !ok || v < float64(crashy.Restarts) {
		t.Errorf("iggy_connector_restarts_total for crashy = %v (present %v), /stats said %d", v, ok, crashy.Restarts)
	}
	if _, ok := testkit.MetricValue(string(body), `iggy_connector_restarts_total{connector_key="steady",connector_type="sink"}`); ok {
		t.Errorf("the neighbour sink has a restarts series; it never restarted")
	}
	if !slices.ContainsFunc(linesOf(p.Logs(), "crashy"), func(l string) bool { return strings.Contains(l, "crashing at batch 1") }) {
		t.Errorf("the crashing runner's output is not in the supervisor log tagged with its connector")
	}
}

// A runner that stops answering (SIGSTOP) shows as down in /metrics and as an error in /stats once
// its heartbeat is older than the runner timeout; both answers still come back at once, with every
// other connector in them (no runner is asked). After SIGCONT it is up again.
func TestUnansweringRunnerIsDownButNeverFailsTheScrape(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	for _, key := range []string{"a", "b"} {
		f.write(t, "connectors/"+key+".toml", sinkFile(key, f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	}
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_SUPERVISOR_RUNNER_TIMEOUT=1s", "IGGY_SUPERVISOR_HEALTH_INTERVAL=5s"), waitLong)
	frozen := statsOf(t, p, nil)["sink/a"].PID
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(frozen, syscall.SIGCONT) })

	waitFor(t, p, waitLong, "the frozen runner to show as an error", func() bool {
		return statsOf(t, p, nil)["sink/a"].Status == "error"
	})
	st := statsOf(t, p, nil)
	if a, b := st["sink/a"], st["sink/b"]; a.Status != "error" || a.LastError == nil || !strings.Contains(a.LastError.Message, "does not answer") || b.Status != "running" {
		t.Errorf("/stats with a frozen runner: a %+v, b %+v; want a in error, b running", a, b)
	}
	_, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := testkit.MetricValue(string(body), `iggy_connector_up{connector_key="a",connector_type="sink"}`); !ok || v != 0 {
		t.Errorf("frozen runner up = %v (present %v), want 0", v, ok)
	}
	if v, ok := testkit.MetricValue(string(body), `iggy_connector_up{connector_key="b",connector_type="sink"}`); !ok || v != 1 {
		t.Errorf("healthy runner up = %v (present %v), want 1", v, ok)
	}
	if _, ok := testkit.MetricValue(string(body), `iggy_connector_messages_consumed_total{connector_key="b",connector_type="sink"}`); !ok {
		t.Errorf("the healthy runner's families are missing from the merged /metrics:\n%s", body)
	}

	if err := syscall.Kill(frozen, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, waitLong, "the thawed runner to be up again", func() bool {
		_, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
		v, ok := testkit.MetricValue(string(body), `iggy_connector_up{connector_key="a",connector_type="sink"}`)
		return err == nil && ok && v == 1
	})
}

// Upstream's own example layout (core/connectors/runtime/config.toml found by the default
// IGGY_CONNECTORS_CONFIG_PATH, its connectors directory, plugin paths under target/release) runs
// unchanged: only the broker address comes from the environment, as an operator would set it.
func TestUpstreamConfigLayoutLoadsUnchanged(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("example_stream", map[string]uint32{"example_topic": 1}))
	root := t.TempDir()
	copyTree(t, "testdata/upstream", root)
	plugins := testkit.BuildPlugins(t)
	release := filepath.Join(root, "target", "release")
	if err := os.MkdirAll(release, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"random_source", "stdout_sink"} {
		lib := testkit.PluginLibrary(name)
		if err := os.Symlink(filepath.Join(plugins, lib), filepath.Join(release, lib)); err != nil {
			t.Fatal(err)
		}
	}
	p := testkit.StartSupervisor(t, root, []string{"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr()}, waitLong)

	var sources, sinks []map[string]any
	getJSON(t, p, nil, "/sources", &sources)
	getJSON(t, p, nil, "/sinks", &sinks)
	if len(sources) != 1 || sources[0]["key"] != "random" || sources[0]["status"] != "running" {
		t.Errorf("sources %v: want random running", sources)
	}
	status := map[string]any{}
	for _, s := range sinks {
		status[s["key"].(string)] = s["status"]
	}
	if status["stdout"] != "running" || status["quickwit"] != "error" {
		t.Errorf("sink statuses %v: want stdout running, quickwit (no plugin here) error", status)
	}
	var active struct {
		Version uint64 `json:"version"`
	}
	getJSON(t, p, nil, "/sources/random/configs/active", &active)
	if active.Version != 1 {
		t.Errorf("random source runs version %d, want the highest, 1", active.Version)
	}
	waitFor(t, p, waitLong, "the stdout sink to print the random source's messages", func() bool {
		return len(offsetsLogged("stdout", p.Logs())) > 0
	})
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SIGTERM drains the runners (sources first, so what they produced is in the topic before the
// sinks stop) and exits 0; a second supervisor run on the same state continues where the first
// stopped. Every message of the topic reaches the sink, and the source resumes from its state:
// nothing is lost and nothing is produced twice.
func TestSIGTERMDrainsWithNothingLost(t *testing.T) {
	const total = 400
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+fmt.Sprintf(`
[plugin_config]
messages_per_batch = 10
interval_ms = 20
max_messages = %d
`, total))
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("stdout_sink"), "demo", "events", "")+"\n[plugin_config]\nprint_payload = true\n")

	first := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	waitFor(t, first, waitLong, "the sink to print some messages", func() bool {
		return len(offsetsLogged("out", first.Logs())) >= 50
	})
	if err := first.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := first.Wait(30 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("after SIGTERM: exit code %d, %v; want 0 within the drain time", code, err)
	}
	logs := first.Logs()
	if lastGen := lastLineOf(logs, "gen"); lastGen < 0 || lastGen > lastLineOf(logs, "out") {
		t.Errorf("the source's last line comes after the sink's: sources must drain first")
	}
	firstRun := len(offsetsLogged("out", logs))
	if firstRun >= total {
		t.Fatalf("the first run already moved all %d messages; the test needs an interrupted flow", total)
	}

	second := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	waitFor(t, second, waitLong, "the sink to print every message", func() bool {
		return len(offsetsLogged("out", logs, second.Logs())) >= total
	})
	// Drained and gone, the supervisor has delivered all it ever will: a stray extra batch would be
	// in the topic now.
	if err := second.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := second.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("second run after SIGTERM: exit code %d, %v; want 0", code, err)
	}
	msgs := readAll(t, broker, "demo", "events")
	seen := offsetsLogged("out", logs, second.Logs())
	if len(msgs) != total {
		t.Errorf("topic holds %d messages, want %d (the source resumed from its state)", len(msgs), total)
	}
	for _, m := range msgs {
		if seen[m.Header.Offset] == 0 {
			t.Errorf("message at offset %d never reached the sink", m.Header.Offset)
		}
	}
}

// readAll reads every message of partition 0 through the official SDK.
func readAll(t *testing.T, broker *devbroker.Server, stream, topic string) []iggcon.IggyMessage {
	t.Helper()
	cli := testkit.LoggedInClient(t, broker)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	partition := uint32(0)
	var all []iggcon.IggyMessage
	for {
		polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(uint64(len(all))), 1000, false, &partition)
		if err != nil {
			t.Fatalf("SDK poll %s/%s: %v", stream, topic, err)
		}
		if len(polled.Messages) == 0 {
			return all
		}
		all = append(all, polled.Messages...)
	}
}

// Runners die with the supervisor: after SIGKILL to the supervisor (no chance to drain), the
// parent-death signal takes its runners down too.
func TestRunnersDieWithTheSupervisor(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	for _, key := range []string{"a", "b"} {
		f.write(t, "connectors/"+key+".toml", sinkFile(key, f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	var pids []int
	for _, c := range statsOf(t, p, nil) {
		if c.PID == 0 {
			t.Fatalf("connector %s has no runner pid", c.Key)
		}
		pids = append(pids, c.PID)
	}
	p.Kill9()
	for _, pid := range pids {
		testkit.Eventually(t, 10*time.Second, fmt.Sprintf("runner pid %d gone after the supervisor was killed", pid), func() bool { return !processAlive(pid) })
	}
}

// processAlive: the process exists and is not a zombie waiting to be reaped.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(data), ')'); i > 0 && i+2 < len(data) {
		return data[i+2] != 'Z' && data[i+2] != 'X'
	}
	return true
}

// With [logging] format = "json" every line the supervisor writes is one JSON object: its own
// records, the runners' records re-rendered, and even a runner's crash report (plain text from the
// Go runtime), each runner line tagged with its connector_key.
func TestJSONLogsAreJSONThroughout(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "config.toml", readFile(t, filepath.Join(f.dir, "config.toml"))+"\n[logging]\nformat = \"json\"\n")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 20\n")
	f.write(t, "connectors/crashy.toml", sinkFile("crashy", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\ncrash_on_batch = 1\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	crashReport := func(rec map[string]any) bool {
		msg, _ := rec["msg"].(string)
		return rec["connector_key"] == "crashy" && rec["level"] == "ERROR" &&
			(strings.HasPrefix(msg, "fatal error: ") || strings.HasPrefix(msg, "SIGSEGV: ") || strings.HasPrefix(msg, "panic: "))
	}
	var records []map[string]any
	waitFor(t, p, waitLong, "the crashing runner's crash report in the log", func() bool {
		records = records[:0]
		for _, line := range strings.Split(strings.TrimSpace(p.Logs()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("not a JSON record: %q", line)
			}
			records = append(records, rec)
		}
		return slices.ContainsFunc(records, crashReport)
	})
	runnerRecord := func(key, msg string) bool {
		return slices.ContainsFunc(records, func(rec map[string]any) bool {
			return rec["connector_key"] == key && rec["msg"] == msg
		})
	}
	for _, want := range []struct{ key, msg string }{
		{"gen", "source running"},
		{"crashy", "sink running"},
	} {
		if !runnerRecord(want.key, want.msg) {
			t.Errorf("no runner record %q tagged connector_key=%s", want.msg, want.key)
		}
	}
	if !slices.ContainsFunc(records, func(rec map[string]any) bool {
		msg, _ := rec["msg"].(string)
		return rec["connector_key"] == "crashy" && strings.Contains(msg, "crashing at batch 1")
	}) {
		t.Errorf("the plugin's own last line is not relayed tagged connector_key=crashy")
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A runner that refuses its configuration exits 2, and so does a runner the Go runtime kills (here
// a plugin's segfault): only the first is a configuration error, which waits for POST .../restart
// and refuses again when nothing changed; the crash is restarted with backoff meanwhile.
func TestConfigErrorWaitsForRestartWhileACrashIsRestarted(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+
		"\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 20\n")
	f.write(t, "connectors/crashy.toml", sinkFile("crashy", f.plugin("fault"), "demo", "events", "")+
		"\n[plugin_config]\ncrash_on_batch = 1\n")
	// The supervisor takes it; the runner refuses it when it builds the transforms.
	f.write(t, "connectors/misconfigured.toml", sinkFile("misconfigured", f.plugin("null_sink"), "demo", "events", "")+
		"\n[plugin_config]\n\n[transforms.unwrap_envelope]\nenabled = true\nfield = \"\"\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	waitFor(t, p, waitLong, "the crashing sink to be restarted twice", func() bool {
		return statsOf(t, p, nil)["sink/crashy"].Restarts >= 2
	})
	crashExit := func(l string) bool {
		return strings.Contains(l, "runner exited") && strings.Contains(l, "connector=sink/crashy") &&
			strings.Contains(l, "code 2") && strings.Contains(l, "SIGSEGV")
	}
	if !slices.ContainsFunc(strings.Split(p.Logs(), "\n"), crashExit) {
		t.Errorf("no log line shows the crash exiting with status 2:\n%s", p.Logs())
	}
	bad := statsOf(t, p, nil)["sink/misconfigured"]
	if bad.Status != "error" || bad.Restarts != 0 || bad.LastError == nil {
		t.Fatalf("misconfigured sink: status %s, restarts %d, last error %v; want error, never restarted", bad.Status, bad.Restarts, bad.LastError)
	}
	for _, want := range []string{"code 2", "invalid configuration", "unwrap_envelope", "not restarted until POST /sinks/misconfigured/restart"} {
		if !strings.Contains(bad.LastError.Message, want) {
			t.Errorf("last_error %q does not mention %q", bad.LastError.Message, want)
		}
	}

	refusals := func() int {
		return strings.Count(p.Logs(), `msg="runner exited while starting" connector=sink/misconfigured`)
	}
	before := refusals()
	resp, body, err := p.Do(http.MethodPost, "/sinks/misconfigured/restart", nil, "")
	if err != nil || resp.StatusCode == http.StatusNoContent || !strings.Contains(string(body), "unwrap_envelope") {
		t.Fatalf("POST restart of a configuration the runner refuses: %v %v %s; want an error naming the transform", resp, err, body)
	}
	waitFor(t, p, waitLong, "the supervisor's log of the second refusal", func() bool { return refusals() > before })
	if st := statsOf(t, p, nil)["sink/misconfigured"]; st.Status != "error" || st.Restarts != 0 {
		t.Errorf("after POST restart: status %s, restarts %d; want error, no automatic restarts", st.Status, st.Restarts)
	}
}
