package images_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The supervisor image is a drop-in for upstream's apache/iggy-connect, which runs iggy-connectors
// from WORKDIR /app: operators mount an upstream config whose paths are relative to /app. These
// tests lay that layout out under a temporary root and run the real supervisor from its /app.

// imageUID is the image's non-root user (USER iggy:iggy, uid/gid 10001).
const imageUID = 10001

// upstreamLayout writes /app as an operator of upstream's image mounts it: config.toml and the
// connector files with upstream's relative paths (connectors, local_state, plugins/...), and the
// plugins in /app/plugins.
func upstreamLayout(t *testing.T, brokerAddr string) string {
	t.Helper()
	app := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(filepath.Join(app, "connectors"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdout_sink", "random_source"} {
		testkit.CopyPlugin(t, name, filepath.Join(app, "plugins", testkit.PluginLibrary(name)))
	}
	files := map[string]string{
		// Upstream's example_config/config.toml, with the paths an /app mount uses, less its empty
		// api_key line (the same as none; no deployment file of ours may carry an empty key).
		"config.toml": fmt.Sprintf(`[http]
enabled = true
address = "127.0.0.1:8081"

[http.metrics]
enabled = true
endpoint = "/metrics"

[iggy]
address = %q
username = "iggy"
password = "iggy"
token = ""

[state]
path = "local_state"

[connectors]
config_type = "local"
config_dir = "connectors"

[logging]
format = "text"
`, brokerAddr),
		"connectors/stdout_sink.toml": `type = "sink"
key = "stdout"
enabled = true
version = 0
name = "Stdout sink"
path = "plugins/libiggy_connector_stdout_sink"

[[streams]]
stream = "example_stream"
topics = ["example_topic"]
schema = "json"
batch_length = 100
poll_interval = "5ms"
consumer_group = "stdout_sink_connector"

[plugin_config]
print_payload = false
`,
		"connectors/random_source.toml": `type = "source"
key = "random"
enabled = true
version = 1
name = "Random source"
path = "plugins/libiggy_connector_random_source"
plugin_config_format = "json"

[[streams]]
stream = "example_stream"
topic = "example_topic"
schema = "json"
batch_length = 1000
linger_time = "5ms"

[plugin_config]
interval = "100ms"
messages_range = [1, 5]
payload_size = 200
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(app, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// TestSupervisorRunsUpstreamLayout runs the supervisor from /app with an upstream config given as
// a relative IGGY_CONNECTORS_CONFIG_PATH, as the image's WORKDIR makes it: the connectors
// directory, the plugins and the state directory all resolve under /app.
func TestSupervisorRunsUpstreamLayout(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	d, err := parseDockerfile(root, "images/supervisor/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if w := d.stages[len(d.stages)-1].last("workdir"); w == nil || nodeWords(w)[0] != upstreamWorkDir {
		t.Fatalf("the supervisor image's WORKDIR is not %s, where upstream's image runs", upstreamWorkDir)
	}
	broker := testkit.StartBroker(t, testkit.WithStream("example_stream", map[string]uint32{"example_topic": 1}))
	app := upstreamLayout(t, broker.Addr())
	sup := testkit.StartSupervisor(t, app, []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"}, 90*time.Second)
	waitFor(t, sup.URL("/stats"), sup.Exited, func(s metrics.RuntimeStats) bool {
		running, consumed := runningConnectors(s)
		return running == 2 && consumed
	})
	entries, err := os.ReadDir(filepath.Join(app, "local_state"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("/app/local_state holds no source state (%v): state.path did not resolve under /app", err)
	}
}

// TestSupervisorRefusesUnwritableState starts the supervisor as the image's user with a state
// directory it cannot write (a root-owned volume, the usual mistake): it must stop at once with a
// message naming the directory.
func TestSupervisorRefusesUnwritableState(t *testing.T) {
	t.Parallel()
	broker := testkit.StartBroker(t, testkit.WithStream("example_stream", map[string]uint32{"example_topic": 1}))
	app := upstreamLayout(t, broker.Addr())
	state := filepath.Join(app, "local_state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	// The binaries where uid 10001 can run them, and every directory up to /app open to it.
	bin := t.TempDir()
	supervisor := copyExecutable(t, testkit.SupervisorBinary(t), bin)
	runnerBin := copyExecutable(t, testkit.RunnerBinary(t), bin)
	cmd := exec.Command(supervisor)
	cmd.Dir = app
	cmd.Env = []string{
		"PATH=/usr/bin:/bin",
		"IGGY_CONNECTORS_CONFIG_PATH=config.toml",
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0",
		"IGGY_SUPERVISOR_RUNNER_PATH=" + runnerBin,
	}
	if os.Geteuid() == 0 {
		// Root writes anywhere: run as the image's user, for whom the root-owned directory is
		// read-only, as a root-owned volume is in the container.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
		for dir := app; dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, dir := range []string{bin, filepath.Dir(bin)} {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := os.Chmod(state, 0o555); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("the supervisor started with an unwritable state directory:\n%s", out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the supervisor did not stop within 30s:\n%s", out.String())
	}
	for _, want := range []string{state, "not writable by uid", "chown"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the start error does not say %q:\n%s", want, out.String())
		}
	}
}

// copyExecutable copies the executable from into dir and returns the copy's path.
func copyExecutable(t *testing.T, from, dir string) string {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, filepath.Base(from))
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return to
}
