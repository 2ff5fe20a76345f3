package console_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/testkit/browser"
)

const (
	apiKey    = "console-test-key"
	startWait = 60 * time.Second
	uiWait    = 30 * time.Second // what a page condition may take: a poll, a runner restart
)

func TestMain(m *testing.M) {
	code := m.Run()
	browser.StopShared()
	os.Exit(code)
}

// demo is the `make run` demo (compose/demo: a random source through an add_fields transform into
// a stdout sink) under a real supervisor, its runners and the dev broker.
type demo struct {
	sup    *testkit.SupervisorProc
	broker *devbroker.Server
	dir    string
	key    string
}

// startDemo starts the demo's connectors, as compose/demo/connectors has them with the plugin
// paths of this test's build, under a supervisor whose API takes key ("" for none).
func startDemo(t *testing.T, key string, env ...string) *demo {
	t.Helper()
	broker := testkit.StartBroker(t, testkit.WithStream("demo_stream", map[string]uint32{"demo_topic": 1}))
	plugins := testkit.BuildPlugins(t)
	d := &demo{broker: broker, dir: t.TempDir(), key: key}
	keyLine := ""
	if key != "" {
		keyLine = "api_key = \"" + key + "\""
	}
	write(t, filepath.Join(d.dir, "config.toml"), `[http]
enabled = true
address = "127.0.0.1:0"
`+keyLine+`

[http.metrics]
enabled = true
endpoint = "/metrics"

[iggy]
address = "`+broker.Addr()+`"
username = "iggy"
password = "iggy"

[state]
path = "state"

[connectors]
config_type = "local"
config_dir = "connectors"
`)
	demoDir := filepath.Join(repoRoot(t), "compose", "demo", "connectors")
	entries, err := os.ReadDir(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	pluginPath := regexp.MustCompile(`(?m)^path = "bin/plugins/(libiggy_connector_\w+)"$`)
	for _, e := range entries {
		body, err := os.ReadFile(filepath.Join(demoDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := pluginPath.ReplaceAllString(string(body), `path = "`+plugins+`/$1.so"`)
		if !strings.Contains(text, plugins) {
			t.Fatalf("%s: no plugin path of the form bin/plugins/libiggy_connector_NAME", e.Name())
		}
		write(t, filepath.Join(d.dir, "connectors", e.Name()), text)
	}
	d.sup = testkit.StartSupervisor(t, d.dir, append([]string{
		"IGGY_CONNECTORS_CONFIG_PATH=config.toml",
		"IGGY_SUPERVISOR_RESTART_BACKOFF_MIN=2s", // long enough for a 1 s poll to see the failure
		"IGGY_SUPERVISOR_RESTART_BACKOFF_MAX=3s",
		"IGGY_SUPERVISOR_HEALTH_INTERVAL=100ms",
		"IGGY_SUPERVISOR_DRAIN_TIMEOUT=10s",
		"IGGY_SUPERVISOR_START_TIMEOUT=20s",
	}, env...), startWait)
	return d
}

// page is the console's address on the supervisor, polling every second.
func (d *demo) page() string { return d.sup.URL("/ui/?refresh=1") }

func (d *demo) header() http.Header {
	if d.key == "" {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + d.key}}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoRoot is the repository's top directory (the one holding go.mod).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's directory")
		}
	}
}
