package supervisor_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const apiKey = "s3cret"

func withKey() http.Header { return http.Header{"Api-Key": {apiKey}} }

func jsonHeader() http.Header {
	return http.Header{"Api-Key": {apiKey}, "Content-Type": {"application/json"}}
}

// apiCase is one request against the live supervisor and what the answer must look like.
type apiCase struct {
	name        string
	method      string
	path        string
	header      http.Header
	body        string
	status      int
	contentType string            // "" means: no Content-Type header at all
	exactBody   *string           // when set, the body must be exactly this
	jsonKeys    []string          // top-level keys of a JSON object body, in order
	jsonFields  map[string]string // top-level field -> its JSON text
	bodyHas     []string          // substrings of the body
	allow       string            // expected Allow header
}

func str(s string) *string { return &s }

// apiLive is one supervisor with real runners and the dev broker, shared by the API tests: a
// source, a null sink with a transform, a disabled sink, a sink whose plugin path does not exist
// and a sink whose plugin open fails.
func apiLive(t *testing.T) *testkit.SupervisorProc {
	t.Helper()
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("random_source"), "demo", "events", `plugin_config_format = "yaml"`)+`
[plugin_config]
interval = "50ms"
messages_range = [1, 3]
`)
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", `plugin_config_format = "toml"`)+`
[transforms.add_fields]
enabled = true

[[transforms.add_fields.fields]]
key = "seen_by"
value.static = "out"

