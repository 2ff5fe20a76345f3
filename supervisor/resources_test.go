package supervisor_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// threadsOf reads the number of OS threads of process pid.
func threadsOf(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no Threads line for pid %d", pid)
	return 0
}

// Waiting for its runners to exit holds no OS thread per runner (each thread costs the supervisor
// stack and signal-stack memory): with 16 runners the supervisor has fewer than 16 threads.
func TestSupervisorThreadsDoNotGrowWithRunners(t *testing.T) {
	const n = 16
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	for i := range n {
		key := fmt.Sprintf("idle%02d", i)
		f.write(t, "connectors/"+key+".toml", strings.Replace(sinkFile(key, f.plugin("null_sink"), "demo", "events", ""), `"5ms"`, `"100ms"`, 1)+"\n[plugin_config]\n")
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(), 2*waitLong)
	waitFor(t, p, 2*waitLong, "every sink to run", func() bool {
		running := 0
		for _, c := range statsOf(t, p, nil) {
			if c.Status == "running" {
				running++
			}
		}
		return running == n
	})
	if threads := threadsOf(t, p.Pid()); threads >= n {
		t.Fatalf("supervisor has %d threads with %d runners; want fewer than one per runner", threads, n)
	}
}
