package supervisor_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The supervisor's API applies pkg/httpguard end to end, and the runners it spawns (on Unix
// sockets, without the key) still take its pause and resume: without a key on 0.0.0.0 control and
// config routes answer 401 naming the key to set; the opt-out serves them; with a key both the
// api-key header and a Bearer token work, the metrics route needing one unless public; foreign
// origins and rebound Host names are refused.
func TestAPIAccessPolicy(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	start := func(t *testing.T, httpExtra string, env ...string) *testkit.SupervisorProc {
		f := newFixture(t, broker)
		f.writeRuntime(t, httpExtra)
		f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\na = 1\n")
		return testkit.StartSupervisor(t, f.dir, f.env(env...), waitLong)
	}

	t.Run("no key beyond loopback", func(t *testing.T) {
		p := start(t, "", "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("GET", "/", nil, 200, "Connector Runtime API"),
			testkit.Call("GET", "/health", nil, 200, "healthy"),
			testkit.Call("GET", "/stats", nil, 200, `"key":"out"`),
			testkit.Call("GET", "/sinks", nil, 200, `"key":"out"`),
			testkit.Call("GET", "/metrics", nil, 200, "iggy_connector"),
			testkit.Call("GET", "/sinks/out", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"),
			testkit.Call("GET", "/sinks/out/configs/active", nil, 401, "http.api_key"),
			testkit.Call("GET", "/sinks/out/configs/plugin", nil, 401, "http.api_key"),
			testkit.Call("GET", "/sinks/out/offsets", nil, 401, "http.api_key"),
			testkit.Call("POST", "/sinks/out/pause", nil, 401, "IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED"),
			testkit.Call("POST", "/sinks/out/stop", nil, 401, "http.api_key"),
			testkit.Call("DELETE", "/sinks/out/offsets", nil, 401, "http.api_key"),
		})
		if !strings.Contains(p.Logs(), "without an API key: control, config and offset routes answer 401") {
			t.Fatalf("no startup warning; logs:\n%s", p.Logs())
		}
	})
	t.Run("opted out", func(t *testing.T) {
		p := start(t, "allow_unauthenticated = true", "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("POST", "/sinks/out/pause", nil, 204, ""),
			testkit.Call("GET", "/sinks/out", nil, 200, `"status":"paused"`),
			testkit.Call("POST", "/sinks/out/resume", nil, 204, ""),
		})
		if !strings.Contains(p.Logs(), "http.allow_unauthenticated is true") {
			t.Fatalf("no warning about the opt-out; logs:\n%s", p.Logs())
		}
	})
	t.Run("key", func(t *testing.T) {
		p := start(t, `api_key = "`+apiKey+`"`, "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		bearer := http.Header{"Authorization": {"Bearer " + apiKey}}
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("GET", "/health", nil, 200, "healthy"),
			testkit.Call("GET", "/stats", nil, 401, ""),
			testkit.Call("GET", "/metrics", nil, 401, ""),
			testkit.Call("GET", "/metrics", bearer, 200, "iggy_connector"),
			testkit.Call("POST", "/sinks/out/pause", bearer, 204, ""),
			testkit.Call("GET", "/sinks/out", withKey(), 200, `"status":"paused"`),
			testkit.Call("POST", "/sinks/out/resume", http.Header{"Api-Key": {apiKey}, "Origin": {"https://evil.example"}}, 403, "http.cors.allowed_origins"),
			testkit.Call("POST", "/sinks/out/resume", withKey(), 204, ""),
			// A key holder may name the server any way (a Service name, say).
			testkit.Call("GET", "/sinks/out", http.Header{"Api-Key": {apiKey}, "Host": {"connectors.iggy.svc:8081"}}, 200, `"status":"running"`),
		})
	})
	t.Run("public metrics", func(t *testing.T) {
		p := start(t, `api_key = "`+apiKey+`"`, "IGGY_CONNECTORS_HTTP_METRICS_PUBLIC=true")
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{testkit.Call("GET", "/metrics", nil, 200, "iggy_connector"), testkit.Call("GET", "/stats", nil, 401, "")})
	})
	t.Run("browsers on loopback", func(t *testing.T) {
		p := start(t, `allowed_hosts = ["connectors.test"]`)
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("POST", "/sinks/out/stop", http.Header{"Origin": {"https://evil.example"}}, 403, "origin"),
			testkit.Call("GET", "/sinks/out/configs/active", http.Header{"Host": {"evil.example:8081"}}, 421, "http.allowed_hosts"),
			testkit.Call("GET", "/sinks/out", http.Header{"Host": {"connectors.test:8081"}}, 200, `"key":"out"`),
			testkit.Call("GET", "/sinks/out", http.Header{"Host": {"localhost"}}, 200, `"key":"out"`),
		})
	})
}
