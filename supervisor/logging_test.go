package supervisor_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// RUST_LOG filters the supervisor's own records under target iggy_connectors and the runner lines
// it relays under iggy_connectors::runner, so each can be turned up or down on its own (a plugin's
// own lines have target "connector", left at the default here). The output is read after the
// supervisor exited, so an absent line is really absent.
func TestRustLogTargetsSplitSupervisorAndRunnerLines(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	cases := []struct {
		rustLog string
		// supervisorInfo, runnerInfo: whether info lines of each kind are printed.
		supervisorInfo, runnerInfo bool
	}{
		{rustLog: "warn,iggy_connectors::runner=info", supervisorInfo: false, runnerInfo: true},
		{rustLog: "info,iggy_connectors::runner=warn", supervisorInfo: true, runnerInfo: false},
	}
	for _, c := range cases {
		t.Run(c.rustLog, func(t *testing.T) {
			f := newFixture(t, broker)
			f.writeRuntime(t, "")
			f.write(t, "connectors/a.toml", sinkFile("a", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
			// The API's address is chosen here: the line naming it is an info line of the
			// supervisor, which one case filters out.
			addr := testkit.FreeLoopbackAddr(t)
			p := testkit.StartSupervisorNoWait(t, f.dir, f.env("RUST_LOG="+c.rustLog, "IGGY_CONNECTORS_HTTP_ADDRESS="+addr))
			p.Addr = addr
			// The API answers once every connector settled; the supervisor logged "runner started"
			// before /stats shows the connector running, and the runner wrote its start-up lines
			// before it said so. What it writes later is relayed before the supervisor exits.
			waitFor(t, p, waitLong, "the connector running in /stats", func() bool {
				resp, body, err := p.Do("GET", "/stats", nil, "")
				return err == nil && resp.StatusCode == 200 && strings.Contains(string(body), `"status":"running"`)
			})
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code, err := p.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("after SIGTERM: exit code %d, %v; want 0", code, err)
			}
			logs := p.Logs()
			supervisorInfo := strings.Contains(logs, `msg="runner started"`)
			runnerInfo := slices.ContainsFunc(linesOf(logs, "a"), func(l string) bool {
				return strings.Contains(l, "level=INFO") && !strings.Contains(l, " connector_target=")
			})
			if supervisorInfo != c.supervisorInfo || runnerInfo != c.runnerInfo {
				t.Errorf("supervisor info lines printed %v (want %v), runner info lines %v (want %v):\n%s",
					supervisorInfo, c.supervisorInfo, runnerInfo, c.runnerInfo, logs)
			}
		})
	}
}
