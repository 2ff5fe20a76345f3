package supervisor_test

import (
	"net/http"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The REST API drops slow clients, refuses big bodies and caps its connections, over real TCP
// connections, while normal requests still work.
func TestAPIBoundsSlowClients(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"
read_timeout = "2s"
idle_timeout = "3s"
write_timeout = "50ms"
max_connections = 3`)
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	raw := testkit.RawHTTP{Network: "tcp", Addr: p.Addr, Header: withKey()}
	testkit.CheckClientBounds(t, raw, "/sinks/out/configs", "/sinks/out/configs")

	// Restart drains and starts a runner, far longer than the 50 ms write timeout: its own budget
	// lets the answer through.
	resp, body, err := p.Do("POST", "/sinks/out/restart", withKey(), "")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("restart with a 50ms write timeout: %v %v %s", resp, err, body)
	}
}
