package httpguard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
)

func TestExposed(t *testing.T) {
	cases := []struct {
		address string
		want    bool
	}{
		{"127.0.0.1:8081", false},
		{"127.0.0.2:0", false},
		{"[::1]:8081", false},
		{"localhost:8081", false},
		{"LOCALHOST.:8081", false},
		{"unix:/run/iggy/api.sock", false},
		{"0.0.0.0:8081", true},
		{"0.0.0.0:0", true},
		{"[::]:8081", true},
		{":8081", true},
		{"10.0.0.5:8081", true},
		{"[fe80::1]:8081", true},
		{"runner.internal:8081", true},
		{"localhost.example.com:8081", true},
		{"", true},
	}
	for _, c := range cases {
		if got := httpguard.Exposed(c.address); got != c.want {
			t.Errorf("Exposed(%q) = %v, want %v", c.address, got, c.want)
		}
	}
}

func TestNewRefusesBadAllowedHosts(t *testing.T) {
	for _, entry := range []string{"", "http://a.example", "a.example:8081", "a.example/x", "a*.example", "*."} {
		h := config.DefaultRuntime().HTTP
		h.AllowedHosts = []string{"ok.example", entry}
		_, err := httpguard.New(h)
		if err == nil || !strings.Contains(err.Error(), "http.allowed_hosts") {
			t.Errorf("allowed_hosts entry %q: error %v, want one naming http.allowed_hosts", entry, err)
		}
	}
}

// policy is one server configuration of the table below.
type policy func(h *config.HTTP)

var (
	loopbackNoKey = func(h *config.HTTP) { h.Address = "127.0.0.1:8081" }
	exposedNoKey  = func(h *config.HTTP) { h.Address = "0.0.0.0:8081" }
	exposedOptOut = func(h *config.HTTP) { h.Address = "0.0.0.0:8081"; h.AllowUnauthenticated = true }
	exposedKey    = func(h *config.HTTP) { h.Address = "0.0.0.0:8081"; h.APIKey = "s3cret" }
	publicMetrics = func(h *config.HTTP) { h.Address = "0.0.0.0:8081"; h.APIKey = "s3cret"; h.Metrics.Public = true }
	unixNoKey     = func(h *config.HTTP) { h.Address = "unix:/run/api.sock" }
	withCORS      = func(h *config.HTTP) {
		h.Address = "127.0.0.1:8081"
		h.CORS.Enabled, h.CORS.AllowedOrigins = true, []string{"https://ops.example"}
	}
	anyOriginCORS = func(h *config.HTTP) { h.Address = "127.0.0.1:8081"; h.CORS.Enabled = true }
	hostList      = func(h *config.HTTP) {
		h.Address = "0.0.0.0:8081"
		h.AllowUnauthenticated = true
		h.AllowedHosts = []string{"connectors.example", ".svc.cluster.local"}
	}
	namedListener = func(h *config.HTTP) { h.Address = "box.lan:8081" }
	consoleOff    = func(h *config.HTTP) { h.Address = "0.0.0.0:8081"; h.APIKey = "s3cret"; h.UI.Enabled = false }
)

