package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Benchmark sizes: 1,000-message batches of 100-byte JSON payloads, as the other packages measure.
const (
	// benchWait bounds one timed drain or fill: far beyond what one takes on a loaded machine.
	benchWait     = 10 * time.Minute
	benchMessages = 200_000
	benchBatch    = 1000
	benchPayload  = 100
)

// benchPayloadJSON is a 100-byte JSON object (the sink decodes JSON).
var benchPayloadJSON = []byte(`{"id":123456,"title":"Hello","text":"` + strings.Repeat("x", benchPayload-38) + `"}`)

func fillTopicN(b *testing.B, srv *devbroker.Server, stream, topic string, n int) {
	b.Helper()
	cli := testkit.LoggedInClient(b, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	batch := make([]iggcon.IggyMessage, 0, benchBatch)
	for len(batch) < benchBatch {
		m, err := iggcon.NewIggyMessage(benchPayloadJSON)
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, m)
	}
	for sent := 0; sent < n; sent += benchBatch {
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch[:min(benchBatch, n-sent)]); err != nil {
			b.Fatal(err)
		}
	}
}

// sdkDrain reads n messages of partition 0 with a bare SDK offset-poll loop and returns the time.
func sdkDrain(b *testing.B, srv *devbroker.Server, stream, topic string, n int) time.Duration {
	b.Helper()
	cli := testkit.LoggedInClient(b, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	partition := uint32(0)
	start := time.Now()
	for read := 0; read < n; {
		polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(uint64(read)), benchBatch, false, &partition)
		if err != nil {
			b.Fatal(err)
		}
		read += len(polled.Messages)
	}
	return time.Since(start)
}

// sdkSend writes n messages in batches with a bare SDK send loop and returns the time.
func sdkSend(b *testing.B, srv *devbroker.Server, stream, topic string, n int) time.Duration {
	b.Helper()
	start := time.Now()
	fillTopicN(b, srv, stream, topic, n)
	return time.Since(start)
}

// BenchmarkSinkThroughput drains a pre-filled topic into the null sink through a runner process
// and, in the same run and on the same broker, with a bare SDK poll loop. Reported: messages per
// second of each and their ratio, and the runner's RSS idle and after the drain.
func BenchmarkSinkThroughput(b *testing.B) {
	nullSink := testkit.PluginPath(b, "null_sink")
	var runnerTotal, sdkTotal time.Duration
	var idleRSS, loadedRSS uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"drain": 1, "empty": 1}))
		env := baseEnv(srv, b.TempDir())
		cfg := sinkTOML("drain", nullSink, "bench", "drain", fmt.Sprintf("batch_length = %d\npoll_interval = \"0\"", benchBatch), "")
		fillTopicN(b, srv, "bench", "drain", benchMessages)
		sdkTotal += sdkDrain(b, srv, "bench", "drain", benchMessages)

		// Idle: a runner on an empty topic.
		idle := testkit.StartRunner(b, withConfig(env, sinkTOML("idle", nullSink, "bench", "empty", "", "")))
		idle.WaitStatus(b, "running", waitLong)
		// Idle memory is measured once the runner has idled a while (start-up settled, a few
		// empty polls done): time passes on purpose.
		time.Sleep(500 * time.Millisecond)
		idleRSS = idle.Stats(b).MemoryUsage
		stopRunner(b, idle)

		p := testkit.StartRunner(b, append(withConfig(env, cfg), profileEnv("sink")...))
		p.WaitStatus(b, "running", waitLong)
		b.StartTimer()
		start := time.Now()
		// Looked at every 10 ms: the resolution of the measured time.
		testkit.EventuallyEvery(b, benchWait, 10*time.Millisecond, "the drain", func() bool { return testkit.OrZero(p.Stats(b).MessagesProcessed) >= benchMessages })
		runnerTotal += time.Since(start)
		b.StopTimer()
		logStages(b, p, "drain", "sink", "decode", "prepare", "ffi", "total")
		loadedRSS = p.Stats(b).MemoryUsage
		stopRunner(b, p)
		srv.Stop()
	}
	reportThroughput(b, runnerTotal, sdkTotal)
	b.ReportMetric(float64(idleRSS)/(1<<20), "idle_rss_MiB")
	b.ReportMetric(float64(loadedRSS)/(1<<20), "loaded_rss_MiB")
}

