package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// configAPI is a small but real implementation of the config provider API
// (docs/config.md §5.2), served over HTTP by the tests. Faults are injected per
// test through the fields guarded by mu.
type configAPI struct {
	mu       sync.Mutex
	versions map[string]map[uint64]config.Connector // "sink/key" -> version -> config
	active   map[string]uint64
	requests []string // "METHOD path?query"
	headers  []http.Header

	failures   int           // answer the next failures requests with failStatus
	failStatus int           // status used for injected failures
	delay      time.Duration // wait this long before answering
	rawBody    string        // when set, answer every data request with this body
	envelope   bool          // wrap data as {"result":{"payload":...,"error":null}}
	resetConns int           // close the next resetConns connections without answering
}

func newConfigAPI(t testing.TB) (*configAPI, *httptest.Server) {
	api := &configAPI{versions: map[string]map[uint64]config.Connector{}, active: map[string]uint64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /configs/active", api.listActive)
	mux.HandleFunc("GET /runtimes/edge-1/active", api.listActive)
	mux.HandleFunc("GET /{t}/{key}/configs", api.listVersions)
	mux.HandleFunc("POST /{t}/{key}/configs", api.create)
	mux.HandleFunc("GET /{t}/{key}/configs/active", api.getActive)
	mux.HandleFunc("PUT /{t}/{key}/configs/active", api.setActive)
	mux.HandleFunc("GET /{t}/{key}/configs/{version}", api.getVersion)
	mux.HandleFunc("DELETE /{t}/{key}/configs", api.delete)
	// Custom templates used by TestHTTPURLTemplates.
	mux.HandleFunc("GET /api/v2/connectors/{t}/{key}", api.getVersionByQuery)
	mux.HandleFunc("DELETE /api/v2/connectors/{t}/{key}", api.delete)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.mu.Lock()
		api.requests = append(api.requests, r.Method+" "+r.URL.RequestURI())
		api.headers = append(api.headers, r.Header.Clone())
		reset := api.resetConns > 0
		if reset {
			api.resetConns--
		}
		fail := api.failures > 0
		if fail {
			api.failures--
		}
		delay := api.delay
		api.mu.Unlock()
		if reset {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if fail {
			http.Error(w, "injected failure", api.failStatus)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return api, srv
}

func kindOf(w http.ResponseWriter, r *http.Request) (config.ConnectorKind, string, bool) {
	switch r.PathValue("t") {
	case "sinks", "sink":
		return config.KindSink, "sink/" + r.PathValue("key"), true
	case "sources", "source":
		return config.KindSource, "source/" + r.PathValue("key"), true
	}
	http.NotFound(w, r)
	return "", "", false
}

func (a *configAPI) reply(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	if a.rawBody != "" {
		fmt.Fprint(w, a.rawBody)
		return
	}
	if a.envelope {
		fmt.Fprintf(w, `{"result":{"payload":%s,"error":null},"meta":{}}`, data)
		return
	}
	w.Write(data)
}

func (a *configAPI) activeOf(id string) (config.Connector, bool) {
	vs := a.versions[id]
	if len(vs) == 0 {
		return config.Connector{}, false
	}
	v, ok := a.active[id]
	if !ok {
		v = slices.Max(slices.Collect(func(yield func(uint64) bool) {
			for k := range vs {
				if !yield(k) {
					return
				}
			}
		}))
	}
	c, ok := vs[v]
	return c, ok
}

func (a *configAPI) listActive(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sinks, sources := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for id := range a.versions {
		c, ok := a.activeOf(id)
		if !ok {
			continue
		}
		body, _ := c.MarshalJSON()
		if c.Kind == config.KindSink {
			sinks[c.Key] = body
		} else {
			sources[c.Key] = body
		}
	}
	data, _ := json.Marshal(map[string]any{"sinks": sinks, "sources": sources})
	a.reply(w, data)
}

func (a *configAPI) listVersions(w http.ResponseWriter, r *http.Request) {
	_, id, ok := kindOf(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var items []json.RawMessage
	for _, c := range a.versions[id] {
		items = append(items, c.VersionJSON(false))
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	data, _ := json.Marshal(items)
	a.reply(w, data)
}

func (a *configAPI) create(w http.ResponseWriter, r *http.Request) {
	kind, id, ok := kindOf(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
		return
	}
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var fields map[string]any
	_ = json.Unmarshal(body, &fields)
	for _, k := range []string{"enabled", "name", "path", "transforms", "streams", "plugin_config_format", "plugin_config", "verbose", "benchmark"} {
		if _, ok := fields[k]; !ok {
			http.Error(w, "create body lacks "+k, http.StatusUnprocessableEntity)
			return
		}
	}
	c, err := config.ParseCreateBody(kind, r.PathValue("key"), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.versions[id] == nil {
		a.versions[id] = map[uint64]config.Connector{}
	}
	c.Version = uint64(len(a.versions[id]))
	for _, taken := a.versions[id][c.Version]; taken; _, taken = a.versions[id][c.Version] {
		c.Version++
	}
	a.versions[id][c.Version] = c
	a.reply(w, c.VersionJSON(false))
}

func (a *configAPI) getActive(w http.ResponseWriter, r *http.Request) {
	_, id, ok := kindOf(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, found := a.activeOf(id)
	if !found {
		http.NotFound(w, r)
		return
	}
	a.reply(w, c.VersionJSON(true))
}

func (a *configAPI) serveVersion(w http.ResponseWriter, r *http.Request, id, text string) {
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		http.Error(w, "bad version", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, found := a.versions[id][v]
	if !found {
		http.NotFound(w, r)
		return
	}
	a.reply(w, c.VersionJSON(false))
}

func (a *configAPI) getVersion(w http.ResponseWriter, r *http.Request) {
	if _, id, ok := kindOf(w, r); ok {
		a.serveVersion(w, r, id, r.PathValue("version"))
	}
}

func (a *configAPI) getVersionByQuery(w http.ResponseWriter, r *http.Request) {
	if _, id, ok := kindOf(w, r); ok {
		a.serveVersion(w, r, id, r.URL.Query().Get("version"))
	}
}

func (a *configAPI) setActive(w http.ResponseWriter, r *http.Request) {
	_, id, ok := kindOf(w, r)
	if !ok {
		return
	}
	var body struct {
		Version *uint64 `json:"version"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Version == nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, found := a.versions[id][*body.Version]; !found {
		http.NotFound(w, r)
		return
	}
	a.active[id] = *body.Version
	w.WriteHeader(http.StatusNoContent)
}

func (a *configAPI) delete(w http.ResponseWriter, r *http.Request) {
	_, id, ok := kindOf(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	text := r.URL.Query().Get("version")
	if text == "" {
		delete(a.versions, id)
		delete(a.active, id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		http.Error(w, "bad version", http.StatusBadRequest)
		return
	}
	if _, found := a.versions[id][v]; !found {
		http.NotFound(w, r)
		return
	}
	delete(a.versions[id], v)
	w.WriteHeader(http.StatusNoContent)
}

func (a *configAPI) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

func (a *configAPI) set(f func(a *configAPI)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}

// httpSettings are fast test settings: short timeout and backoff.
func httpSettings(baseURL string) config.Connectors {
	c := config.DefaultRuntime().Connectors
	c.ConfigType = config.ProviderHTTP
	c.BaseURL = baseURL
	c.Timeout = 2 * time.Second
	c.Retry = config.Retry{Enabled: true, MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, BackoffMultiplier: 2}
	return c
}

func newHTTP(t *testing.T, c config.Connectors) *provider.HTTP {
	t.Helper()
	p, err := provider.NewHTTP(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sampleSink(t *testing.T) config.Connector {
	t.Helper()
	c, err := config.ParseConnector("sample", []byte(minimalSink("orders", 0)+"[transforms.delete_fields]\nenabled = true\nfields = [\"cvv\"]\n[transforms.add_fields]\nenabled = true\n[plugin_config]\ntable = \"t\"\n"), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHTTPProviderLifecycle(t *testing.T) {
	api, srv := newConfigAPI(t)
	settings := httpSettings(srv.URL)
	settings.RequestHeaders = map[string]string{"authorization": "Bearer 7f3c9e"}
	p := newHTTP(t, settings)
	sink := sampleSink(t)

	first, err := p.Create(ctx, config.KindSink, "orders", sink)
	if err != nil {
		t.Fatal(err)
	}
	sink.Name = "second"
	second, err := p.Create(ctx, config.KindSink, "orders", sink)
	if err != nil {
		t.Fatal(err)
	}
	if first.Version != 0 || second.Version != 1 || second.Name != "second" ||
		!slices.Equal(second.TransformOrder, []string{"delete_fields", "add_fields"}) {
		t.Fatalf("created %+v and %+v", first, second)
	}
	versions, err := p.Versions(ctx, config.KindSink, "orders")
	if err != nil || len(versions) != 2 || versions[0].Version != 0 || versions[1].Version != 1 {
		t.Fatalf("Versions = %+v, %v", versions, err)
	}
	got, err := p.GetVersion(ctx, config.KindSink, "orders", 1)
	if err != nil || !reflect.DeepEqual(got, second) {
		t.Fatalf("GetVersion(1) = %+v, %v; want %+v", got, err, second)
	}
	if err := p.SetActive(ctx, config.KindSink, "orders", 0); err != nil {
		t.Fatal(err)
	}
	active, err := p.Get(ctx, config.KindSink, "orders")
	if err != nil || active.Version != 0 {
		t.Fatalf("Get after SetActive(0) = v%d, %v", active.Version, err)
	}
	list, err := p.List(ctx)
	if err != nil || len(list) != 1 || list[0].Key != "orders" || list[0].Version != 0 || list[0].Kind != config.KindSink {
		t.Fatalf("List = %+v, %v", list, err)
	}
	one := uint64(1)
	if err := p.Delete(ctx, config.KindSink, "orders", &one); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetVersion(ctx, config.KindSink, "orders", 1); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("deleted version: %v", err)
	}
	for i, h := range api.headers {
		if h.Get("Authorization") != "Bearer 7f3c9e" {
			t.Fatalf("request %d (%s) lacks the configured header", i, api.requests[i])
		}
	}
	want := []string{
		"POST /sinks/orders/configs", "POST /sinks/orders/configs", "GET /sinks/orders/configs",
		"GET /sinks/orders/configs/1", "PUT /sinks/orders/configs/active", "GET /sinks/orders/configs/active",
		"GET /configs/active", "DELETE /sinks/orders/configs?version=1", "GET /sinks/orders/configs/1",
	}
	if got := api.seen(); !slices.Equal(got, want) {
		t.Fatalf("requests:\n got %q\nwant %q", got, want)
	}
}

func TestHTTPNotFound(t *testing.T) {
	_, srv := newConfigAPI(t)
	p := newHTTP(t, httpSettings(srv.URL))
	tests := []struct {
		name string
		call func() error
		text string
	}{
		{"get version", func() error { _, err := p.GetVersion(ctx, config.KindSource, "nope", 7); return err },
			"Source config not found with key: nope, version: 7"},
		{"get active", func() error { _, err := p.Get(ctx, config.KindSink, "nope"); return err },
			"Sink config not found with key: nope, version: 0"},
		{"set active", func() error { return p.SetActive(ctx, config.KindSink, "nope", 2) },
			"Sink config not found with key: nope, version: 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, provider.ErrNotFound) || err.Error() != tt.text {
				t.Fatalf("error = %v, want ErrNotFound %q", err, tt.text)
			}
		})
	}
}

func TestHTTPURLTemplates(t *testing.T) {
	api, srv := newConfigAPI(t)
	settings := httpSettings(srv.URL)
	settings.URLTemplates = map[string]string{
		"get_active_configs": "/runtimes/edge-1/active",
		"get_sink_config":    "/api/v2/connectors/sink/{key}?version={version}",
		"delete_sink_config": "/api/v2/connectors/sink/{key}?hard=true",
		"get_sink_configs":   "/sinks/{key}/configs?v={version}", // {version} only filled for single gets
		"unknown_operation":  "/ignored",
	}
	p := newHTTP(t, settings)
	if _, err := p.Create(ctx, config.KindSink, "orders", sampleSink(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetVersion(ctx, config.KindSink, "orders", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Versions(ctx, config.KindSink, "orders"); err != nil {
		t.Fatal(err)
	}
	zero := uint64(0)
	if err := p.Delete(ctx, config.KindSink, "orders", &zero); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /sinks/orders/configs",
		"GET /runtimes/edge-1/active",
		"GET /api/v2/connectors/sink/orders?version=0",
		"GET /sinks/orders/configs?v={version}",
		"DELETE /api/v2/connectors/sink/orders?hard=true&version=0",
	}
	if got := api.seen(); !slices.Equal(got, want) {
		t.Fatalf("requests:\n got %q\nwant %q", got, want)
	}
}

func TestHTTPErrorAnswersAndRetries(t *testing.T) {
	tests := []struct {
		name         string
		retry        bool
		failures     int
		status       int
		wantErr      string // "" means success
		wantRequests int
	}{
		{"transient 503 recovers", true, 2, http.StatusServiceUnavailable, "", 3},
		{"429 is retried", true, 1, http.StatusTooManyRequests, "", 2},
		{"408 is retried", true, 1, http.StatusRequestTimeout, "", 2},
		{"retries run out", true, 10, http.StatusBadGateway, "HTTP request failed: HTTP 502 Bad Gateway - injected failure", 4},
		{"400 is not retried", true, 1, http.StatusBadRequest, "HTTP request failed: HTTP 400 Bad Request - injected failure", 1},
		{"401 is not retried", true, 1, http.StatusUnauthorized, "HTTP 401 Unauthorized", 1},
		{"retry disabled", false, 1, http.StatusInternalServerError, "HTTP request failed: HTTP 500 Internal Server Error - injected failure", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, srv := newConfigAPI(t)
			settings := httpSettings(srv.URL)
			settings.Retry.Enabled = tt.retry
			p := newHTTP(t, settings)
			api.set(func(a *configAPI) { a.failures, a.failStatus = tt.failures, tt.status })
			_, err := p.List(ctx)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("List = %v, want success", err)
			}
			if tt.wantErr != "" && (!errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("List = %v, want ErrRequestFailed with %q", err, tt.wantErr)
			}
			if got := len(api.seen()); got != tt.wantRequests {
				t.Fatalf("server saw %d requests, want %d", got, tt.wantRequests)
			}
		})
	}
}

func TestHTTPMalformedBodies(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		call    func(p *provider.HTTP) error
		wantErr string
	}{
		{"not JSON", "<html>oops</html>", func(p *provider.HTTP) error { _, err := p.List(ctx); return err },
			"HTTP request failed: Failed to parse JSON response"},
		{"wrong shape for active configs", `[1,2]`, func(p *provider.HTTP) error { _, err := p.List(ctx); return err },
			"Failed to deserialize data"},
		{"versions not an array", `{"a":1}`, func(p *provider.HTTP) error { _, err := p.Versions(ctx, config.KindSink, "a"); return err },
			"Failed to deserialize data"},
		{"truncated", `{"sinks":{`, func(p *provider.HTTP) error { _, err := p.List(ctx); return err },
			"Failed to parse JSON response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, srv := newConfigAPI(t)
			api.set(func(a *configAPI) { a.rawBody = tt.body })
			err := tt.call(newHTTP(t, httpSettings(srv.URL)))
			if !errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want ErrRequestFailed with %q", err, tt.wantErr)
			}
			if errors.Is(err, provider.ErrInvalid) {
				t.Fatalf("a bad server answer must not look like a bad request: %v", err)
			}
		})
	}
}

func TestHTTPResponsePaths(t *testing.T) {
	tests := []struct {
		name      string
		dataPath  string
		errorPath string
		rawBody   string // "" = the server's enveloped answer
		wantErr   string
	}{
		{"data path", "result.payload", "result.error", "", ""},
		{"error string", "result.payload", "result.error", `{"result":{"error":"quota exceeded"}}`, "HTTP request failed: API returned error: quota exceeded"},
		{"error object", "result.payload", "result.error", `{"result":{"error":{"code":7}}}`, `API returned error: {"code":7}`},
		{"error false counts", "result.payload", "result.error", `{"result":{"error":false,"payload":{}}}`, "API returned error: false"},
		{"array index", "items.1", "", `{"items":[null,{"sinks":{}}]}`, ""},
		{"missing data path", "result.payload", "", `{"a":1,"b":2}`, "Data path 'result.payload' not found in response. Response structure: { a, b }"},
		{"summary of many keys", "x", "", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`, "Response structure: { a, b, c, d, e ... and 2 more fields }"},
		{"summary of an array", "x", "", `[1,2,3]`, "Response structure: [array of 3 items]"},
		{"scalar mid-path", "a.b", "", `{"a":"text"}`, "Response structure: { a }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, srv := newConfigAPI(t)
			api.set(func(a *configAPI) { a.envelope, a.rawBody = true, tt.rawBody })
			settings := httpSettings(srv.URL)
			settings.Response = config.ResponsePaths{DataPath: tt.dataPath, ErrorPath: tt.errorPath}
			_, err := newHTTP(t, settings).List(ctx)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("List = %v", err)
				}
				return
			}
			if !errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestHTTPSlowAndBrokenConnections(t *testing.T) {
	tests := []struct {
		name         string
		setup        func(a *configAPI)
		retries      uint32
		wantErr      string
		wantRequests int
	}{
		{"slow answer times out each attempt", func(a *configAPI) { a.delay = 2 * time.Second }, 2,
			"HTTP request failed: Request failed after 2 retries", 3},
		{"slow answer without retries", func(a *configAPI) { a.delay = 2 * time.Second }, 0,
			"HTTP request failed: ", 1},
		{"reset connection is retried", func(a *configAPI) { a.resetConns = 2 }, 3, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, srv := newConfigAPI(t)
			api.set(tt.setup)
			settings := httpSettings(srv.URL)
			settings.Timeout = 50 * time.Millisecond
			settings.Retry.MaxAttempts = tt.retries
			_, err := newHTTP(t, settings).List(ctx)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("List = %v", err)
			}
			if tt.wantErr != "" && (!errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if got := len(api.seen()); got != tt.wantRequests {
				t.Fatalf("server saw %d requests, want %d", got, tt.wantRequests)
			}
		})
	}
}

func TestHTTPUnreachableServer(t *testing.T) {
	_, srv := newConfigAPI(t)
	url := srv.URL
	srv.Close()
	_, err := newHTTP(t, httpSettings(url)).List(ctx)
	if !errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), "Request failed after 3 retries") {
		t.Fatalf("error = %v", err)
	}
}

func TestHTTPCreateValidatesBeforeSending(t *testing.T) {
	api, srv := newConfigAPI(t)
	p := newHTTP(t, httpSettings(srv.URL))
	bad := sampleSink(t)
	bad.Streams[0].Schema = "xml"
	if _, err := p.Create(ctx, config.KindSink, "orders", bad); !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("Create = %v, want ErrInvalid", err)
	}
	if _, err := p.Create(ctx, config.KindSink, "bad key", sampleSink(t)); !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("Create with a bad key = %v, want ErrInvalid", err)
	}
	if got := api.seen(); len(got) != 0 {
		t.Fatalf("invalid configs were sent: %q", got)
	}
}

func TestNewHTTPRejectsBadSettings(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *config.Connectors)
		wantErr string
	}{
		{"header name", func(c *config.Connectors) { c.RequestHeaders = map[string]string{"bad header": "x"} }, "Invalid header name 'bad header'"},
		{"header value", func(c *config.Connectors) { c.RequestHeaders = map[string]string{"x-a": "a\nb"} }, "Invalid header value for 'x-a'"},
		{"backoff order", func(c *config.Connectors) { c.Retry.InitialBackoff = time.Minute }, "initial_backoff"},
		{"no base url", func(c *config.Connectors) { c.BaseURL = "" }, "base_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := httpSettings("http://127.0.0.1:1")
			tt.edit(&c)
			_, err := provider.NewHTTP(c, nil)
			if !errors.Is(err, provider.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// A config service that answers with an endless body cannot make the provider
// buffer it all: the read stops at MaxResponseBytes with an error naming the URL.
func TestHTTPOversizedAnswerIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte(" "), 1<<16)
		for written := 0; written <= provider.MaxResponseBytes; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	settings := httpSettings(srv.URL)
	settings.Retry.Enabled = false
	_, err := newHTTP(t, settings).List(ctx)
	if !errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), srv.URL) ||
		!strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error = %v, want ErrRequestFailed naming %s and the size limit", err, srv.URL)
	}
}

// One bad entry of the active configs does not fail the list: the good ones come back, each bad
// one is reported by Broken with its kind, a safe key and an error naming it; the next List
// answer replaces the report.
func TestHTTPListKeepsGoodEntriesAndReportsBadOnes(t *testing.T) {
	good := `{"key":"%s","enabled":true,"version":0,"name":"n","path":"p","streams":[{"stream":"s","%s":%s,"schema":"json"}]}`
	sink := func(key string) string { return fmt.Sprintf(good, key, "topics", `["t"]`) }
	source := fmt.Sprintf(good, "gen", "topic", `"t"`)
	body := `{"sinks":{"ok":` + sink("ok") +
		`,"lots":` + strings.Replace(sink("lots"), `"schema":"json"`, `"schema":"json","batch_length":"lots"`, 1) +
		`,"maybe":` + strings.Replace(sink("maybe"), `"enabled":true`, `"enabled":"maybe"`, 1) +
		`,"nopath":` + strings.Replace(sink("nopath"), `"path":"p",`, ``, 1) +
		`,"yaml":` + strings.Replace(strings.Replace(sink("yaml"), `"schema":"json"`, `"schema":"yaml"`, 1), `"name":"n"`, `"plugin_config":{"password":"hunter2"},"name":"n"`, 1) +
		`,"../../tmp/evil":` + sink("evil") +
		`},"sources":{"gen":` + source + `,"nostreams":{"key":"nostreams","enabled":true,"version":0,"name":"n","path":"p"}}}`
	api, srv := newConfigAPI(t)
	api.set(func(a *configAPI) { a.rawBody = body })
	p := newHTTP(t, httpSettings(srv.URL))
	if got := listOf(t, p); !reflect.DeepEqual(got, []listed{{config.KindSink, "ok", 0}, {config.KindSource, "gen", 0}}) {
		t.Fatalf("List = %v, want the two good entries", got)
	}
	want := []struct {
		kind     config.ConnectorKind
		key      string
		errorHas []string
		enabled  bool
	}{
		{config.KindSink, "_.._tmp_evil", []string{"../../tmp/evil"}, true},
		{config.KindSink, "lots", []string{`sink \"lots\"`, "batch_length"}, true},
		{config.KindSink, "maybe", []string{"maybe", "enabled"}, false},
		{config.KindSink, "nopath", []string{"nopath", "path"}, true},
		{config.KindSink, "yaml", []string{"yaml", "schema", `\"password\":\"******\"`}, true},
		{config.KindSource, "nostreams", []string{"nostreams", "streams"}, true},
	}
	broken := p.Broken(ctx)
	if len(broken) != len(want) {
		t.Fatalf("Broken = %+v, want %d entries", broken, len(want))
	}
	for i, w := range want {
		b := broken[i]
		if b.Kind != w.kind || b.Key != w.key || b.Enabled != w.enabled || b.Source != srv.URL+"/configs/active" || config.ValidKey(b.Key) != nil {
			t.Errorf("broken[%d] = %+v, want %s %q enabled %v from the service", i, b, w.kind, w.key, w.enabled)
		}
		for _, part := range w.errorHas {
			if b.Err == nil || !strings.Contains(fmt.Sprintf("%q", b.Err.Error()), part) {
				t.Errorf("broken %s error %v lacks %s", w.key, b.Err, part)
			}
		}
	}
	for _, b := range broken {
		if strings.Contains(b.Err.Error(), "hunter2") {
			t.Errorf("broken %s error shows the secret: %v", b.Key, b.Err)
		}
	}
	api.set(func(a *configAPI) { a.rawBody = `{"sinks":{"ok":` + sink("ok") + `}}` })
	listOf(t, p)
	if broken := p.Broken(ctx); len(broken) != 0 {
		t.Errorf("after a clean answer Broken = %+v, want none", broken)
	}
}

// A non-2xx body reaches errors (and from them logs and API reasons) cut to about 1 KiB, its
// secrets and URL userinfo masked.
func TestHTTPErrorBodiesAreCutAndMasked(t *testing.T) {
	body := `{"password":"body-secret","dsn":"postgres://u:dsn-secret@db/x","pad":"` + strings.Repeat("x", 100_000) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	settings := httpSettings(srv.URL)
	settings.Retry.Enabled = false
	_, err := newHTTP(t, settings).List(ctx)
	if !errors.Is(err, provider.ErrRequestFailed) || !strings.Contains(err.Error(), "HTTP 400 Bad Request") {
		t.Fatalf("error = %v", err)
	}
	msg := err.Error()
	if len(msg) > 1300 || !strings.Contains(msg, fmt.Sprintf("(%d bytes in all)", len(body))) {
		t.Fatalf("error is %d bytes long, want the body cut to about 1 KiB: %.200s", len(msg), msg)
	}
	if strings.Contains(msg, "body-secret") || strings.Contains(msg, "dsn-secret") || !strings.Contains(msg, "postgres://u:******@db/x") {
		t.Fatalf("error does not mask the body: %.300s", msg)
	}
}

// A redirect to another origin is refused, so the request headers never reach it; one within the
// service's origin is followed.
func TestHTTPRefusesCrossOriginRedirects(t *testing.T) {
	var mu sync.Mutex
	var elsewhere []string // X-Api-Key values the other origin received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"sinks":{},"sources":{}}`))
	}))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/configs/active":
			http.Redirect(w, r, other.URL+"/configs/active", http.StatusFound)
		case "/home/configs/active":
			http.Redirect(w, r, "/configs/active", http.StatusFound)
		default:
			_, _ = w.Write([]byte(`{"sinks":{},"sources":{}}`))
		}
	}))
	t.Cleanup(redirector.Close)
	for _, c := range []struct {
		base    string
		wantErr string
	}{
		{redirector.URL + "/away", "refused a redirect to another origin (http://" + strings.TrimPrefix(other.URL, "http://") + ")"},
		{redirector.URL + "/home", ""},
	} {
		settings := httpSettings(c.base)
		settings.Retry.Enabled = false
		settings.RequestHeaders = map[string]string{"X-Api-Key": "provider-key"}
		_, err := newHTTP(t, settings).List(ctx)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Fatalf("%s: List error = %v, want %q", c.base, err, c.wantErr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) != 0 {
		t.Fatalf("the other origin was asked, with keys %q", elsewhere)
	}
}