// Each case runs a real server (loopback) whose policy is built for the configured address; the
// rule being a function of that address, a policy for 0.0.0.0 is tested without leaving loopback.
func TestWrap(t *testing.T) {
	const key = "s3cret"
	cases := []struct {
		name         string
		policy       policy
		method, path string
		host         string // "" keeps the test server's 127.0.0.1:port
		header       http.Header
		want         int
		bodyHas      string // a part of the answer's body; "" checks it is empty for 401
	}{
		// Secure by default: no key beyond loopback.
		{"exposed: / open", exposedNoKey, "GET", "/", "", nil, 200, "reached"},
		{"exposed: health open", exposedNoKey, "GET", "/health", "", nil, 200, "reached"},
		{"exposed: ready open", exposedNoKey, "GET", "/ready", "", nil, 200, "reached"},
		{"exposed: stats open", exposedNoKey, "GET", "/stats", "", nil, 200, "reached"},
		{"exposed: list open", exposedNoKey, "GET", "/sinks", "", nil, 200, "reached"},
		{"exposed: metrics open", exposedNoKey, "GET", "/metrics", "", nil, 200, "reached"},
		{"exposed: pause refused", exposedNoKey, "POST", "/sinks/pg/pause", "", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"},
		{"exposed: runner pause refused", exposedNoKey, "POST", "/pause", "", nil, 401, "http.allow_unauthenticated"},
		{"exposed: details refused", exposedNoKey, "GET", "/sinks/pg", "", nil, 401, "http.api_key"},
		{"exposed: active config refused", exposedNoKey, "GET", "/sinks/pg/configs/active", "", nil, 401, "http.api_key"},
		{"exposed: offsets refused", exposedNoKey, "GET", "/sinks/pg/offsets", "", nil, 401, "http.api_key"},
		{"exposed: offsets rewind refused", exposedNoKey, "PUT", "/sinks/pg/offsets", "", nil, 401, "http.api_key"},
		{"exposed: tap refused (data)", exposedNoKey, "GET", "/sinks/pg/tap", "", nil, 401, "http.api_key"},
		{"exposed: logs refused (data)", exposedNoKey, "GET", "/sources/gen/logs", "", nil, 401, "http.api_key"},
		{"exposed: runner tap refused (data)", exposedNoKey, "GET", "/tap", "", nil, 401, "http.api_key"},
		{"exposed: runner logs refused (data)", exposedNoKey, "GET", "/logs", "", nil, 401, "http.api_key"},
		{"key: tap needs it", exposedKey, "GET", "/sinks/pg/tap", "", nil, 401, ""},
		{"key: logs served with it", exposedKey, "GET", "/logs", "", http.Header{"Authorization": {"Bearer " + key}}, 200, "reached"},
		{"exposed: unknown route refused", exposedNoKey, "GET", "/nope", "", nil, 401, "http.api_key"},
		{"exposed: HEAD stats open", exposedNoKey, "HEAD", "/stats", "", nil, 200, ""},
		{"exposed: POST stats refused", exposedNoKey, "POST", "/stats", "", nil, 401, ""},
		{"opt-out: pause served", exposedOptOut, "POST", "/sinks/pg/pause", "", nil, 200, "reached"},
		{"opt-out: config served", exposedOptOut, "GET", "/sinks/pg/configs/active", "", nil, 200, "reached"},
		{"loopback: pause served", loopbackNoKey, "POST", "/sinks/pg/pause", "", nil, 200, "reached"},
		{"loopback: config served", loopbackNoKey, "GET", "/sinks/pg/configs/plugin", "", nil, 200, "reached"},
		{"unix: pause served", unixNoKey, "POST", "/pause", "runner", nil, 200, "reached"},

		// The key, as upstream (empty 401) plus Bearer.
		{"key: missing", exposedKey, "GET", "/stats", "", nil, 401, ""},
		{"key: api-key header", exposedKey, "POST", "/sinks/pg/pause", "", http.Header{"Api-Key": {key}}, 200, "reached"},
		{"key: bearer", exposedKey, "GET", "/metrics", "", http.Header{"Authorization": {"Bearer " + key}}, 200, "reached"},
		{"key: wrong bearer", exposedKey, "GET", "/metrics", "", http.Header{"Authorization": {"Bearer nope"}}, 401, ""},
		{"key: health open", exposedKey, "GET", "/health", "", nil, 200, "reached"},
		{"key: ready open", exposedKey, "GET", "/ready", "", nil, 200, "reached"},
		{"key: metrics not public by default", exposedKey, "GET", "/metrics", "", nil, 401, ""},
		{"key: metrics public", publicMetrics, "GET", "/metrics", "", nil, 200, "reached"},
		{"key: public metrics leaves stats guarded", publicMetrics, "GET", "/stats", "", nil, 401, ""},
		{"key: a key holder may use any Host", exposedKey, "GET", "/sinks/pg", "sink-a.iggy.svc:8081", http.Header{"Api-Key": {key}}, 200, "reached"},

		// Browsers: foreign origins may not change state.
		{"origin: foreign POST refused", loopbackNoKey, "POST", "/sinks/pg/stop", "", http.Header{"Origin": {"https://evil.example"}}, 403, "http.cors.allowed_origins"},
		{"origin: null POST refused", loopbackNoKey, "POST", "/pause", "", http.Header{"Origin": {"null"}}, 403, "http.cors"},
		{"origin: foreign POST refused with a key too", exposedKey, "POST", "/sinks/pg/stop", "", http.Header{"Origin": {"https://evil.example"}, "Api-Key": {key}}, 403, "origin"},
		{"origin: foreign GET served", loopbackNoKey, "GET", "/stats", "", http.Header{"Origin": {"https://evil.example"}}, 200, "reached"},
		{"origin: listed origin may POST", withCORS, "POST", "/sinks/pg/stop", "", http.Header{"Origin": {"https://ops.example"}}, 200, "reached"},
		{"origin: unlisted origin with CORS on", withCORS, "DELETE", "/sinks/pg/configs", "", http.Header{"Origin": {"https://ops.example.evil"}}, 403, "origin"},
		{"origin: any origin when cors allows *", anyOriginCORS, "POST", "/sinks/pg/stop", "", http.Header{"Origin": {"https://x.example"}}, 200, "reached"},
		{"origin: no origin (curl)", loopbackNoKey, "POST", "/sinks/pg/stop", "", nil, 200, "reached"},
		{"origin: unix socket", unixNoKey, "POST", "/pause", "runner", http.Header{"Origin": {"https://evil.example"}}, 200, "reached"},

		// The console's own page: its origin is the server's (the Host it addressed).
		{"origin: same origin POST served", hostList, "POST", "/sinks/pg/pause", "connectors.example:8081", http.Header{"Origin": {"http://connectors.example:8081"}}, 200, "reached"},
		{"origin: same origin over IP", loopbackNoKey, "PUT", "/sinks/pg/configs/active", "127.0.0.1:8081", http.Header{"Origin": {"http://127.0.0.1:8081"}}, 200, "reached"},
		{"origin: same origin, default port", exposedKey, "POST", "/sinks/pg/stop", "connectors.example", http.Header{"Origin": {"https://connectors.example"}, "Api-Key": {key}}, 200, "reached"},
		{"origin: same origin still needs the key", exposedKey, "POST", "/sinks/pg/stop", "connectors.example", http.Header{"Origin": {"https://connectors.example"}}, 401, ""},
		{"origin: same name, other port", namedListener, "POST", "/sinks/pg/stop", "box.lan:8081", http.Header{"Origin": {"http://box.lan:9999"}}, 403, "origin"},
		{"origin: rebound name as its own origin", loopbackNoKey, "POST", "/sinks/pg/stop", "evil.example:8081", http.Header{"Origin": {"http://evil.example:8081"}}, 421, "http.allowed_hosts"},

		// The console's page and assets hold no data: open, as / is (its data calls are not).
		{"console: page open with a key set", exposedKey, "GET", "/ui/", "", nil, 200, "reached"},
		{"console: redirect path open", exposedKey, "GET", "/ui", "", nil, 200, "reached"},
		{"console: asset open", exposedKey, "GET", "/ui/js/main.js", "", nil, 200, "reached"},
		{"console: HEAD open", exposedKey, "HEAD", "/ui/", "", nil, 200, ""},
		{"console: any Host with a key set", exposedKey, "GET", "/ui/", "connectors.example", nil, 200, "reached"},
		{"console: open beyond loopback without a key", exposedNoKey, "GET", "/ui/", "", nil, 200, "reached"},
		{"console: rebound name refused without a key", loopbackNoKey, "GET", "/ui/", "evil.example:8081", nil, 421, "http.allowed_hosts"},
		{"console: POST is not a page read", exposedKey, "POST", "/ui/", "", nil, 401, ""},
		{"console: a look-alike path is not the console", exposedKey, "GET", "/uix", "", nil, 401, ""},
		{"console: switched off", consoleOff, "GET", "/ui/", "", nil, 401, ""},

		// Browsers: DNS rebinding sends the attacker's name as Host.
		{"host: rebound name refused", loopbackNoKey, "GET", "/sinks/pg/configs/active", "evil.example:8081", nil, 421, "http.allowed_hosts"},
		{"host: rebound name refused on stats", loopbackNoKey, "GET", "/stats", "evil.example", nil, 421, "evil.example"},
		{"host: health answers any Host", loopbackNoKey, "GET", "/health", "evil.example", nil, 200, "reached"},
		{"host: localhost", loopbackNoKey, "GET", "/stats", "localhost:8081", nil, 200, "reached"},
		{"host: a .localhost name", loopbackNoKey, "GET", "/stats", "api.localhost:8081", nil, 200, "reached"},
		{"host: an IPv4 address", exposedOptOut, "GET", "/stats", "10.0.0.5:8081", nil, 200, "reached"},
		{"host: an IPv6 address", exposedOptOut, "GET", "/stats", "[fd00::5]:8081", nil, 200, "reached"},
		{"host: a listed name", hostList, "GET", "/stats", "Connectors.Example:8081", nil, 200, "reached"},
		{"host: a listed suffix", hostList, "POST", "/pause", "sink-a.iggy.svc.cluster.local", nil, 200, "reached"},
		{"host: the suffix alone is not below it", hostList, "GET", "/stats", "svc.cluster.local", nil, 421, ""},
		{"host: an unlisted name", hostList, "GET", "/stats", "connectors.example.evil", nil, 421, ""},
		{"host: the listener's own name", namedListener, "GET", "/stats", "box.lan:8081", nil, 200, "reached"},
		{"host: unix socket takes any", unixNoKey, "GET", "/stats", "runner", nil, 200, "reached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := config.DefaultRuntime().HTTP
			c.policy(&h)
			g, err := httpguard.New(h)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "reached")
			})))
			defer srv.Close()
			req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.host != "" {
				req.Host = c.host
			}
			for name, values := range c.header {
				req.Header[name] = values
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%s %s (Host %q): %d %q, want %d", c.method, c.path, c.host, resp.StatusCode, body, c.want)
			}
			switch {
			case c.bodyHas != "" && !strings.Contains(string(body), c.bodyHas):
				t.Fatalf("body %q does not mention %q", body, c.bodyHas)
			case c.bodyHas == "" && c.want == http.StatusUnauthorized && h.APIKey != "" && len(body) != 0:
				t.Fatalf("401 with a key has upstream's empty body; got %q", body)
			}
		})
	}
}

