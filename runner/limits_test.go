package runner_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A runner's endpoint, on its Unix socket, drops slow clients, refuses big bodies and caps its
// connections, from the same IGGY_CONNECTORS_HTTP_* variables as the supervisor.
func TestEndpointBoundsSlowClients(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("bounded", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "a = 1")),
		testkit.ClientBoundsEnv...)
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	// No route takes a body: a POST is answered 405 once the body has been read (or 413 before).
	testkit.CheckClientBounds(t, testkit.RawHTTP{Network: "unix", Addr: p.SocketPath}, "/health", "/health")
}
