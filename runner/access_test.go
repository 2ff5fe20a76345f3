package runner_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A runner process on a TCP endpoint applies the access policy of pkg/httpguard: without a key on
// 0.0.0.0 it refuses POST /pause (401 naming the key to set) but answers probes and stats; with
// http.allow_unauthenticated it serves it; with a key it takes the api-key header or a Bearer token,
// the metrics route needing it unless public; foreign origins and rebound Host names are refused.
func TestEndpointAccessPolicy(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	start := func(t *testing.T, address string, extra ...string) (string, *testkit.RunnerProc) {
		env := withConfig(baseEnv(srv, t.TempDir()), sinkTOML("guarded", testkit.PluginPath(t, "null_sink"), "demo", "events", "", ""))
		p := testkit.StartRunner(t, append(env, append([]string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + address}, extra...)...))
		return "http://" + p.WaitTCPEndpoint(t, waitLong), p
	}

	t.Run("no key beyond loopback", func(t *testing.T) {
		base, p := start(t, "0.0.0.0:0")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{
			testkit.Call("GET", "/", nil, 200, "Connector Runtime API"),
			testkit.Call("GET", "/health", nil, 200, `"status":"healthy"`),
			testkit.Call("GET", "/stats", nil, 200, `"key":"guarded"`),
			testkit.Call("GET", "/metrics", nil, 200, "iggy_connector"),
			testkit.Call("POST", "/pause", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"),
			testkit.Call("POST", "/resume", nil, 401, "http.allow_unauthenticated"),
		})
		if !strings.Contains(p.Logs(), "without an API key: control, config and offset routes answer 401") {
			t.Fatalf("no startup warning; logs:\n%s", p.Logs())
		}
	})
	t.Run("opted out", func(t *testing.T) {
		base, p := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED=true")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{testkit.Call("POST", "/pause", nil, 204, ""), testkit.Call("POST", "/resume", nil, 204, "")})
		if !strings.Contains(p.Logs(), "http.allow_unauthenticated is true") {
			t.Fatalf("no warning about the opt-out; logs:\n%s", p.Logs())
		}
	})
	t.Run("key", func(t *testing.T) {
		base, _ := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y")
		bearer := http.Header{"Authorization": {"Bearer k3y"}}
		testkit.CheckCalls(t, base, []testkit.HTTPCall{
			testkit.Call("GET", "/health", nil, 200, ""),
			testkit.Call("GET", "/stats", nil, 401, ""),
			testkit.Call("GET", "/metrics", nil, 401, ""),
			testkit.Call("GET", "/metrics", bearer, 200, "iggy_connector"),
			testkit.Call("POST", "/pause", http.Header{"Api-Key": {"k3y"}}, 204, ""),
			testkit.Call("POST", "/resume", http.Header{"Api-Key": {"k3y"}, "Origin": {"https://evil.example"}}, 403, "http.cors.allowed_origins"),
			testkit.Call("POST", "/resume", bearer, 204, ""),
		})
	})
	t.Run("public metrics", func(t *testing.T) {
		base, _ := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y", "IGGY_CONNECTORS_HTTP_METRICS_PUBLIC=true")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{testkit.Call("GET", "/metrics", nil, 200, "iggy_connector"), testkit.Call("GET", "/stats", nil, 401, "")})
	})
	t.Run("browsers on loopback", func(t *testing.T) {
		base, _ := start(t, "127.0.0.1:0")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{
			testkit.Call("POST", "/pause", http.Header{"Origin": {"https://evil.example"}}, 403, "origin"),
			testkit.Call("GET", "/stats", http.Header{"Host": {"evil.example:8081"}}, 421, "http.allowed_hosts"),
			testkit.Call("GET", "/stats", http.Header{"Host": {"localhost:8081"}}, 200, ""),
			testkit.Call("POST", "/pause", nil, 204, ""),
		})
	})
}