[plugin_config]
table = "orders"
batch = 50
`)
	f.write(t, "connectors/off.toml", disabled(sinkFile("off", f.plugin("null_sink"), "demo", "events", "")))
	f.write(t, "connectors/lost.toml", sinkFile("lost", "plugins/no_such_plugin", "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	// The null sink refuses a missing plugin_config: its open fails.
	f.write(t, "connectors/broken.toml", sinkFile("broken", f.plugin("null_sink"), "demo", "events", ""))
	return testkit.StartSupervisor(t, f.dir, f.env("IGGY_SUPERVISOR_RESTART_BACKOFF_MIN=2s", "IGGY_SUPERVISOR_RESTART_BACKOFF_MAX=5s"), waitLong)
}

func runAPICases(t *testing.T, p *testkit.SupervisorProc, cases []apiCase) {
	t.Helper()
	for _, c := range cases {
		resp, body, err := p.Do(c.method, c.path, c.header, c.body)
		if err != nil {
			t.Fatalf("%s: %s %s: %v", c.name, c.method, c.path, err)
		}
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s %s: status %d, want %d; body %s", c.name, c.method, c.path, resp.StatusCode, c.status, body)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != c.contentType {
			t.Errorf("%s: Content-Type %q, want %q", c.name, got, c.contentType)
		}
		if c.exactBody != nil && string(body) != *c.exactBody {
			t.Errorf("%s: body %q, want %q", c.name, body, *c.exactBody)
		}
		if c.allow != "" && resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s: Allow %q, want %q", c.name, resp.Header.Get("Allow"), c.allow)
		}
		for _, s := range c.bodyHas {
			if !strings.Contains(string(body), s) {
				t.Errorf("%s: body lacks %q: %s", c.name, s, body)
			}
		}
		if c.jsonKeys != nil {
			if keys := objectKeys(t, body); !slices.Equal(keys, c.jsonKeys) {
				t.Errorf("%s: JSON keys %v, want %v; body %s", c.name, keys, c.jsonKeys, body)
			}
		}
		if c.jsonFields != nil {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(body, &obj); err != nil {
				t.Errorf("%s: %v: %s", c.name, err, body)
				continue
			}
			for k, want := range c.jsonFields {
				if string(obj[k]) != want {
					t.Errorf("%s: field %s = %s, want %s", c.name, k, obj[k], want)
				}
			}
		}
	}
}

// objectKeys lists a JSON object's member names in order.
func objectKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Errorf("not a JSON object: %s", body)
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Errorf("bad JSON: %v: %s", err, body)
			return keys
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Errorf("bad JSON: %v: %s", err, body)
			return keys
		}
	}
	return keys
}

var (
	infoKeys    = []string{"id", "key", "name", "path", "enabled", "status", "plugin_config_format"}
	configKeys  = []string{"key", "enabled", "version", "name", "path", "transforms", "streams", "plugin_config_format", "plugin_config", "verbose", "benchmark", "active"}
	statsKeys   = []string{"connectors_runtime_version", "connectors_runtime_version_semver", "process_id", "cpu_usage", "total_cpu_usage", "memory_usage", "total_memory", "available_memory", "run_time", "start_time", "sources_total", "sources_running", "sinks_total", "sinks_running", "connectors"}
	errorKeys   = []string{"code", "reason"}
	jsonType    = "application/json"
	textType    = "text/plain; charset=utf-8"
	newSinkBody = `{"enabled":true,"name":"out v1","path":"` + "%s" + `","streams":[{"stream":"demo","topics":["events"],"schema":"json","batch_length":20}],"plugin_config":{"table":"v1"}}`
)

// Every route of docs/http-api.md §3 against a live supervisor: status, content type and body shape,
// including the error answers. The steps run in order: later ones see the versions earlier ones
// stored.
func TestAPIConformance(t *testing.T) {
	p := apiLive(t)
	nullSink := filepathOfSink(t, p)
	create := strings.Replace(newSinkBody, "%s", nullSink, 1)

	runAPICases(t, p, []apiCase{
		// System routes and auth.
		{name: "root without key", method: "GET", path: "/", status: 200, contentType: textType, exactBody: str("Connector Runtime API")},
		{name: "health without key", method: "GET", path: "/health", status: 200, contentType: jsonType, exactBody: str(`{"status":"healthy"}`)},
		{name: "HEAD health", method: "HEAD", path: "/health", status: 200, contentType: jsonType, exactBody: str("")},
		{name: "stats without key", method: "GET", path: "/stats", status: 401, exactBody: str("")},
		{name: "stats with a wrong key", method: "GET", path: "/stats", header: http.Header{"Api-Key": {"nope"}}, status: 401, exactBody: str("")},
		{name: "unknown path without key", method: "GET", path: "/nothing", status: 401, exactBody: str("")},
		{name: "stats", method: "GET", path: "/stats", header: withKey(), status: 200, contentType: jsonType, jsonKeys: statsKeys,
			jsonFields: map[string]string{"connectors_runtime_version": `"0.5.0-edge.4"`, "sources_total": "1", "sinks_total": "4"}},
		{name: "metrics", method: "GET", path: "/metrics", header: withKey(), status: 200, contentType: textType,
			bodyHas: []string{"# TYPE iggy_connectors_sinks_total gauge\n", "iggy_connectors_sinks_total 4", `iggy_connector_up{connector_key="out",connector_type="sink"} 1`,
				`iggy_connector_up{connector_key="lost",connector_type="sink"} 0`, "# EOF\n"}},
		{name: "unknown path", method: "GET", path: "/nothing", header: withKey(), status: 404, exactBody: str("")},
		{name: "trailing slash is another path", method: "GET", path: "/sinks/", header: withKey(), status: 404, exactBody: str("")},
		{name: "wrong method", method: "PUT", path: "/sinks", header: withKey(), status: 405, exactBody: str(""), allow: "GET,HEAD"},

		// Listing and one connector.
		{name: "get sink", method: "GET", path: "/sinks/out", header: withKey(), status: 200, contentType: jsonType,
			jsonKeys:   append(slices.Clone(infoKeys), "streams"),
			jsonFields: map[string]string{"key": `"out"`, "status": `"running"`, "enabled": "true", "plugin_config_format": `"toml"`},
			bodyHas:    []string{`"streams":[{"stream":"demo","topics":["events"],"schema":"json","avro_schema_json":null,"avro_schema_path":null,"batch_length":50,"poll_interval":"5ms","consumer_group":null`}},
		{name: "get source", method: "GET", path: "/sources/gen", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"key": `"gen"`, "status": `"running"`}, bodyHas: []string{`"topic":"events"`, `"linger_time":"5ms"`}},
		{name: "disabled sink is listed as stopped", method: "GET", path: "/sinks/off", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"enabled": "false", "status": `"stopped"`}},
		{name: "missing plugin is an error with its reason", method: "GET", path: "/sinks/lost", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"status": `"error"`, "path": `"plugins/no_such_plugin"`}, bodyHas: []string{"Failed to resolve plugin path", "no_such_plugin"}},
		{name: "unknown sink", method: "GET", path: "/sinks/nope", header: withKey(), status: 404, contentType: jsonType, jsonKeys: errorKeys,
			jsonFields: map[string]string{"code": `"sink_not_found"`, "reason": `"Sink not found with key: nope"`}},
		{name: "a source key is not a sink", method: "GET", path: "/sinks/gen", header: withKey(), status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_not_found"`}},
		// Ours (docs/architecture.md, decision 13): offsets and validate, under the same key rule.
		{name: "offsets without key", method: "GET", path: "/sinks/out/offsets", status: 401, exactBody: str("")},
		{name: "validate without key", method: "POST", path: "/sinks/out/configs/validate", body: create, status: 401, exactBody: str("")},
		{name: "offsets of a disabled sink", method: "GET", path: "/sinks/off/offsets", header: withKey(), status: 200, contentType: jsonType,
			jsonKeys: []string{"offsets"}, bodyHas: []string{`"stream":"demo","topic":"events","partition_id":0,"consumer_group":"iggy-connect-sink-off","stored_offset":null,`}},
		{name: "rewind a running sink", method: "PUT", path: "/sinks/out/offsets", header: jsonHeader(), status: 409, contentType: jsonType, jsonKeys: errorKeys,
			body: `{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":0}]}`, jsonFields: map[string]string{"code": `"connector_not_stopped"`}},
		{name: "state of a source", method: "GET", path: "/sources/gen/offsets", header: withKey(), status: 200, contentType: jsonType,
			jsonKeys: []string{"state", "state_json", "updated_at"}},
		{name: "validate", method: "POST", path: "/sinks/out/configs/validate", header: jsonHeader(), body: create, status: 200, contentType: jsonType,
			exactBody: str(`{"valid":true,"errors":[]}`)},
		{name: "transforms", method: "GET", path: "/sinks/out/transforms", header: withKey(), status: 200, contentType: jsonType,
			exactBody: str(`[{"type":"add_fields","config":{"enabled":true,"fields":[{"key":"seen_by","value":{"static":"out"}}]}}]`)},
		{name: "no transforms", method: "GET", path: "/sources/gen/transforms", header: withKey(), status: 200, contentType: jsonType, exactBody: str(`[]`)},

		// Config routes.
		{name: "versions", method: "GET", path: "/sinks/out/configs", header: withKey(), status: 200, contentType: jsonType, bodyHas: []string{`"version":0`, `"active":true`}},
		{name: "version 0", method: "GET", path: "/sinks/out/configs/0", header: withKey(), status: 200, contentType: jsonType, jsonKeys: configKeys,
			jsonFields: map[string]string{"version": "0", "active": "true", "plugin_config": `{"batch":50,"table":"orders"}`}},
		{name: "missing version", method: "GET", path: "/sinks/out/configs/7", header: withKey(), status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_config_not_found"`, "reason": `"Sink config not found with key: out, version: 7"`}},
		{name: "version not a number", method: "GET", path: "/sinks/out/configs/abc", header: withKey(), status: 400, contentType: textType,
			exactBody: str("Invalid URL: Cannot parse value at index 1 with value `abc` to a `u64`")},
		{name: "active", method: "GET", path: "/sinks/out/configs/active", header: withKey(), status: 200, contentType: jsonType, jsonKeys: configKeys,
			jsonFields: map[string]string{"version": "0", "active": "true"}},
		{name: "plugin config in its format", method: "GET", path: "/sinks/out/configs/plugin", header: withKey(), status: 200, contentType: "application/toml",
			exactBody: str("batch = 50\ntable = \"orders\"\n")},
		{name: "plugin config as json", method: "GET", path: "/sinks/out/configs/plugin?format=json", header: withKey(), status: 200, contentType: jsonType,
			exactBody: str(`{"batch":50,"table":"orders"}`)},
		{name: "plugin config as text", method: "GET", path: "/sinks/out/configs/plugin?format=text", header: withKey(), status: 200, contentType: "text/plain",
			exactBody: str(`{"batch":50,"table":"orders"}`)},
		{name: "plugin config as yaml", method: "GET", path: "/sinks/out/configs/plugin?format=yaml", header: withKey(), status: 200, contentType: "application/yaml",
			exactBody: str("batch: 50\ntable: orders\n")},
		{name: "plugin config in its format, yaml laid out as serde_yaml", method: "GET", path: "/sources/gen/configs/plugin", header: withKey(), status: 200, contentType: "application/yaml",
			exactBody: str("interval: 50ms\nmessages_range:\n- 1\n- 3\n")},
		{name: "plugin config bad format", method: "GET", path: "/sinks/out/configs/plugin?format=XML", header: withKey(), status: 400, contentType: textType,
			bodyHas: []string{"Failed to deserialize query string: format"}},
		{name: "no plugin config", method: "GET", path: "/sinks/broken/configs/plugin", header: withKey(), status: 404, exactBody: str("")},

		// New versions: rejected ones store nothing.
		{name: "create without JSON content type", method: "POST", path: "/sinks/out/configs", header: withKey(), body: create, status: 415, contentType: textType,
			exactBody: str("Expected request with `Content-Type: application/json`")},
		{name: "create with malformed JSON", method: "POST", path: "/sinks/out/configs", header: jsonHeader(), body: `{"enabled":`, status: 400, contentType: textType,
			bodyHas: []string{"Failed to parse the request body as JSON"}},
		{name: "create with a missing field", method: "POST", path: "/sinks/out/configs", header: jsonHeader(), body: `{"enabled":true,"name":"x","streams":[]}`, status: 422, contentType: textType,
			bodyHas: []string{"Failed to deserialize the JSON body into the target type", "path"}},
		{name: "create with an unknown schema", method: "POST", path: "/sinks/out/configs", header: jsonHeader(), body: strings.Replace(create, `"json"`, `"xml"`, 1), status: 422, contentType: textType,
			bodyHas: []string{"xml"}},
		{name: "create under an invalid key", method: "POST", path: "/sinks/..%2Fetc/configs", header: jsonHeader(), body: create, status: 400, contentType: jsonType,
			jsonFields: map[string]string{"code": `"invalid_configuration"`}},
		{name: "still one version", method: "GET", path: "/sinks/out/configs", header: withKey(), status: 200, contentType: jsonType, bodyHas: []string{`"version":0`}},
		{name: "create", method: "POST", path: "/sinks/out/configs", header: jsonHeader(), body: create, status: 200, contentType: jsonType, jsonKeys: configKeys,
			jsonFields: map[string]string{"key": `"out"`, "version": "1", "active": "false", "plugin_config": `{"table":"v1"}`}},
		{name: "running config unchanged", method: "GET", path: "/sinks/out/configs/active", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"version": "0"}},
		{name: "activate without JSON", method: "PUT", path: "/sinks/out/configs/active", header: withKey(), body: `{"version":1}`, status: 415, contentType: textType},
		{name: "activate without version", method: "PUT", path: "/sinks/out/configs/active", header: jsonHeader(), body: `{}`, status: 422, contentType: textType},
		{name: "activate a missing version", method: "PUT", path: "/sinks/out/configs/active", header: jsonHeader(), body: `{"version":9}`, status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_config_not_found"`}},
		{name: "activate", method: "PUT", path: "/sinks/out/configs/active", header: jsonHeader(), body: `{"version":1}`, status: 204, exactBody: str("")},

		// Restart uses the active version.
		{name: "restart unknown", method: "POST", path: "/sinks/nope/restart", header: withKey(), status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_not_found"`}},
		{name: "restart with a missing plugin", method: "POST", path: "/sinks/lost/restart", header: withKey(), status: 400, contentType: jsonType,
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"Failed to resolve plugin path"}},
		{name: "restart whose plugin open fails", method: "POST", path: "/sinks/broken/restart", header: withKey(), status: 400, contentType: jsonType,
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"plugin initialization failed", "iggy_sink_open returned -1"}},
		{name: "restart", method: "POST", path: "/sinks/out/restart", header: withKey(), status: 204, exactBody: str("")},
		{name: "running the new version", method: "GET", path: "/sinks/out/configs/active", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"version": "1", "active": "true", "plugin_config": `{"table":"v1"}`}},
		{name: "running after restart", method: "GET", path: "/sinks/out", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"status": `"running"`}},
		{name: "version 0 no longer active", method: "GET", path: "/sinks/out/configs/0", header: withKey(), status: 200, contentType: jsonType,
			jsonFields: map[string]string{"active": "false"}},

		// Delete.
		{name: "delete with a bad version", method: "DELETE", path: "/sinks/out/configs?version=x", header: withKey(), status: 400, contentType: textType,
			bodyHas: []string{"Failed to deserialize query string: version"}},
		{name: "delete a missing version", method: "DELETE", path: "/sinks/out/configs?version=9", header: withKey(), status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_config_not_found"`}},
		{name: "delete", method: "DELETE", path: "/sinks/out/configs?version=0", header: withKey(), status: 204, exactBody: str("")},
		{name: "deleted", method: "GET", path: "/sinks/out/configs/0", header: withKey(), status: 404, contentType: jsonType},
	})
}

