package supervisor_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// benchTree starts a supervisor running n null sinks and waits until every one is running.
func benchTree(b *testing.B, n int) *testkit.SupervisorProc {
	b.Helper()
	broker := testkit.StartBroker(b, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(b, broker)
	f.writeRuntime(b, "")
	for i := range n {
		key := fmt.Sprintf("null%02d", i)
		// Idle sinks polling every 100 ms, so the broker traffic of 50 of them does not swamp two cores.
		file := strings.Replace(sinkFile(key, f.plugin("null_sink"), "demo", "events", ""), `poll_interval = "5ms"`, `poll_interval = "100ms"`, 1)
		f.write(b, "connectors/"+key+".toml", file+"\n[plugin_config]\n")
	}
	p := testkit.StartSupervisor(b, f.dir, f.env("IGGY_SUPERVISOR_START_TIMEOUT=120s"), 5*time.Minute)
	waitFor(b, p, 2*time.Minute, "every sink to run", func() bool {
		running := 0
		for _, c := range statsOf(b, p, nil) {
			if c.Status == "running" {
				running++
			}
		}
		return running == n
	})
	return p
}

// vmRSS reads a process's resident set size in bytes.
func vmRSS(b *testing.B, pid int) uint64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

// BenchmarkTreeRSS measures the supervisor's resident memory and that of the whole process tree
// (supervisor plus runners) with 1, 10 and 50 idle null sinks.
func BenchmarkTreeRSS(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("connectors=%d", n), func(b *testing.B) {
			p := benchTree(b, n)
			time.Sleep(time.Second) // let start-up garbage be collected
			var pids []int
			for _, c := range statsOf(b, p, nil) {
				pids = append(pids, c.PID)
			}
			var supervisor, tree uint64
			for b.Loop() {
				supervisor = vmRSS(b, p.Pid())
				tree = supervisor
				for _, pid := range pids {
					tree += vmRSS(b, pid)
				}
			}
			b.ReportMetric(float64(supervisor)/(1<<20), "supervisor-MiB")
			b.ReportMetric(float64(tree)/(1<<20), "tree-MiB")
			b.ReportMetric(float64(tree-supervisor)/float64(n)/(1<<20), "MiB/runner")
		})
	}
}

// BenchmarkAPIWith50Connectors measures GET /stats and GET /metrics, each of which asks all 50
// runners over their Unix sockets.
func BenchmarkAPIWith50Connectors(b *testing.B) {
	p := benchTree(b, 50)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, path := range []string{"/stats", "/metrics"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			for b.Loop() {
				resp, err := client.Get(p.URL(path))
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %s", path, resp.Status)
				}
			}
		})
	}
}
