package runner_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// GET /config answers the running connector config with secret plugin_config values masked as
// the supervisor API masks them, behind the API key; http.reveal_secrets shows them.
func TestConfigRoute(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	start := func(t *testing.T, extra ...string) string {
		toml := sinkTOML("cfg", testkit.PluginPath(t, "null_sink"), "demo", "events", "", `password = "hunter2"
host = "db"`)
		env := withConfig(baseEnv(srv, t.TempDir()), toml)
		p := testkit.StartRunner(t, append(env, append([]string{"IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y"}, extra...)...))
		return "http://" + p.WaitTCPEndpoint(t, waitLong)
	}
	key := http.Header{"Api-Key": {"k3y"}}
	base := start(t)
	testkit.CheckCalls(t, base, []testkit.HTTPCall{
		testkit.Call("GET", "/config", nil, 401, ""),
		testkit.Call("GET", "/config", key, 200, `"key":"cfg"`),
		testkit.Call("GET", "/config", key, 200, `"password":"******"`),
		testkit.Call("GET", "/config", key, 200, `"host":"db"`),
		testkit.Call("GET", "/config", key, 200, `"active":true`),
	})
	_, body, err := testkit.DoHTTP("GET", base+"/config", key, "")
	if err != nil || strings.Contains(string(body), "hunter2") {
		t.Fatalf("GET /config = %s, %v: the secret shows", body, err)
	}
	revealed := start(t, "IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true")
	testkit.CheckCalls(t, revealed, []testkit.HTTPCall{testkit.Call("GET", "/config", key, 200, `"password":"hunter2"`)})
}
