package supervisor_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The console is served under /ui/ beside the API (its browser tests are in supervisor/console):
// open without the key, which its data calls need; off with [http.ui] enabled = false; / is
// unchanged; a metrics route under /ui/ is refused at start.
func TestConsoleRoutes(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	start := func(t *testing.T, httpExtra string, env ...string) *testkit.SupervisorProc {
		f := newFixture(t, broker)
		f.writeRuntime(t, httpExtra)
		f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
		return testkit.StartSupervisor(t, f.dir, f.env(env...), waitLong)
	}
	t.Run("with a key", func(t *testing.T) {
		p := start(t, `api_key = "`+apiKey+`"`, "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0")
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("GET", "/", nil, 200, "Connector Runtime API"),
			testkit.Call("GET", "/ui/", nil, 200, `<script type="module" src="js/main.js">`),
			testkit.Call("GET", "/ui", nil, 200, "iggy-connectors console"), // redirected to /ui/
			testkit.Call("GET", "/ui/js/api.js", nil, 200, "Authorization"),
			testkit.Call("GET", "/ui/nope", nil, 404, ""),
			testkit.Call("GET", "/stats", nil, 401, ""),
			testkit.Call("GET", "/stats", withKey(), 200, `"key":"out"`),
		})
		resp, _, err := p.Do("GET", "/ui/", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("/ui/ headers: %v", resp.Header)
		}
		if !strings.Contains(p.Logs(), "console: open http://") {
			t.Fatalf("no startup line with the console's address; logs:\n%s", p.Logs())
		}
	})
	t.Run("switched off", func(t *testing.T) {
		p := start(t, "", "IGGY_CONNECTORS_HTTP_UI_ENABLED=false")
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("GET", "/ui/", nil, 404, ""),
			testkit.Call("GET", "/", nil, 200, "Connector Runtime API"),
		})
		if strings.Contains(p.Logs(), "console: open") {
			t.Fatal("the startup names a console that is off")
		}
	})
	t.Run("the page's own origin may act", func(t *testing.T) {
		p := start(t, "")
		origin := http.Header{"Origin": {"http://" + p.Addr}}
		testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
			testkit.Call("POST", "/sinks/out/pause", origin, 204, ""),
			testkit.Call("POST", "/sinks/out/resume", origin, 204, ""),
			testkit.Call("POST", "/sinks/out/pause", http.Header{"Origin": {"http://evil.example"}}, 403, "origin"),
		})
	})
	t.Run("metrics under /ui/", func(t *testing.T) {
		f := newFixture(t, broker)
		f.writeRuntime(t, "")
		p := testkit.StartSupervisorNoWait(t, f.dir, f.env("IGGY_CONNECTORS_HTTP_METRICS_ENDPOINT=/ui/metrics"))
		if code, err := p.Wait(waitLong); err != nil || code == 0 || !strings.Contains(p.Logs(), "clashes with the console") {
			t.Fatalf("exit %d, %v; logs:\n%s", code, err, p.Logs())
		}
	})
}