// BenchmarkSourceThroughput moves messages from the random source plugin into a topic through a
// runner process and, in the same run on the same broker, with a bare SDK send loop of the same
// batches.
func BenchmarkSourceThroughput(b *testing.B) {
	random := testkit.PluginPath(b, "random_source")
	var runnerTotal, sdkTotal, runnerCPU time.Duration
	var loadedRSS uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"fill": 1, "sdk": 1}))
		sdkRound := sdkSend(b, srv, "bench", "sdk", benchMessages)
		sdkTotal += sdkRound
		cfg := sourceTOML("gen", random, "bench", "fill", fmt.Sprintf("batch_length = %d\nlinger_time = \"0\"", benchBatch),
			fmt.Sprintf("interval = \"0ms\"\nmax_count = %d\nmessages_range = [%d, %d]\npayload_size = %d", benchMessages, benchBatch, benchBatch+1, benchPayload-86))
		p := testkit.StartRunner(b, append(withConfig(baseEnv(srv, b.TempDir()), cfg), profileEnv("source")...))
		p.WaitStatus(b, "running", waitLong)
		cpuBefore := processCPU(b, p.Pid())
		b.StartTimer()
		start := time.Now()
		testkit.EventuallyEvery(b, benchWait, 10*time.Millisecond, "every message sent", func() bool { return testkit.OrZero(p.Stats(b).MessagesSent) >= benchMessages })
		runnerRound := time.Since(start)
		runnerTotal += runnerRound
		b.StopTimer()
		cpu := processCPU(b, p.Pid()) - cpuBefore
		runnerCPU += cpu
		b.Logf("round %d: runner/sdk %.3f, runner CPU %.2f µs/msg", i+1, sdkRound.Seconds()/runnerRound.Seconds(), float64(cpu.Microseconds())/benchMessages)
		logStages(b, p, "gen", "source", "decode", "prepare", "iggy_send", "state_save", "total")
		loadedRSS = p.Stats(b).MemoryUsage
		stopRunner(b, p)
		srv.Stop()
	}
	reportThroughput(b, runnerTotal, sdkTotal)
	b.ReportMetric(float64(runnerCPU.Microseconds())/float64(benchMessages*b.N), "runner_cpu_µs/msg")
	b.ReportMetric(float64(loadedRSS)/(1<<20), "loaded_rss_MiB")
}

// processCPU is the user and system CPU time process pid has used (/proc/pid/stat, in clock
// ticks of 10 ms), plugin threads included. CPU per message moves less with the load of a shared
// machine than throughput does.
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the parenthesised command name; utime and stime are fields 14 and 15.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func reportThroughput(b *testing.B, runnerTotal, sdkTotal time.Duration) {
	msgs := float64(benchMessages * b.N)
	runnerRate := msgs / runnerTotal.Seconds()
	sdkRate := msgs / sdkTotal.Seconds()
	b.ReportMetric(runnerRate, "runner_msgs/s")
	b.ReportMetric(sdkRate, "sdk_msgs/s")
	b.ReportMetric(runnerRate/sdkRate, "runner/sdk")
}

// BenchmarkExecToRunning is the time from exec of the runner binary to status running (plugin
// loaded and opened, Iggy dialled, consumer group joined), per start.
func BenchmarkExecToRunning(b *testing.B) {
	srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"events": 1}))
	env := withConfig(baseEnv(srv, b.TempDir()), sinkTOML("start", testkit.PluginPath(b, "null_sink"), "bench", "events", "", ""))
	testkit.RunnerBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := testkit.StartRunner(b, env)
		// Looked at every millisecond: the resolution of the measured time.
		testkit.EventuallyEvery(b, waitLong, time.Millisecond, "status running", func() bool {
			if p.Exited() {
				b.Fatalf("runner exited: %s", p.Logs())
			}
			h, err := p.Health()
			return err == nil && h.ConnectorStatus == "running"
		})
		b.StopTimer()
		stopRunner(b, p)
		b.StartTimer()
	}
}

// profileEnv asks the runner for a CPU profile when RUNNER_BENCH_PROFILE_DIR is set.
// RUNNER_BENCH_ENV adds one NAME=value to the runner's environment (e.g. GOGC=100).
func profileEnv(name string) []string {
	var env []string
	if extra := os.Getenv("RUNNER_BENCH_ENV"); extra != "" {
		env = append(env, extra)
	}
	dir := os.Getenv("RUNNER_BENCH_PROFILE_DIR")
	if dir == "" {
		return env
	}
	return append(env, "IGGY_CONNECTOR_CPU_PROFILE="+filepath.Join(dir, name+".pprof"))
}

// logStages logs the mean per-batch duration of each pipeline stage from the runner's histogram.
func logStages(b *testing.B, p *testkit.RunnerProc, key, kind string, stages ...string) {
	text := p.Metrics(b)
	var parts []string
	for _, st := range stages {
		labels := fmt.Sprintf(`{connector_key=%q,connector_type=%q,stage=%q}`, key, kind, st)
		sum := testkit.RequireMetric(b, text, "iggy_connector_stage_duration_seconds_sum"+labels)
		count := testkit.RequireMetric(b, text, "iggy_connector_stage_duration_seconds_count"+labels)
		if count > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2fms", st, sum/count*1000))
		}
	}
	b.Logf("%s mean per batch: %s", kind, strings.Join(parts, ", "))
}
