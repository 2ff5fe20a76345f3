package supervisor_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// newHandler builds a supervisor with no connectors over a local provider in a temp dir (nothing
// is started) and returns its REST handler.
func newHandler(t testing.TB, edit func(*config.Runtime)) http.Handler {
	t.Helper()
	h, err := tryHandler(t, edit)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func tryHandler(t testing.TB, edit func(*config.Runtime)) (http.Handler, error) {
	t.Helper()
	rt := config.DefaultRuntime()
	rt.Connectors.ConfigDir = t.TempDir()
	rt.State.Path = t.TempDir()
	rt.HTTP.Metrics.Enabled = true
	if edit != nil {
		edit(&rt)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	prov, err := provider.NewLocal(rt.Connectors.ConfigDir, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s, err := supervisor.New(supervisor.Options{Runtime: rt, Provider: prov, Logger: log,
		Environ: []string{"IGGY_SUPERVISOR_RUNNER_PATH=" + testkit.RunnerBinary(t)}})
	if err != nil {
		return nil, err
	}
	t.Cleanup(s.Shutdown)
	return s.Handler()
}

func serve(h http.Handler, method, path string, header http.Header, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8081" // as curl addresses the default listener (not example.com)
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// CORS follows tower-http as upstream configures it: preflights answered before auth, the origin
// rule per configuration, and the expose/credentials headers on normal answers.
func TestCORS(t *testing.T) {
	withList := newHandler(t, func(rt *config.Runtime) {
		rt.HTTP.APIKey = "k"
		rt.HTTP.CORS = config.CORS{Enabled: true, AllowedMethods: []string{"get", "post", ""}, AllowedOrigins: []string{"https://a.example"},
			AllowedHeaders: []string{"Content-Type", "api-key"}, ExposedHeaders: []string{"", "x-total"}, AllowCredentials: true, AllowPrivateNetwork: true}
	})
	anyOrigin := newHandler(t, func(rt *config.Runtime) {
		rt.HTTP.CORS = config.DefaultRuntime().HTTP.CORS
		rt.HTTP.CORS.Enabled = true
	})
	cases := []struct {
		name    string
		h       http.Handler
		method  string
		path    string
		header  http.Header
		status  int
		headers map[string]string // "" value: header must be absent
	}{
		{"preflight skips auth", withList, "OPTIONS", "/sinks", http.Header{"Origin": {"https://a.example"}, "Access-Control-Request-Private-Network": {"true"}}, 200,
			map[string]string{"Access-Control-Allow-Origin": "https://a.example", "Access-Control-Allow-Methods": "GET,POST",
				"Access-Control-Allow-Headers": "content-type,api-key", "Access-Control-Allow-Credentials": "true",
				"Access-Control-Allow-Private-Network": "true", "Vary": "origin"}},
		{"unlisted origin", withList, "OPTIONS", "/sinks", http.Header{"Origin": {"https://evil.example"}}, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Private-Network": ""}},
		{"401 still gets CORS headers", withList, "GET", "/stats", http.Header{"Origin": {"https://a.example"}}, 401,
			map[string]string{"Access-Control-Allow-Origin": "https://a.example", "Access-Control-Expose-Headers": "x-total"}},
		{"normal answer", withList, "GET", "/health", http.Header{"Origin": {"https://a.example"}}, 200,
			map[string]string{"Access-Control-Allow-Origin": "https://a.example", "Access-Control-Allow-Methods": ""}},
		{"wildcard", anyOrigin, "GET", "/", http.Header{"Origin": {"https://x.example"}}, 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Vary": "", "Access-Control-Expose-Headers": ""}},
		{"wildcard preflight", anyOrigin, "OPTIONS", "/anything", nil, 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET,POST,PUT,DELETE", "Access-Control-Allow-Headers": "content-type"}},
	}
	for _, c := range cases {
		rec := serve(c.h, c.method, c.path, c.header, "")
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d", c.name, rec.Code, c.status)
		}
		for k, want := range c.headers {
			if got := rec.Header().Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got, want)
			}
		}
	}
}

// Without CORS, OPTIONS is an ordinary request: 405 listing the route's methods.
func TestOptionsWithoutCORSIs405(t *testing.T) {
	rec := serve(newHandler(t, nil), "OPTIONS", "/sinks/x/configs/active", nil, "")
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET,HEAD,PUT" || rec.Body.Len() != 0 {
		t.Errorf("OPTIONS: %d Allow %q body %q; want 405, GET,HEAD,PUT, empty", rec.Code, rec.Header().Get("Allow"), rec.Body.String())
	}
}

// Settings upstream refuses at startup are refused with the offending key named.
func TestHandlerRejectsBadHTTPSettings(t *testing.T) {
	cases := []struct {
		name string
		edit func(*config.Runtime)
		want string
	}{
		{"wildcard not first", func(rt *config.Runtime) {
			rt.HTTP.CORS = config.CORS{Enabled: true, AllowedOrigins: []string{"https://a.example", "*"}}
		}, "allowed_origins"},
		{"wildcard with credentials", func(rt *config.Runtime) {
			rt.HTTP.CORS = config.CORS{Enabled: true, AllowedOrigins: []string{"*"}, AllowCredentials: true}
		}, "allow_credentials"},
		{"unknown method", func(rt *config.Runtime) {
			rt.HTTP.CORS = config.CORS{Enabled: true, AllowedMethods: []string{"FETCH"}}
		}, "allowed_methods"},
		{"metrics endpoint without slash", func(rt *config.Runtime) { rt.HTTP.Metrics.Endpoint = "metrics" }, "http.metrics.endpoint"},
		{"metrics endpoint on an API route", func(rt *config.Runtime) { rt.HTTP.Metrics.Endpoint = "/stats" }, "http.metrics.endpoint"},
		{"allowed host with a port", func(rt *config.Runtime) { rt.HTTP.AllowedHosts = []string{"ops.example:8081"} }, "http.allowed_hosts"},
	}
	for _, c := range cases {
		_, err := tryHandler(t, c.edit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.want)
		}
	}
}

// Bodies are checked like axum's Json extractor: media type, size and syntax before the shape.
func TestCreateBodyRejections(t *testing.T) {
	h := newHandler(t, nil)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name   string
		header http.Header
		body   string
		status int
	}{
		{"vendor JSON type accepted", http.Header{"Content-Type": {"application/vnd.api+json"}}, `{"enabled":true}`, 422},
		{"charset parameter accepted", http.Header{"Content-Type": {"application/json; charset=utf-8"}}, `{"enabled":true}`, 422},
		{"text type refused", http.Header{"Content-Type": {"text/plain"}}, `{}`, 415},
		{"trailing data", jsonCT, `{} {}`, 400},
		{"not an object", jsonCT, `[1,2]`, 422},
		{"too large", jsonCT, `{"a":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
	}
	for _, c := range cases {
		if rec := serve(h, "POST", "/sinks/k/configs", c.header, c.body); rec.Code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, rec.Code, c.status, rec.Body.String())
		}
	}
}

// Random request bodies never panic the handler and never store anything invalid: every answer
// is one of the documented statuses.
func FuzzCreateBody(f *testing.F) {
	for _, seed := range []string{`{}`, `{"enabled":true,"name":"n","path":"p","streams":[{"stream":"s","topics":["t"],"schema":"json"}]}`,
		`{"enabled":true,"name":"n","path":"p","streams":[{"stream":"s","topics":["t"],"schema":"json","poll_interval":"x"}],"plugin_config":{"a":null}}`,
		`nul`, `{"streams":[{}]}`} {
		f.Add(seed)
	}
	h := newHandler(f, nil)
	f.Fuzz(func(t *testing.T, body string) {
		rec := serve(h, "POST", "/sinks/k/configs", http.Header{"Content-Type": {"application/json"}}, body)
		switch rec.Code {
		case 200, 400, 413, 422:
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}

// Paths are matched as sent, as axum does: an empty segment matches nothing (404, empty body, no
// redirect to the cleaned path), and "." or ".." is an ordinary segment (here: an unknown key).
func TestUncleanPathsAreNotRedirected(t *testing.T) {
	h := newHandler(t, nil)
	cases := []struct {
		path, body string
	}{
		{"//sinks", ""},
		{"/sinks//stdout", ""},
		{"///", ""},
		{"/sinks/stdout//configs", ""},
		{"/./health", ""},
		{"/sinks/.", `{"code":"sink_not_found","reason":"Sink not found with key: ."}`},
		{"/sinks/../configs", `{"code":"sink_not_found","reason":"Sink not found with key: .."}`},
		{"/sources/./transforms", `{"code":"source_not_found","reason":"Source not found with key: ."}`},
	}
	for _, c := range cases {
		rec := serve(h, "GET", c.path, nil, "")
		if rec.Code != 404 || rec.Body.String() != c.body || rec.Header().Get("Location") != "" {
			t.Errorf("GET %s: %d %q (Location %q); want 404 %q, no Location", c.path, rec.Code, rec.Body.String(), rec.Header().Get("Location"), c.body)
		}
		wantType := ""
		if c.body != "" {
			wantType = "application/json"
		}
		if got := rec.Header().Get("Content-Type"); got != wantType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, wantType)
		}
	}
}
