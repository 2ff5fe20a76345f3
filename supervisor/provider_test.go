package supervisor_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// configService is a small config store speaking the HTTP provider API (docs/config.md §5.2), as an
// operator's own service would. Its versions endpoint can be told to fail or to answer garbage.
type configService struct {
	mu       sync.Mutex
	plugin   string
	versions map[uint64]string // version -> SinkConfig JSON of the one sink "remote"
	active   uint64
	mode     string // "", "fail", "garbage"
	created  []string
	// extraActive is appended to the sinks of the active configs answer (`,"key":{...}`).
	extraActive string
}

func (c *configService) sinkJSON(version uint64, table string) string {
	return fmt.Sprintf(`{"key":"remote","enabled":true,"version":%d,"name":"remote sink","path":%q,"transforms":null,`+
		`"streams":[{"stream":"demo","topics":["events"],"schema":"json","batch_length":10}],`+
		`"plugin_config_format":"json","plugin_config":{"table":%q},"verbose":false,"benchmark":false}`, version, c.plugin, table)
}

func (c *configService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/configs/active":
		fmt.Fprintf(w, `{"sinks":{"remote":%s%s}}`, c.versions[c.active], c.extraActive)
	case r.Method == "GET" && r.URL.Path == "/sinks/remote/configs":
		switch c.mode {
		case "fail":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `store unavailable`)
		case "garbage":
			io.WriteString(w, `[{"key":`)
		default:
			var list []string
			for v := uint64(0); v < uint64(len(c.versions)); v++ {
				list = append(list, c.versions[v])
			}
			io.WriteString(w, "["+strings.Join(list, ",")+"]")
		}
	case r.Method == "GET" && r.URL.Path == "/sinks/remote/configs/active":
		io.WriteString(w, c.versions[c.active])
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/sinks/remote/configs/"):
		v, _ := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/sinks/remote/configs/"), 10, 64)
		body, ok := c.versions[v]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		io.WriteString(w, body)
	case r.Method == "POST" && r.URL.Path == "/sinks/remote/configs":
		raw, _ := io.ReadAll(r.Body)
		c.created = append(c.created, string(raw))
		var body struct {
			PluginConfig struct {
				Table string `json:"table"`
			} `json:"plugin_config"`
		}
		_ = json.Unmarshal(raw, &body)
		v := uint64(len(c.versions))
		c.versions[v] = c.sinkJSON(v, body.PluginConfig.Table)
		io.WriteString(w, c.versions[v])
	case r.Method == "PUT" && r.URL.Path == "/sinks/remote/configs/active":
		var body struct {
			Version uint64 `json:"version"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		if _, ok := c.versions[body.Version]; !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		c.active = body.Version
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (c *configService) setMode(m string) {
	c.mu.Lock()
	c.mode = m
	c.mu.Unlock()
}

// With connectors.config_type = "http" the config routes are forwarded to the config service:
// versions, creation, activation and the config a restart runs; the service's failures come back
// as 500 http_request_failed without touching the running connector.
func TestConfigRoutesBackedByHTTPProvider(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	svc := &configService{plugin: f.plugin("null_sink"), versions: map[uint64]string{}}
	svc.versions[0] = svc.sinkJSON(0, "first")
	// A bad entry beside the good one: listed in error, the good one runs.
	svc.extraActive = `,"bad":` + strings.Replace(svc.sinkJSON(0, "x"), `"schema":"json"`, `"schema":"yaml"`, 1)
	server := httptest.NewServer(svc)
	t.Cleanup(server.Close)
	f.write(t, "config.toml", fmt.Sprintf(`[http]
address = "127.0.0.1:0"

[iggy]
address = %q

[state]
path = "state"

[connectors]
config_type = "http"
base_url = %q
timeout = "2s"

[connectors.retry]
enabled = false
max_attempts = 0
initial_backoff = "10ms"
max_backoff = "10ms"
backoff_multiplier = 2
`, broker.Addr(), server.URL))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	jsonCT := http.Header{"Content-Type": {"application/json"}}

	runAPICases(t, p, []apiCase{
		{name: "listed from the service", method: "GET", path: "/sinks/remote", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"status": `"running"`, "plugin_config_format": `"json"`}},
		{name: "the service's bad entry is listed in error", method: "GET", path: "/sinks/bad", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"status": `"error"`, "key": `"bad"`}, bodyHas: []string{"streams[0].schema", `\"yaml\"`, "/configs/active"}},
		{name: "versions from the service", method: "GET", path: "/sinks/remote/configs", status: 200, contentType: jsonType,
			bodyHas: []string{`"version":0`, `"active":true`}},
		{name: "missing version is the service's 404", method: "GET", path: "/sinks/remote/configs/5", status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_config_not_found"`}},
		{name: "create forwards the body", method: "POST", path: "/sinks/remote/configs", header: jsonCT, status: 200, contentType: jsonType,
			body:       fmt.Sprintf(`{"enabled":true,"name":"remote sink","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":{"table":"second"}}`, svc.plugin),
			jsonFields: map[string]string{"version": "1", "active": "false"}},
		{name: "activate", method: "PUT", path: "/sinks/remote/configs/active", header: jsonCT, body: `{"version":1}`, status: 204},
		{name: "restart runs the service's active config", method: "POST", path: "/sinks/remote/restart", status: 204},
		{name: "running version 1", method: "GET", path: "/sinks/remote/configs/active", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"version": "1", "plugin_config": `{"table":"second"}`}},
	})
	svc.setMode("fail")
	runAPICases(t, p, []apiCase{{name: "service error", method: "GET", path: "/sinks/remote/configs", status: 500, contentType: jsonType,
		jsonFields: map[string]string{"code": `"http_request_failed"`}, bodyHas: []string{"HTTP request failed", "500", "store unavailable"}}})
	svc.setMode("garbage")
	runAPICases(t, p, []apiCase{
		{name: "malformed service answer", method: "GET", path: "/sinks/remote/configs", status: 500, contentType: jsonType,
			jsonFields: map[string]string{"code": `"http_request_failed"`}},
		{name: "the connector kept running", method: "GET", path: "/sinks/remote", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"status": `"running"`}},
	})
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.created) != 1 || !strings.Contains(svc.created[0], `"table":"second"`) || strings.Contains(svc.created[0], `"key"`) {
		t.Errorf("create requests seen by the service: %q; want one body without key, with the plugin config", svc.created)
	}
}
