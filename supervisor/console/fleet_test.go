package console_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The console of a supervisor in attach mode ([fleet]) over two replicas of one sink, each a
// runner deployed on its own: on a loopback listener without a key the page asks for none; the
// overview counts the replicas; a replica killed with SIGKILL shows as unreachable, on the
// overview and in the connector page's replica table; the actions the orchestrator owns are off.
func TestConsoleFleet(t *testing.T) {
	t.Parallel()
	const runnerKey = "fleet-runner-key"
	broker := testkit.StartBroker(t, testkit.WithStream("fleet", map[string]uint32{"events": 2}))
	sink := fmt.Sprintf(`type = "sink"
key = "events"
enabled = true
version = 0
name = "Events sink"
path = %q

[[streams]]
stream = "fleet"
topics = ["events"]
schema = "json"
batch_length = 50
poll_interval = "5ms"
consumer_group = "events_sink"

[plugin_config]
`, filepath.Join(testkit.BuildPlugins(t), testkit.PluginLibrary("null_sink")))
	var runners []*testkit.RunnerProc
	var endpoints []string
	for range 2 {
		r := testkit.StartRunner(t, []string{
			"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
			"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=" + runnerKey,
			"IGGY_CONNECTOR_CONFIG=" + sink,
		})
		runners = append(runners, r)
		endpoints = append(endpoints, "http://"+r.WaitTCPEndpoint(t, startWait))
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.toml"), fmt.Sprintf(`[http]
address = "127.0.0.1:0"

[iggy]
address = %q

[fleet]
enabled = true
runners = [%q, %q]
refresh = "200ms"
runner_api_key = %q
`, broker.Addr(), endpoints[0], endpoints[1], runnerKey))
	sup := testkit.StartSupervisor(t, dir, []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"}, startWait)

	tab := newTab(t)
	row := `#overview tr[data-key="sink/events"]`
	must(t, tab.Do(uiWait, chromedp.Navigate(sup.URL("/ui/?refresh=1"))))
	must(t, tab.WaitVisible(uiWait, row+` .badge[data-status="running"]`))
	must(t, tab.WaitVisible(uiWait, `#mode`))
	must(t, tab.WaitVisible(uiWait, row+` td.col-replicas[data-reachable="2"][data-replicas="2"]`))

	must(t, syscall.Kill(runners[1].Pid(), syscall.SIGKILL))
	must(t, tab.WaitVisible(uiWait, row+` td.col-replicas[data-reachable="1"][data-replicas="2"]`))
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS(row+" a.key"))))
	must(t, tab.WaitVisible(uiWait, `#replicas-table tr[data-endpoint="`+endpoints[1]+`"] .badge[data-status="unreachable"]`))
	must(t, tab.WaitVisible(uiWait, `#replicas-table tr[data-endpoint="`+endpoints[0]+`"] .badge[data-status="running"]`))
	for op, enabled := range map[string]bool{"pause": true, "stop": false, "start": false, "restart": false} {
		disabled, err := chromedp.Run(tab.Ctx, chromedp.JavascriptAttribute[bool](chromedp.CSS("#action-"+op), "disabled"))
		must(t, err)
		if disabled == enabled {
			t.Errorf("attach mode: %s enabled %v, want %v", op, !disabled, enabled)
		}
	}
	for _, m := range tab.Errors() {
		t.Errorf("the browser reported: %s", m)
	}
}
