package supervisor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A connector document nested too deep, or rendering too large, is refused wherever it comes
// from: an API body (400 naming the key and the limit, before any rendering), a connector file
// (that connector alone in error), and a rendering of GET .../configs/plugin.
func TestConnectorDocumentBoundsOverTheAPI(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	plugin := f.plugin("null_sink")
	f.write(t, "connectors/ok.toml", sinkFile("ok", plugin, "demo", "events", "plugin_config = {}"))
	f.write(t, "connectors/deep.toml", sinkFile("deep", plugin, "demo", "events", "")+"\n[plugin_config"+strings.Repeat(".a", 3000)+"]\nx = 1\n")
	// Within the parse bounds, small as a file (inline tables), but its TOML rendering repeats a
	// 240 KB path for each of 2000 tables.
	long := strings.Repeat("k", 4000)
	leaves := make([]string, 2000)
	for i := range leaves {
		leaves[i] = fmt.Sprintf("t%d = {v = %d}", i, i)
	}
	wide := strings.Repeat(long+" = {", 60) + strings.Join(leaves, ", ") + strings.Repeat("}", 60)
	f.write(t, "connectors/wide.toml", sinkFile("wide", plugin, "demo", "events", "plugin_config = {"+wide+"}"))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	stats := statsOf(t, p, nil)
	if stats["sink/ok"].Status != "running" || stats["sink/wide"].Status != "running" {
		t.Fatalf("the good connectors are not running: %+v", stats)
	}
	if deep := stats["sink/deep"]; deep.Status != "error" || deep.LastError == nil ||
		!strings.Contains(deep.LastError.Message, "key plugin_config.a.a.a.a.a... (64 levels): nested deeper than 64 levels") {
		t.Fatalf("sink/deep: %+v, want error naming the key and the limit", deep)
	}
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	body := func(pluginConfig string) string {
		return fmt.Sprintf(`{"enabled":true,"name":"n","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":%s}`, plugin, pluginConfig)
	}
	var wideJSON strings.Builder
	wideJSON.WriteString(strings.Repeat(`{"`+long+`":`, 60) + "{")
	for i := range leaves {
		if i > 0 {
			wideJSON.WriteString(",")
		}
		fmt.Fprintf(&wideJSON, `"t%d":{"v":%d}`, i, i)
	}
	wideJSON.WriteString(strings.Repeat("}", 61))
	runAPICases(t, p, []apiCase{
		{name: "3000 levels deep", method: "POST", path: "/sinks/ok/configs", header: jsonCT, status: 400, contentType: jsonType,
			body:       body(strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000)),
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"key plugin_config.a.a.a.a.a", "nested deeper than 64 levels (the limit)"}},
		{name: "rendering over max_body_bytes", method: "POST", path: "/sinks/ok/configs", header: jsonCT, status: 400, contentType: jsonType,
			body: body(wideJSON.String()), bodyHas: []string{"key plugin_config: its TOML rendering is larger than 1048576 bytes (http.max_body_bytes"}},
		{name: "nothing was stored", method: "GET", path: "/sinks/ok/configs", status: 200, contentType: jsonType, bodyHas: []string{`"version":0`}},
		{name: "plugin config as TOML", method: "GET", path: "/sinks/wide/configs/plugin?format=toml", status: 400, contentType: jsonType,
			bodyHas: []string{"Cannot convert configuration: key plugin_config: its TOML rendering is larger than 1048576 bytes"}},
		{name: "plugin config as YAML", method: "GET", path: "/sinks/wide/configs/plugin?format=yaml", status: 200, contentType: "application/yaml"},
	})
}
