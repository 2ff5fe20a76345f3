package supervisor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// One bad connector file never stops the runtime: beside a good source and sink, each of the bad
// files of issue 15 is reported at startup (a log line each, naming file and key), listed with
// status error and its reason, and the good connectors run and move messages. Fixing a file and
// restarting, or creating a new version and restarting, brings a bad connector up.
func TestBadConnectorFilesDoNotStopTheOthers(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	nullSink := func(key string) string {
		return sinkFile(key, f.plugin("null_sink"), "demo", "events", "") + "\n[plugin_config]\ntable = \"t\"\n"
	}
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("random_source"), "demo", "events", "")+"\n[plugin_config]\ninterval = \"20ms\"\n")
	f.write(t, "connectors/out.toml", nullSink("out"))
	bad := []struct{ file, key, content, reason string }{
		{"lots.toml", "lots", strings.Replace(nullSink("lots"), "batch_length = 50", `batch_length = "lots"`, 1), "streams[0].batch_length"},
		{"maybe.toml", "maybe", strings.Replace(nullSink("maybe"), "enabled = true", `enabled = "maybe"`, 1), "key enabled"},
		{"nopath.toml", "nopath", strings.Replace(nullSink("nopath"), fmt.Sprintf("path = %q\n", f.plugin("null_sink")), "", 1), "key path"},
		{"nostreams.toml", "nostreams", strings.Split(nullSink("nostreams"), "[[streams]]")[0], "key streams"},
		{"evil.toml", "evil", strings.Replace(nullSink("x"), `key = "x"`, `key = "../../tmp/evil"`, 1), "../../tmp/evil"},
		{"broken.toml", "broken", "type = \"sink\"\nkey = \"broken\"\nenabled = true\n[[streams]\nstream = \"demo\"\n", "parsing TOML"},
		{"yaml.toml", "yaml", strings.Replace(nullSink("yaml"), `schema = "json"`, `schema = "yaml"`, 1), "streams[0].schema"},
		{"sometimes.toml", "sometimes", strings.Replace(nullSink("sometimes"), `schema = "json"`, "schema = \"json\"\noffset_commit = \"sometimes\"", 1), "streams[0].offset_commit"},
	}
	for _, b := range bad {
		f.write(t, "connectors/"+b.file, b.content)
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	for _, b := range bad {
		lines := 0
		for _, line := range strings.Split(p.Logs(), "\n") {
			if strings.Contains(line, "connector config does not load") && strings.Contains(line, "connector=sink/"+b.key) && strings.Contains(line, b.file) {
				lines++
			}
		}
		if lines != 1 {
			t.Errorf("%s: %d startup lines naming sink/%s and the file, want 1", b.file, lines, b.key)
		}
	}
	var sinks []struct {
		ID        uint32 `json:"id"`
		Key       string `json:"key"`
		Status    string `json:"status"`
		LastError *struct {
			Message string `json:"message"`
		} `json:"last_error"`
	}
	getJSON(t, p, nil, "/sinks", &sinks)
	listed := map[string]int{}
	for i, s := range sinks {
		listed[s.Key] = i
	}
	if len(sinks) != len(bad)+1 {
		t.Errorf("GET /sinks lists %d sinks, want %d", len(sinks), len(bad)+1)
	}
	for _, b := range bad {
		i, ok := listed[b.key]
		if !ok {
			t.Errorf("%s: sink %q not listed", b.file, b.key)
			continue
		}
		s := sinks[i]
		if s.Status != "error" || s.LastError == nil || !strings.Contains(s.LastError.Message, b.file) || !strings.Contains(s.LastError.Message, b.reason) || s.ID != 0 {
			t.Errorf("%s: listed as %+v, want status error, no id, last_error naming the file and %q", b.file, s, b.reason)
		}
	}
	runAPICases(t, p, []apiCase{
		{name: "one bad sink", method: "GET", path: "/sinks/yaml", status: 200, contentType: jsonType,
			jsonFields: map[string]string{"key": `"yaml"`, "status": `"error"`, "streams": "[]"}, bodyHas: []string{"streams[0].schema"}},
		{name: "no running config", method: "GET", path: "/sinks/yaml/configs/active", status: 404, contentType: jsonType,
			jsonFields: map[string]string{"code": `"sink_config_not_found"`}},
		{name: "no stored version", method: "GET", path: "/sinks/yaml/configs", status: 200, contentType: jsonType, exactBody: str("[]")},
		{name: "restart while still bad", method: "POST", path: "/sinks/lots/restart", status: 400, contentType: jsonType,
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"lots.toml", "batch_length"}},
		{name: "the traversal key is not a route", method: "GET", path: "/sinks/..%2F..%2Ftmp%2Fevil", status: 404, contentType: jsonType},
	})
	waitFor(t, p, waitLong, "the good source and sink to move messages", func() bool {
		st := statsOf(t, p, nil)
		return testkit.OrZero(st["source/gen"].MessagesSent) > 0 && testkit.OrZero(st["sink/out"].MessagesProcessed) > 0
	})
	st := statsOf(t, p, nil)
	for _, b := range bad {
		if c := st["sink/"+b.key]; c.Status != "error" || c.LastError == nil || !strings.Contains(c.LastError.Message, b.file) {
			t.Errorf("/stats sink/%s = %+v, want status error with the file's reason", b.key, c)
		}
	}

	// Fixed on disk, then restarted: it runs.
	f.write(t, "connectors/lots.toml", nullSink("lots"))
	runAPICases(t, p, []apiCase{{name: "restart after the fix", method: "POST", path: "/sinks/lots/restart", status: 204}})
	// A new version through the API, then restarted: it runs under the safe key.
	create := fmt.Sprintf(`{"enabled":true,"name":"evil, fixed","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":{"table":"t"}}`, f.plugin("null_sink"))
	runAPICases(t, p, []apiCase{
		{name: "new version for the bad key", method: "POST", path: "/sinks/evil/configs", header: http.Header{"Content-Type": {"application/json"}}, body: create,
			status: 200, contentType: jsonType, jsonFields: map[string]string{"key": `"evil"`, "version": "0"}},
		{name: "restart with it", method: "POST", path: "/sinks/evil/restart", status: 204},
	})
	for _, key := range []string{"lots", "evil"} {
		waitFor(t, p, waitLong, "sink "+key+" to run", func() bool {
			var s struct {
				Status string `json:"status"`
			}
			getJSON(t, p, nil, "/sinks/"+key, &s)
			return s.Status == "running"
		})
	}
	runAPICases(t, p, []apiCase{{name: "running config once fixed", method: "GET", path: "/sinks/lots/configs/active", status: 200, contentType: jsonType,
		jsonFields: map[string]string{"key": `"lots"`, "active": "true"}}})
}
