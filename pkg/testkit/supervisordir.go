package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

// SupervisorDir writes an operator's layout for a supervisor on broker in a fresh directory:
// config.toml (the API on an ephemeral loopback port, metrics on, httpExtra added to [http], the
// local provider over connectors/) and one connectors/<name>.toml per entry of connectors. It
// returns the directory; SupervisorEnv is the environment to start it with.
func SupervisorDir(tb testing.TB, broker *devbroker.Server, httpExtra string, connectors map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{"config.toml": SupervisorConfig(broker.Addr(), httpExtra)}
	for name, content := range connectors {
		files[filepath.Join("connectors", name+".toml")] = content
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// SupervisorConfig is the runtime file of a supervisor on the broker at brokerAddr: the API on an
// ephemeral loopback port (httpExtra added to [http]), metrics on, state in state/, the local
// provider over connectors/.
func SupervisorConfig(brokerAddr, httpExtra string) string {
	return fmt.Sprintf(`[http]
enabled = true
address = "127.0.0.1:0"
%s

[http.metrics]
enabled = true
endpoint = "/metrics"

[iggy]
address = %q
username = "iggy"
password = "iggy"

[state]
path = "state"

[connectors]
config_type = "local"
config_dir = "connectors"
`, httpExtra, brokerAddr)
}

// SupervisorEnv is the environment of a supervisor started in a SupervisorDir: its config file
// and fast restart and reconnect timings, then extra.
func SupervisorEnv(extra ...string) []string {
	return append([]string{
		"IGGY_CONNECTORS_CONFIG_PATH=config.toml",
		"IGGY_SUPERVISOR_RESTART_BACKOFF_MIN=100ms",
		"IGGY_SUPERVISOR_RESTART_BACKOFF_MAX=1s",
		"IGGY_SUPERVISOR_HEALTH_INTERVAL=100ms",
		"IGGY_SUPERVISOR_DRAIN_TIMEOUT=10s",
		"IGGY_SUPERVISOR_START_TIMEOUT=20s",
		"IGGY_CONNECTOR_RECONNECT_MIN=20ms",
		"IGGY_CONNECTOR_RECONNECT_MAX=200ms",
	}, extra...)
}
