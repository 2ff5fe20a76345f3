package supervisor_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// In attach mode a connector's log filter and rate limit change on every replica at once, and PUT
// /log_level reaches every replica of every connector; "persist" is refused (the orchestrator owns
// the runners' environment); GET answers what the primary replica says.
func TestFleetRuntimeChanges(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 2}))
	sink := sinkFile("pg", testkit.PluginPath(t, "null_sink"), "demo", "events", "") + "\n[plugin_config]\n"
	source := sourceFile("gen", testkit.PluginPath(t, "fault"), "demo", "events", "") + "\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 10\n"
	_, ep1 := startFleetRunner(t, broker, sink)
	_, ep2 := startFleetRunner(t, broker, sink)
	_, eps := startFleetRunner(t, broker, source)
	base := startAttached(t, broker, ep1, ep2, eps)
	waitUntil(t, "pg with two replicas", func() bool {
		e, ok := sinkEntry(t, base, "pg")
		return ok && len(e.Replicas) == 2
	})
	runnerKey := http.Header{"Api-Key": {fleetRunnerKey}}
	replicaLevel := func(endpoint string) string {
		t.Helper()
		resp, body, err := testkit.DoHTTP("GET", endpoint+"/log_level", runnerKey, "")
		var s logging.LevelState
		if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &s) != nil {
			t.Fatalf("GET %s/log_level: %v %v %s", endpoint, resp, err, body)
		}
		return s.Filter
	}
	putBase := func(path, body string, want int) []byte {
		t.Helper()
		resp, out, err := testkit.DoHTTP("PUT", base+path, jsonBody, body)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("PUT %s %s: %v %v %s; want %d", path, body, resp, err, out, want)
		}
		return out
	}

	putBase("/sinks/pg/log_level", `"debug"`, http.StatusOK)
	if a, b, c := replicaLevel(ep1), replicaLevel(ep2), replicaLevel(eps); a != "debug" || b != "debug" || c != "info" {
		t.Fatalf("after PUT /sinks/pg/log_level: replicas %q %q, source %q", a, b, c)
	}
	var s logging.LevelState
	getBody(t, base+"/sinks/pg/log_level", &s)
	if s.Filter != "debug" {
		t.Fatalf("GET /sinks/pg/log_level = %+v", s)
	}
	putBase("/sinks/pg/log_level", `{"filter": "debug", "persist": true}`, http.StatusConflict)
	putBase("/log_level", `{"filter": "debug", "persist": true}`, http.StatusConflict)
	putBase("/log_level", `"warn"`, http.StatusOK)
	if a, b, c := replicaLevel(ep1), replicaLevel(ep2), replicaLevel(eps); a != "warn" || b != "warn" || c != "warn" {
		t.Fatalf("after PUT /log_level: %q %q %q", a, b, c)
	}
	putBase("/log_level", `null`, http.StatusOK)
	if a := replicaLevel(ep1); a != "info" {
		t.Fatalf("after the reset: %q", a)
	}

	putBase("/sinks/pg/rate_limit", `{"messages_per_second": 5}`, http.StatusOK)
	for _, ep := range []string{ep1, ep2} {
		resp, body, err := testkit.DoHTTP("GET", ep+"/rate_limit", runnerKey, "")
		var a struct {
			Limit map[string]*float64 `json:"limit"`
		}
		if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &a) != nil || a.Limit["messages_per_second"] == nil || *a.Limit["messages_per_second"] != 5 {
			t.Fatalf("GET %s/rate_limit: %v %v %s", ep, resp, err, body)
		}
	}
	putBase("/sinks/pg/rate_limit", `{"messages_per_second": 0}`, http.StatusBadRequest)
	putBase("/sinks/nope/rate_limit", `{}`, http.StatusNotFound)
}
