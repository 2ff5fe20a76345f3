package supervisor_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const waitLong = 40 * time.Second

// fixture is a working directory holding a runtime config file and a connectors directory, as an
// operator would lay them out, plus the dev broker the connectors talk to.
type fixture struct {
	dir     string
	broker  *devbroker.Server
	plugins string
}

func newFixture(t testing.TB, broker *devbroker.Server) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), broker: broker, plugins: testkit.BuildPlugins(t)}
	if err := os.MkdirAll(filepath.Join(f.dir, "connectors"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// plugin is the path of an example plugin compiled from C for this test process.
func (f *fixture) plugin(name string) string {
	return filepath.Join(f.plugins, testkit.PluginLibrary(name))
}

// writeRuntime writes config.toml with the given [http] extras.
func (f *fixture) writeRuntime(t testing.TB, httpExtra string) {
	t.Helper()
	f.write(t, "config.toml", testkit.SupervisorConfig(f.broker.Addr(), httpExtra))
}

func (f *fixture) write(t testing.TB, name, content string) {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// env is what each supervisor of these tests gets: the config file and fast timings.
func (f *fixture) env(extra ...string) []string { return testkit.SupervisorEnv(extra...) }

func sinkFile(key, path, stream, topic, extra string) string {
	return fmt.Sprintf(`type = "sink"
key = %q
enabled = true
version = 0
name = "sink %s"
path = %q
%s
[[streams]]
stream = %q
topics = [%q]
schema = "json"
batch_length = 50
poll_interval = "5ms"
`, key, key, path, extra, stream, topic)
}

func sourceFile(key, path, stream, topic, extra string) string {
	return fmt.Sprintf(`type = "source"
key = %q
enabled = true
version = 0
name = "source %s"
path = %q
%s
[[streams]]
stream = %q
topic = %q
schema = "json"
batch_length = 100
linger_time = "5ms"
`, key, key, path, extra, stream, topic)
}

// disabled is a connector file (sinkFile, sourceFile) with enabled = false.
func disabled(file string) string {
	return strings.Replace(file, "enabled = true", "enabled = false", 1)
}

// getJSON fetches path from the supervisor's API and decodes the JSON body into v.
func getJSON(t testing.TB, p *testkit.SupervisorProc, header http.Header, path string, v any) {
	t.Helper()
	resp, body, err := p.Do(http.MethodGet, path, header, "")
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// connectorStats is the part of a /stats connector object the tests look at.
type connectorStats struct {
	Key               string  `json:"key"`
	ConnectorType     string  `json:"connector_type"`
	Status            string  `json:"status"`
	PID               int     `json:"pid"`
	Restarts          uint64  `json:"restarts"`
	MessagesProduced  *uint64 `json:"messages_produced"`
	MessagesSent      *uint64 `json:"messages_sent"`
	MessagesConsumed  *uint64 `json:"messages_consumed"`
	MessagesProcessed *uint64 `json:"messages_processed"`
	Errors            uint64  `json:"errors"`
	// MessagesDeadLettered is ours (docs/architecture.md, decision 14).
	MessagesDeadLettered *uint64 `json:"messages_dead_lettered"`
	// Lag is ours (docs/architecture.md, decision 13).
	Lag       *uint64 `json:"lag"`
	LastError *struct {
		Message string `json:"message"`
	} `json:"last_error"`
}

type runtimeStats struct {
	ProcessID   int              `json:"process_id"`
	MemoryUsage uint64           `json:"memory_usage"`
	Connectors  []connectorStats `json:"connectors"`
}

func statsOf(t testing.TB, p *testkit.SupervisorProc, header http.Header) map[string]connectorStats {
	t.Helper()
	var rs runtimeStats
	getJSON(t, p, header, "/stats", &rs)
	out := map[string]connectorStats{}
	for _, c := range rs.Connectors {
		out[c.ConnectorType+"/"+c.Key] = c
	}
	return out
}

// waitFor waits until cond holds, failing the test when timeout passes or the supervisor exits first.
func waitFor(t testing.TB, p *testkit.SupervisorProc, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	p.WaitUntil(t, timeout, what, cond)
}

// stdoutOffsetLine is a stdout-sink line as the supervisor relays it in text format: the plugin's
// message, then the runner's connector key.
var stdoutOffsetLine = regexp.MustCompile(`Message offset: (\d+), payload.* connector_key=(\S+)`)

// offsetsLogged counts, per offset, the stdout-sink lines of connector key in the logs.
func offsetsLogged(key string, logs ...string) map[uint64]int {
	seen := map[uint64]int{}
	for _, l := range logs {
		for _, m := range stdoutOffsetLine.FindAllStringSubmatch(l, -1) {
			if m[2] != key {
				continue
			}
			off, _ := strconv.ParseUint(m[1], 10, 64)
			seen[off]++
		}
	}
	return seen
}

// isLineOf reports whether line is a relayed line of connector key (tagged connector_key=key in
// text format).
func isLineOf(line, key string) bool {
	return slices.Contains(strings.Fields(line), "connector_key="+key)
}

// linesOf returns the relayed lines of connector key, in order.
func linesOf(logs, key string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if isLineOf(line, key) {
			out = append(out, line)
		}
	}
	return out
}

// lastLineOf is the number of the last relayed line of connector key in logs, -1 when none.
func lastLineOf(logs, key string) int {
	lines := strings.Split(logs, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isLineOf(lines[i], key) {
			return i
		}
	}
	return -1
}