func TestStartupWarnings(t *testing.T) {
	cases := []struct {
		name   string
		policy policy
		has    []string // none means no warning
	}{
		{"loopback", loopbackNoKey, nil},
		{"unix", unixNoKey, nil},
		{"exposed with a key", exposedKey, nil},
		{"exposed without a key", exposedNoKey, []string{"IGGY_CONNECTORS_HTTP_API_KEY"}},
		{"opted out", exposedOptOut, []string{"http.allow_unauthenticated is true"}},
		{"listed origins", withCORS, nil},
		{"any origin on loopback", anyOriginCORS, []string{`http.cors.allowed_origins = ["*"]`, "any web page", "Origin check is off"}},
		{"any origin with a key", func(h *config.HTTP) { exposedKey(h); h.CORS.Enabled = true }, []string{`http.cors.allowed_origins = ["*"]`, "any web page"}},
	}
	for _, c := range cases {
		h := config.DefaultRuntime().HTTP
		c.policy(&h)
		g, err := httpguard.New(h)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(g.StartupWarnings(), "\n")
		if (len(c.has) == 0) != (got == "") {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.has)
		}
		for _, want := range c.has {
			if !strings.Contains(got, want) {
				t.Errorf("%s: warnings %q, want one containing %q", c.name, got, want)
			}
		}
	}
}

