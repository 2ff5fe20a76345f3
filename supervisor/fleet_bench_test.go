package supervisor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// fleetBenchRunners is the fleet size of BenchmarkFleetAPI (issue 23: /stats and /metrics at 50
// runners answer in 50 ms median or less).
const fleetBenchRunners = 50

// BenchmarkFleetAPI measures GET /stats and GET /metrics of a supervisor process in attach mode
// over 50 real runner processes (idle null sinks on loopback TCP, 25 keys of two replicas each),
// refreshing every second, reporting the median and 99th percentile besides the mean; then again
// with one runner hung (SIGSTOP: its connections are accepted but never answered), which costs
// the refresh its per-runner timeout and must not reach the answers. Run it with a fixed count
// (-benchtime=200x).
func BenchmarkFleetAPI(b *testing.B) {
	broker := testkit.StartBroker(b, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	var runners []*testkit.RunnerProc
	var endpoints []string
	for i := range fleetBenchRunners {
		key := fmt.Sprintf("null%02d", i/2)
		cfg := strings.Replace(sinkFile(key, testkit.PluginPath(b, "null_sink"), "demo", "events", ""), `poll_interval = "5ms"`, `poll_interval = "100ms"`, 1)
		p := testkit.StartRunner(b, []string{
			"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + b.TempDir(),
			"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=" + fleetRunnerKey,
			"IGGY_CONNECTOR_CONFIG=" + cfg + "\n[plugin_config]\n",
		})
		runners = append(runners, p)
	}
	for _, p := range runners {
		endpoints = append(endpoints, strconv.Quote(p.WaitTCPEndpoint(b, 2*time.Minute)))
	}
	dir := b.TempDir()
	file := fmt.Sprintf("[http]\naddress = \"127.0.0.1:0\"\n[http.metrics]\nenabled = true\n[iggy]\naddress = %q\n[fleet]\nenabled = true\nrefresh = \"1s\"\nrunner_api_key = %q\nrunners = [%s]\n",
		broker.Addr(), fleetRunnerKey, strings.Join(endpoints, ", "))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(file), 0o600); err != nil {
		b.Fatal(err)
	}
	sup := testkit.StartSupervisor(b, dir, []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"}, time.Minute)
	waitFor(b, sup, 2*time.Minute, "every runner running", func() bool {
		running := 0
		for _, c := range statsOf(b, sup, nil) {
			if c.Status == "running" {
				running++
			}
		}
		return running == fleetBenchRunners/2
	})
	measure := func(b *testing.B) { benchGets(b, sup, "/stats", "/metrics") }
	b.Run(fmt.Sprintf("runners=%d", fleetBenchRunners), measure)
	hung := runners[0]
	if err := hung.Signal(syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = hung.Signal(syscall.SIGCONT) })
	b.Run(fmt.Sprintf("runners=%d/one-hung", fleetBenchRunners), measure)
}
