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
	type call struct {
		method, path string
		header       http.Header
		want         int
		bodyHas      string
	}
	check := func(t *testing.T, base string, calls []call) {
		t.Helper()
		for _, c := range calls {
			resp, body, err := testkit.DoHTTP(c.method, base+c.path, c.header, "")
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.path, err)
			}
			if resp.StatusCode != c.want || !strings.Contains(string(body), c.bodyHas) {
				t.Fatalf("%s %s %v: %d %q; want %d with %q", c.method, c.path, c.header, resp.StatusCode, body, c.want, c.bodyHas)
			}
		}
	}

	t.Run("no key beyond loopback", func(t *testing.T) {
		base, p := start(t, "0.0.0.0:0")
		check(t, base, []call{
			{"GET", "/", nil, 200, "Connector Runtime API"},
			{"GET", "/health", nil, 200, `"status":"healthy"`},
			{"GET", "/stats", nil, 200, `"key":"guarded"`},
			{"GET", "/metrics", nil, 200, "iggy_connector"},
			{"POST", "/pause", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"},
			{"POST", "/resume", nil, 401, "http.allow_unauthenticated"},
		})
		if !strings.Contains(p.Logs(), "without an API key: control, config and offset routes answer 401") {
			t.Fatalf("no startup warning; logs:\n%s", p.Logs())
		}
	})
	t.Run("opted out", func(t *testing.T) {
		base, p := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED=true")
		check(t, base, []call{{"POST", "/pause", nil, 204, ""}, {"POST", "/resume", nil, 204, ""}})
		if !strings.Contains(p.Logs(), "http.allow_unauthenticated is true") {
			t.Fatalf("no warning about the opt-out; logs:\n%s", p.Logs())
		}
	})
	t.Run("key", func(t *testing.T) {
		base, _ := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y")
		bearer := http.Header{"Authorization": {"Bearer k3y"}}
		check(t, base, []call{
			{"GET", "/health", nil, 200, ""},
			{"GET", "/stats", nil, 401, ""},
			{"GET", "/metrics", nil, 401, ""},
			{"GET", "/metrics", bearer, 200, "iggy_connector"},
			{"POST", "/pause", http.Header{"Api-Key": {"k3y"}}, 204, ""},
			{"POST", "/resume", http.Header{"Api-Key": {"k3y"}, "Origin": {"https://evil.example"}}, 403, "http.cors.allowed_origins"},
			{"POST", "/resume", bearer, 204, ""},
		})
	})
	t.Run("public metrics", func(t *testing.T) {
		base, _ := start(t, "0.0.0.0:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y", "IGGY_CONNECTORS_HTTP_METRICS_PUBLIC=true")
		check(t, base, []call{{"GET", "/metrics", nil, 200, "iggy_connector"}, {"GET", "/stats", nil, 401, ""}})
	})
	t.Run("browsers on loopback", func(t *testing.T) {
		base, _ := start(t, "127.0.0.1:0")
		check(t, base, []call{
			{"POST", "/pause", http.Header{"Origin": {"https://evil.example"}}, 403, "origin"},
			{"GET", "/stats", http.Header{"Host": {"evil.example:8081"}}, 421, "http.allowed_hosts"},
			{"GET", "/stats", http.Header{"Host": {"localhost:8081"}}, 200, ""},
			{"POST", "/pause", nil, 204, ""},
		})
	})
}
