package supervisor_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Two supervisors with the same source on the iggy state backend (two replicas of the drop-in
// runtime, each with its own state directory): one runs the source, the other lists it as standby
// in /stats; when the first stops, the second takes over. Neither writes a state file.
func TestSupervisorReplicasShareASourceOnTheIggyBackend(t *testing.T) {
	testkit.OverProtocols(t, supervisorReplicasShareASourceOnTheIggyBackend)
}

func supervisorReplicasShareASourceOnTheIggyBackend(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	var dirs []string
	var sups []*testkit.SupervisorProc
	for range 2 {
		f := newFixture(t, broker)
		f.writeRuntime(t, "")
		f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("random_source"), "demo", "events", "")+"\n[plugin_config]\ninterval = \"20ms\"\n")
		// The API binds once every connector settled; a standby is settled (the start timeout,
		// 20 s here, is not waited for), so the API of the second supervisor answers as quickly.
		p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol), "IGGY_CONNECTORS_STATE_BACKEND=iggy"), 10*time.Second)
		waitFor(t, p, waitLong, "the source to be running or in standby", func() bool {
			st := statsOf(t, p, nil)["source/gen"].Status
			return st == "running" || st == "standby"
		})
		dirs, sups = append(dirs, f.dir), append(sups, p)
	}
	active, standby := sups[0], sups[1]
	if a, s := statsOf(t, active, nil)["source/gen"].Status, statsOf(t, standby, nil)["source/gen"].Status; a != "running" || s != "standby" {
		t.Fatalf("statuses: first supervisor %q, second %q; want running and standby", a, s)
	}
	if err := active.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := active.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("first supervisor after SIGTERM: exit %d, %v", code, err)
	}
	waitFor(t, standby, waitLong, "the second supervisor's source to take over", func() bool {
		return statsOf(t, standby, nil)["source/gen"].Status == "running"
	})
	for _, dir := range dirs {
		if entries, _ := os.ReadDir(filepath.Join(dir, "state")); len(entries) != 0 {
			t.Errorf("state directory %s holds %d files with the iggy backend", dir, len(entries))
		}
	}
}
