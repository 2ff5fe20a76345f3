package supervisor_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A plugin logging in a tight loop is cut to IGGY_CONNECTOR_PLUGIN_LOG_RATE lines a second: the
// rest are dropped, counted in /stats (log_lines_dropped) and /metrics, and a warning says so.
func TestPluginLogLinesAreRateLimited(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/noisy.toml", sourceFile("noisy", f.plugin("fault"), "demo", "events", "")+
		"\n[plugin_config]\nmessages_per_batch = 1\nmax_messages = 1\nlog_lines = 3000\ninterval_ms = 1000\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTOR_PLUGIN_LOG_RATE=100"), waitLong)

	var dropped uint64
	waitFor(t, p, waitLong, "dropped plugin lines in /stats", func() bool {
		var stats struct {
			Connectors []struct {
				Key             string  `json:"key"`
				LogLinesDropped *uint64 `json:"log_lines_dropped"`
			} `json:"connectors"`
		}
		getJSON(t, p, nil, "/stats", &stats)
		for _, c := range stats.Connectors {
			if c.Key == "noisy" && c.LogLinesDropped != nil {
				dropped = *c.LogLinesDropped
			}
		}
		return dropped > 0 && strings.Contains(p.Logs(), "plugin log lines dropped over the limit")
	})
	// The 3000 lines of the first batch come in a tight loop: most of them are dropped.
	firstBatch := strings.Count(p.Logs(), "of batch 1\"")
	if firstBatch >= 3000 || firstBatch == 0 {
		t.Errorf("%d of the first batch's 3000 noise lines were relayed, want some but not all", firstBatch)
	}
	resp, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v %v", resp, err)
	}
	m := regexp.MustCompile(`(?m)^iggy_connector_log_lines_dropped_total\{[^}]*connector_key="noisy"[^}]*\} (\d+)$`).FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no iggy_connector_log_lines_dropped_total series for noisy in /metrics:\n%s", body)
	}
	if n, _ := strconv.ParseUint(m[1], 10, 64); n < dropped {
		t.Errorf("/metrics counts %d dropped lines, /stats showed %d before", n, dropped)
	}
}
