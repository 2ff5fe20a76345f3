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
			p := testkit.StartSupervisorNoWait(t, f.dir, f.env("RUST_LOG="+c.rustLog))
			// The runner's health endpoint answering means it is up; the supervisor logs it once it
			// saw that, and /stats reports it only after.
			waitFor(t, p, waitLong, "the runner to be up", func() bool {
				return strings.Contains(p.Logs(), "runner started") || strings.Contains(p.Logs(), "sink running")
			})
			time.Sleep(200 * time.Millisecond) // let the other kind's line, if any, be written too
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
