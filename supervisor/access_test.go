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
	type call struct {
		method, path string
		header       http.Header
		want         int
		bodyHas      string
	}
	check := func(t *testing.T, p *testkit.SupervisorProc, calls []call) {
		t.Helper()
		for _, c := range calls {
			resp, body, err := p.Do(c.method, c.path, c.header, "")
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.path, err)
			}
			if resp.StatusCode != c.want || !strings.Contains(string(body), c.bodyHas) {
				t.Fatalf("%s %s %v: %d %q; want %d with %q", c.method, c.path, c.header, resp.StatusCode, body, c.want, c.bodyHas)
			}
		}
	}

	t.Run("no key beyond loopback", func(t *testing.T) {
		p := start(t, "", "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		check(t, p, []call{
			{"GET", "/", nil, 200, "Connector Runtime API"},
			{"GET", "/health", nil, 200, "healthy"},
			{"GET", "/stats", nil, 200, `"key":"out"`},
			{"GET", "/sinks", nil, 200, `"key":"out"`},
			{"GET", "/metrics", nil, 200, "iggy_connector"},
			{"GET", "/sinks/out", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"},
			{"GET", "/sinks/out/configs/active", nil, 401, "http.api_key"},
			{"GET", "/sinks/out/configs/plugin", nil, 401, "http.api_key"},
			{"GET", "/sinks/out/offsets", nil, 401, "http.api_key"},
			{"POST", "/sinks/out/pause", nil, 401, "IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED"},
			{"POST", "/sinks/out/stop", nil, 401, "http.api_key"},
			{"DELETE", "/sinks/out/offsets", nil, 401, "http.api_key"},
		})
		if !strings.Contains(p.Logs(), "without an API key: control, config and offset routes answer 401") {
			t.Fatalf("no startup warning; logs:\n%s", p.Logs())
		}
	})
	t.Run("opted out", func(t *testing.T) {
		p := start(t, "allow_unauthenticated = true", "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		check(t, p, []call{
			{"POST", "/sinks/out/pause", nil, 204, ""},
			{"GET", "/sinks/out", nil, 200, `"status":"paused"`},
			{"POST", "/sinks/out/resume", nil, 204, ""},
		})
		if !strings.Contains(p.Logs(), "http.allow_unauthenticated is true") {
			t.Fatalf("no warning about the opt-out; logs:\n%s", p.Logs())
		}
	})
	t.Run("key", func(t *testing.T) {
		p := start(t, `api_key = "`+apiKey+`"`, "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		bearer := http.Header{"Authorization": {"Bearer " + apiKey}}
		check(t, p, []call{
			{"GET", "/health", nil, 200, "healthy"},
			{"GET", "/stats", nil, 401, ""},
			{"GET", "/metrics", nil, 401, ""},
			{"GET", "/metrics", bearer, 200, "iggy_connector"},
			{"POST", "/sinks/out/pause", bearer, 204, ""},
			{"GET", "/sinks/out", withKey(), 200, `"status":"paused"`},
			{"POST", "/sinks/out/resume", http.Header{"Api-Key": {apiKey}, "Origin": {"https://evil.example"}}, 403, "http.cors.allowed_origins"},
			{"POST", "/sinks/out/resume", withKey(), 204, ""},
			// A key holder may name the server any way (a Service name, say).
			{"GET", "/sinks/out", http.Header{"Api-Key": {apiKey}, "Host": {"connectors.iggy.svc:8081"}}, 200, `"status":"running"`},
		})
	})
	t.Run("public metrics", func(t *testing.T) {
		p := start(t, `api_key = "`+apiKey+`"`, "IGGY_CONNECTORS_HTTP_METRICS_PUBLIC=true")
		check(t, p, []call{{"GET", "/metrics", nil, 200, "iggy_connector"}, {"GET", "/stats", nil, 401, ""}})
	})
	t.Run("browsers on loopback", func(t *testing.T) {
		p := start(t, `allowed_hosts = ["connectors.test"]`)
		check(t, p, []call{
			{"POST", "/sinks/out/stop", http.Header{"Origin": {"https://evil.example"}}, 403, "origin"},
			{"GET", "/sinks/out/configs/active", http.Header{"Host": {"evil.example:8081"}}, 421, "http.allowed_hosts"},
			{"GET", "/sinks/out", http.Header{"Host": {"connectors.test:8081"}}, 200, `"key":"out"`},
			{"GET", "/sinks/out", http.Header{"Host": {"localhost"}}, 200, `"key":"out"`},
		})
	})
}
