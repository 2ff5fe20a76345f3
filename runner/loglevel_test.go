package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// putJSON sends PUT path with body to the runner and fails the test unless it answers want.
func putJSON(t *testing.T, p *testkit.RunnerProc, path, body string, want int) []byte {
	t.Helper()
	code, out, err := p.DoBody(http.MethodPut, path, nil, []byte(body))
	if err != nil || code != want {
		t.Fatalf("PUT %s %s: status %d (err %v), want %d; body %s", path, body, code, err, want, out)
	}
	return out
}

func levelState(t *testing.T, body []byte) logging.LevelState {
	t.Helper()
	var s logging.LevelState
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("log level answer %s: %v", body, err)
	}
	return s
}

// noiseAfter counts the fault plugin's noise lines written after the last line containing mark.
func noiseAfter(logs, mark string) int {
	if i := strings.LastIndex(logs, mark); i >= 0 {
		logs = logs[i:]
	}
	return strings.Count(logs, "noise line")
}

// PUT /log_level changes what a running connector prints, its plugin's lines included, without a
// restart: a plugin logging DEBUG lines per batch stays silent at info, speaks once the filter is
// debug (its ceiling let it send them from its first open), and its INFO lines stop at warn. A
// plugin opened without a ceiling was told info at its first open, so a later debug filter cannot
// bring its DEBUG lines back (GET shows what it was opened with), while the runner's own lines
// follow the new filter.
func TestLogLevelAtRunTime(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	cases := []struct {
		name, ceiling, pluginFilter string
		noiseAtDebug                bool
	}{
		{name: "ceiling debug", ceiling: "debug", pluginFilter: "debug", noiseAtDebug: true},
		{name: "no ceiling", ceiling: "", pluginFilter: "info", noiseAtDebug: false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := []string{"events"}[0]
			group := "ll" + string(rune('a'+i))
			env := withConfig(baseEnv(srv, t.TempDir()), sinkTOML(group, testkit.PluginPath(t, "fault"), "demo", topic,
				"batch_length = 10\npoll_interval = \"1ms\"\nconsumer_group = \""+group+"\"", "log_lines = 1\nlog_level = \"debug\""))
			env = append(env, "IGGY_CONNECTORS_LOGGING_FORMAT=json")
			if tc.ceiling != "" {
				env = append(env, "IGGY_CONNECTOR_PLUGIN_LOG_CEILING="+tc.ceiling)
			}
			p := testkit.StartRunner(t, env)
			p.WaitStatus(t, "running", waitLong)
			processed := func() uint64 { return testkit.OrZero(p.Stats(t).MessagesProcessed) }
			deliver := func(what string) {
				t.Helper()
				before := processed()
				fillTopic(t, srv, "demo", topic, 20)
				p.WaitUntil(t, waitLong, what, func() bool { return processed() >= before+20 })
			}

			deliver("the first messages at info")
			if n := noiseAfter(p.Logs(), ""); n != 0 {
				t.Fatalf("%d DEBUG noise lines at the configured info filter:\n%s", n, p.Logs())
			}
			if s := levelState(t, mustGet(t, p, "/log_level")); s.Filter != "info" || s.Configured != "info" || s.PluginFilter != tc.pluginFilter {
				t.Fatalf("GET /log_level = %+v, want info, info, plugin %s", s, tc.pluginFilter)
			}

			s := levelState(t, putJSON(t, p, "/log_level", `"debug"`, http.StatusOK))
			if s.Filter != "debug" || s.Configured != "info" {
				t.Fatalf("PUT debug answered %+v", s)
			}
			if tc.noiseAtDebug {
				p.WaitUntil(t, waitLong, "the plugin's DEBUG lines", func() bool {
					fillTopic(t, srv, "demo", topic, 1)
					return noiseAfter(p.Logs(), `"to":"debug"`) > 0
				})
			} else {
				deliver("messages at debug")
				if n := noiseAfter(p.Logs(), `"to":"debug"`); n != 0 {
					t.Fatalf("a plugin opened at info sent %d DEBUG lines", n)
				}
				// The runner's own DEBUG lines do follow the new filter.
				if !strings.Contains(p.Logs(), `"level":"DEBUG"`) {
					t.Fatalf("no DEBUG line of the runner's own at debug:\n%s", p.Logs())
				}
			}

			putJSON(t, p, "/log_level", `{"filter": "warn"}`, http.StatusOK)
			deliver("messages at warn")
			after := p.Logs()[strings.LastIndex(p.Logs(), `"to":"warn"`):]
			if strings.Contains(after, "consumed batch") || strings.Contains(after, "noise line") {
				t.Fatalf("plugin lines below warn were printed after the change:\n%s", after)
			}

			// null is the configured filter again; bad bodies are refused and change nothing.
			if s := levelState(t, putJSON(t, p, "/log_level", `null`, http.StatusOK)); s.Filter != "info" {
				t.Fatalf("reset: %+v", s)
			}
			putJSON(t, p, "/log_level", `"debug,x=loud"`, http.StatusBadRequest)
			putJSON(t, p, "/log_level", `{"filter": "debug", "persist": true}`, http.StatusBadRequest)
			if s := levelState(t, mustGet(t, p, "/log_level")); s.Filter != "info" {
				t.Fatalf("a refused change changed the filter: %+v", s)
			}
			stopRunner(t, p)
		})
	}
}

func mustGet(t *testing.T, p *testkit.RunnerProc, path string) []byte {
	t.Helper()
	code, body, err := p.Get(path, nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", path, code, err, body)
	}
	return body
}
