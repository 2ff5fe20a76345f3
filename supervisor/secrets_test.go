package supervisor_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// secretSink is a sink whose plugin_config holds secrets at several depths.
func secretSink(plugin string) string {
	return sinkFile("db", plugin, "demo", "events", "") + `
[plugin_config]
table = "orders"
password = "hunter2"

[plugin_config.auth]
api_key = "k-123"
user = "bob"

[[plugin_config.servers]]
host = "a"
token = "t-a"
`
}

// Secret plugin_config values are masked in every config answer and format, a masked value sent
// back keeps the real one, log lines never carry them, and the runner gets the real values.
func TestPluginSecretsAreMasked(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	lib, dump := forkingSink(t) // it writes the plugin_config it gets to config.json
	f.write(t, "connectors/db.toml", secretSink(lib))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	masked := `{"auth":{"api_key":"******","user":"bob"},"password":"******","servers":[{"host":"a","token":"******"}],"table":"orders"}`
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	runAPICases(t, p, []apiCase{
		{name: "versions", method: "GET", path: "/sinks/db/configs", status: 200, contentType: jsonType, bodyHas: []string{`"plugin_config":` + masked}},
		{name: "one version", method: "GET", path: "/sinks/db/configs/0", status: 200, contentType: jsonType, jsonFields: map[string]string{"plugin_config": masked}},
		{name: "active", method: "GET", path: "/sinks/db/configs/active", status: 200, contentType: jsonType, jsonFields: map[string]string{"plugin_config": masked}},
		{name: "plugin json", method: "GET", path: "/sinks/db/configs/plugin?format=json", status: 200, contentType: jsonType, exactBody: str(masked)},
		{name: "plugin text", method: "GET", path: "/sinks/db/configs/plugin?format=text", status: 200, contentType: "text/plain", exactBody: str(masked)},
		{name: "plugin toml", method: "GET", path: "/sinks/db/configs/plugin?format=toml", status: 200, contentType: "application/toml",
			bodyHas: []string{`password = "******"`, `api_key = "******"`, `token = "******"`, `user = "bob"`}},
		{name: "plugin yaml", method: "GET", path: "/sinks/db/configs/plugin?format=yaml", status: 200, contentType: "application/yaml",
			bodyHas: []string{"password: '******'", "api_key: '******'", "token: '******'", "user: bob"}},
		{name: "a masked value without an earlier one is refused", method: "POST", path: "/sinks/db/configs", header: jsonCT, status: 400, contentType: jsonType,
			body:       fmt.Sprintf(`{"enabled":true,"name":"db","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":{"secret":"******"}}`, lib),
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"plugin_config.secret"}},
		{name: "a masked secret sent to another host is refused", method: "POST", path: "/sinks/db/configs", header: jsonCT, status: 400, contentType: jsonType,
			body: fmt.Sprintf(`{"enabled":true,"name":"db","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],`+
				`"plugin_config":{"table":"orders","password":"******","auth":{"api_key":"******","user":"bob"},"servers":[{"host":"evil.example","token":"******"}]}}`, lib),
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"plugin_config.servers[0].token", "plugin_config.password",
				"plugin_config.servers[0].host differs", "send the real value"}},
		{name: "a masked secret sent with a new ip key is refused", method: "POST", path: "/sinks/db/configs", header: jsonCT, status: 400, contentType: jsonType,
			body: fmt.Sprintf(`{"enabled":true,"name":"db","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],`+
				`"plugin_config":{"table":"orders","ip":"203.0.113.9","password":"******","auth":{"api_key":"******","user":"bob"},"servers":[{"host":"a","token":"******"}]}}`, lib),
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"plugin_config.auth.api_key, plugin_config.password, plugin_config.servers[0].token",
				"plugin_config.ip differs"}},
		{name: "a masked secret sent with any other change is refused", method: "POST", path: "/sinks/db/configs", header: jsonCT, status: 400, contentType: jsonType,
			body: fmt.Sprintf(`{"enabled":true,"name":"db","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],`+
				`"plugin_config":{"table":"v1","password":"******","auth":{"api_key":"******","user":"bob"},"servers":[{"host":"a","token":"new-token"}]}}`, lib),
			jsonFields: map[string]string{"code": `"invalid_configuration"`}, bodyHas: []string{"plugin_config.auth.api_key, plugin_config.password"}},
		{name: "masked values sent back", method: "POST", path: "/sinks/db/configs", header: jsonCT, status: 200, contentType: jsonType,
			body: fmt.Sprintf(`{"enabled":true,"name":"db v1","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],`+
				`"plugin_config":{"table":"orders","password":"******","auth":{"api_key":"******","user":"bob"},"servers":[{"host":"a","token":"******"}]}}`, lib),
			jsonFields: map[string]string{"version": "1", "name": `"db v1"`, "plugin_config": masked}},
		{name: "activate", method: "PUT", path: "/sinks/db/configs/active", header: jsonCT, body: `{"version":1}`, status: 204},
	})
	// The plugin runs version 1 with the real values kept from version 0.
	readWhenThere(t, p, filepath.Join(dump, "config.json"))
	if err := os.Remove(filepath.Join(dump, "config.json")); err != nil {
		t.Fatal(err)
	}
	runAPICases(t, p, []apiCase{{name: "restart", method: "POST", path: "/sinks/db/restart", status: 204}})
	runnerConfig := readWhenThere(t, p, filepath.Join(dump, "config.json"))
	for _, want := range []string{`"table":"orders"`, `"password":"hunter2"`, `"api_key":"k-123"`, `"token":"t-a"`} {
		if !strings.Contains(runnerConfig, want) {
			t.Errorf("runner config lacks %s: %s", want, runnerConfig)
		}
	}
	for _, secret := range []string{"hunter2", "k-123", "t-a", "new-token"} {
		if strings.Contains(p.Logs(), secret) {
			t.Errorf("the supervisor's output carries the secret %q", secret)
		}
	}

	// Other secret keys by variable (comma-separated), and reveal_secrets, each on its own runtime.
	custom := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTORS_HTTP_SECRET_KEYS=table, user"), waitLong)
	reveal := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true"), waitLong)
	runAPICases(t, custom, []apiCase{{name: "custom keys", method: "GET", path: "/sinks/db/configs/0", status: 200, contentType: jsonType,
		jsonFields: map[string]string{"plugin_config": `{"auth":{"api_key":"k-123","user":"******"},"password":"hunter2","servers":[{"host":"a","token":"t-a"}],"table":"******"}`}}})
	runAPICases(t, reveal, []apiCase{{name: "revealed", method: "GET", path: "/sinks/db/configs/0", status: 200, contentType: jsonType,
		jsonFields: map[string]string{"plugin_config": `{"auth":{"api_key":"k-123","user":"bob"},"password":"hunter2","servers":[{"host":"a","token":"t-a"}],"table":"orders"}`}}})
}