// filepathOfSink reads the resolved null-sink path the supervisor shows for "out".
func filepathOfSink(t *testing.T, p *testkit.SupervisorProc) string {
	t.Helper()
	var info struct {
		Path string `json:"path"`
	}
	getJSON(t, p, withKey(), "/sinks/out", &info)
	return info.Path
}

// The listing holds every connector with the info shape; a connector whose plugin open fails is
// listed as error with the plugin's reason, and /stats carries every connector, sources first.
func TestAPIListingsAndStats(t *testing.T) {
	p := apiLive(t)
	var sinks []map[string]any
	getJSON(t, p, withKey(), "/sinks", &sinks)
	var keys []string
	for _, s := range sinks {
		keys = append(keys, s["key"].(string))
	}
	if want := []string{"broken", "lost", "off", "out"}; !slices.Equal(keys, want) {
		t.Fatalf("GET /sinks keys %v, want %v", keys, want)
	}
	// Instance ids as upstream numbers them at startup: sources first, from 1, each enabled
	// connector one (the failing ones too), here in key order; a disabled one has none.
	var sources []map[string]any
	getJSON(t, p, withKey(), "/sources", &sources)
	ids := map[string]float64{"source/" + sources[0]["key"].(string): sources[0]["id"].(float64)}
	for _, s := range sinks {
		ids["sink/"+s["key"].(string)] = s["id"].(float64)
	}
	if want := map[string]float64{"source/gen": 1, "sink/broken": 2, "sink/lost": 3, "sink/off": 0, "sink/out": 4}; !maps.Equal(ids, want) {
		t.Errorf("instance ids %v, want %v", ids, want)
	}
	waitFor(t, p, waitLong, "the broken sink to report its failed open", func() bool {
		var s map[string]any
		getJSON(t, p, withKey(), "/sinks/broken", &s)
		le, _ := s["last_error"].(map[string]any)
		msg, _ := le["message"].(string)
		// The runner opened the plugin with the id the listing shows, as upstream's one process does.
		return strings.Contains(strings.ToLower(msg), "initialization failed") && strings.Contains(msg, "(ID: 2)")
	})
	var rs struct {
		SourcesRunning int              `json:"sources_running"`
		SinksRunning   int              `json:"sinks_running"`
		MemoryUsage    uint64           `json:"memory_usage"`
		Connectors     []connectorStats `json:"connectors"`
	}
	waitFor(t, p, waitLong, "the source and the sink to move messages", func() bool {
		getJSON(t, p, withKey(), "/stats", &rs)
		st := map[string]connectorStats{}
		for _, c := range rs.Connectors {
			st[c.ConnectorType+"/"+c.Key] = c
		}
		return testkit.OrZero(st["source/gen"].MessagesSent) > 0 && testkit.OrZero(st["sink/out"].MessagesProcessed) > 0
	})
	if len(rs.Connectors) != 5 || rs.Connectors[0].ConnectorType != "source" {
		t.Fatalf("/stats connectors %+v, want 5 with the source first", rs.Connectors)
	}
	for _, c := range rs.Connectors {
		if c.Key == "out" && (c.PID == 0 || c.Status != "running" || c.MessagesConsumed == nil || c.MessagesProduced != nil) {
			t.Errorf("sink object %+v: want a pid, running, sink counters only", c)
		}
		if c.Key == "gen" && (c.MessagesProduced == nil || c.MessagesConsumed != nil) {
			t.Errorf("source object %+v: want source counters only", c)
		}
	}
	if rs.SourcesRunning != 1 || rs.SinksRunning != 1 {
		t.Errorf("running gauges: sources %d sinks %d, want 1 and 1", rs.SourcesRunning, rs.SinksRunning)
	}
	before := statsOf(t, p, withKey())["source/gen"]
	// Five concurrent restarts of one connector all answer 204 (only one restarts).
	codes := make(chan int, 5)
	for range 5 {
		go func() {
			resp, _, err := p.Do("POST", "/sources/gen/restart", withKey(), "")
			if err != nil {
				codes <- 0
				return
			}
			codes <- resp.StatusCode
		}()
	}
	for range 5 {
		if c := <-codes; c != http.StatusNoContent {
			t.Errorf("concurrent restart answered %d, want 204", c)
		}
	}
	// The new runner process starts its counters at zero; the totals must not go backwards.
	after := statsOf(t, p, withKey())["source/gen"]
	if after.PID == before.PID || testkit.OrZero(after.MessagesProduced) < testkit.OrZero(before.MessagesProduced) || testkit.OrZero(after.MessagesSent) < testkit.OrZero(before.MessagesSent) {
		t.Errorf("after restart: pid %d -> %d, produced %d -> %d, sent %d -> %d; want a new process and no counter going back",
			before.PID, after.PID, testkit.OrZero(before.MessagesProduced), testkit.OrZero(after.MessagesProduced), testkit.OrZero(before.MessagesSent), testkit.OrZero(after.MessagesSent))
	}
	_, body, err := p.Do("GET", "/metrics", withKey(), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := testkit.MetricValue(string(body), `iggy_connector_messages_sent_total{connector_key="gen",connector_type="source"}`); !ok || v < float64(testkit.OrZero(before.MessagesSent)) {
		t.Errorf("/metrics sent after restart = %v (present %v), was %d before", v, ok, testkit.OrZero(before.MessagesSent))
	}
}

// As upstream, connector env overrides apply to the files the provider loads, not to a version
// created through the API: without plugin_config it stays null.
func TestCreatedVersionTakesNoEnvOverrides(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/stdout.toml", sinkFile("stdout", f.plugin("stdout_sink"), "demo", "events", "")+"\n[plugin_config]\nprint_payload = true\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTORS_SINK_STDOUT_PLUGIN_CONFIG_PRINT_PAYLOAD=false"), waitLong)
	create := `{"enabled":true,"name":"stdout","path":"` + f.plugin("stdout_sink") + `","streams":[{"stream":"demo","topics":["events"],"schema":"json"}]}`
	runAPICases(t, p, []apiCase{
		{name: "the loaded file has the override", method: "GET", path: "/sinks/stdout/configs/0", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"plugin_config": `{"print_payload":false}`}},
		{name: "create without plugin_config", method: "POST", path: "/sinks/stdout/configs", header: http.Header{"Content-Type": {"application/json"}}, body: create,
			status: 200, contentType: jsonType, jsonFields: map[string]string{"version": "1", "plugin_config": "null"}},
		{name: "stored as posted", method: "GET", path: "/sinks/stdout/configs/1", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"plugin_config": "null"}},
	})
}
