package supervisor_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// benchSizes are the connector counts every tree benchmark runs at.
var benchSizes = []int{1, 10, 50}

// benchExtraEnv are extra variables for the benchmarked supervisor (and so its runners), from
// BENCH_SUPERVISOR_ENV ("GOGC=50 GOMAXPROCS=1"), to measure runtime settings.
var benchExtraEnv = strings.Fields(os.Getenv("BENCH_SUPERVISOR_ENV"))

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
	p := testkit.StartSupervisor(b, f.dir, f.env(append([]string{"IGGY_SUPERVISOR_START_TIMEOUT=120s", "IGGY_SUPERVISOR_HEALTH_INTERVAL=1s"}, benchExtraEnv...)...), 5*time.Minute)
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

// memFigures are one process's memory figures in bytes: resident, proportional (each shared page
// divided among the processes mapping it), its anonymous part (heap, stacks: what the program
// allocates; the rest is mapped files, mostly the binary, whose resident share also depends on the
// page cache), and unique (pages no other process maps).
type memFigures struct{ rss, pss, pssAnon, uss uint64 }

// readMem reads /proc/PID/smaps_rollup.
func readMem(b *testing.B, pid int) memFigures {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		b.Fatal(err)
	}
	var m memFigures
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "Rss":
			m.rss = kb << 10
		case "Pss":
			m.pss = kb << 10
		case "Pss_Anon":
			m.pssAnon = kb << 10
		case "Private_Clean", "Private_Dirty", "Private_Hugetlb":
			m.uss += kb << 10
		}
	}
	if m.rss == 0 {
		b.Fatalf("no Rss in /proc/%d/smaps_rollup", pid)
	}
	return m
}

const mib = 1 << 20

// BenchmarkTreeMemory measures the supervisor's and the runners' memory with 1, 10 and 50 idle
// null sinks: RSS, and PSS and USS from /proc/PID/smaps_rollup (RSS counts the shared pages of the
// runner binary in every runner; PSS divides them among the runners, USS leaves them out). Runner
// figures are the mean over the runners, plus the largest PSS.
func BenchmarkTreeMemory(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("connectors=%d", n), func(b *testing.B) {
			p := benchTree(b, n)
			// A benchmark of idle memory: the tree is measured once start-up has had time to settle
			// (garbage collected, pages touched only at start left alone), so time passes on purpose.
			time.Sleep(2 * time.Second)
			var pids []int
			for _, c := range statsOf(b, p, nil) {
				pids = append(pids, c.PID)
			}
			var sup, sum memFigures
			var maxPSS uint64
			for b.Loop() {
				sup = readMem(b, p.Pid())
				sum, maxPSS = memFigures{}, 0
				for _, pid := range pids {
					m := readMem(b, pid)
					sum.rss += m.rss
					sum.pss += m.pss
					sum.pssAnon += m.pssAnon
					sum.uss += m.uss
					maxPSS = max(maxPSS, m.pss)
				}
			}
			per := func(v uint64) float64 { return float64(v) / float64(len(pids)) / mib }
			b.ReportMetric(float64(sup.rss)/mib, "sup-RSS-MiB")
			b.ReportMetric(float64(sup.pss)/mib, "sup-PSS-MiB")
			b.ReportMetric(float64(sup.pssAnon)/mib, "sup-PSSanon-MiB")
			b.ReportMetric(float64(sup.uss)/mib, "sup-USS-MiB")
			b.ReportMetric(per(sum.rss), "runner-RSS-MiB")
			b.ReportMetric(per(sum.pss), "runner-PSS-MiB")
			b.ReportMetric(per(sum.pssAnon), "runner-PSSanon-MiB")
			b.ReportMetric(per(sum.uss), "runner-USS-MiB")
			b.ReportMetric(float64(maxPSS)/mib, "runner-maxPSS-MiB")
		})
	}
}

// BenchmarkAPI measures GET /stats and GET /metrics with 1, 10 and 50 idle null sinks, reporting
// the median and the 99th percentile of the request latency besides the mean (ns/op). Run it with
// a fixed count (-benchtime=200x) so the percentiles rest on enough requests.
func BenchmarkAPI(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("connectors=%d", n), func(b *testing.B) {
			benchGets(b, benchTree(b, n), "/stats", "/metrics")
		})
	}
}

// benchGets runs one sub-benchmark per path: GET it from the supervisor p, each answer read
// whole and 200, reporting the latency percentiles.
func benchGets(b *testing.B, p *testkit.SupervisorProc, paths ...string) {
	client := &http.Client{Timeout: 30 * time.Second}
	for _, path := range paths {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				resp, err := client.Get(p.URL(path))
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took = append(took, time.Since(start))
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %s %v", path, resp.Status, err)
				}
			}
			reportPercentiles(b, took)
		})
	}
}

// reportPercentiles reports the median and 99th percentile of took in milliseconds.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		i := min(len(took)-1, int(q*float64(len(took))))
		return float64(took[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