// [http.cors] with allowed_origins = ["*"] on a listener beyond loopback without an API key is
// refused at start, naming the keys, even with http.allow_unauthenticated: any web page could then
// drive the API from the browser of anyone who reaches it.
func TestAnyOriginRefusedBeyondLoopbackWithoutKey(t *testing.T) {
	for name, p := range map[string]policy{
		"exposed without a key": func(h *config.HTTP) { exposedNoKey(h); h.CORS.Enabled = true },
		"opted out":             func(h *config.HTTP) { exposedOptOut(h); h.CORS.Enabled = true },
		"a host name":           func(h *config.HTTP) { namedListener(h); h.CORS.Enabled = true },
	} {
		h := config.DefaultRuntime().HTTP
		p(&h)
		_, err := httpguard.New(h)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, want := range []string{"http.cors.allowed_origins", "http.cors.enabled", "http.api_key", h.Address} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not name %s", name, err, want)
			}
		}
	}
	for name, p := range map[string]policy{
		"with a key":       func(h *config.HTTP) { exposedKey(h); h.CORS.Enabled = true },
		"on loopback":      anyOriginCORS,
		"on a Unix socket": func(h *config.HTTP) { unixNoKey(h); h.CORS.Enabled = true },
		"listed origins":   func(h *config.HTTP) { withCORS(h); h.Address = "0.0.0.0:8081" },
		"CORS off":         exposedNoKey,
	} {
		h := config.DefaultRuntime().HTTP
		p(&h)
		if _, err := httpguard.New(h); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
