package runner_test

import (
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

var reconnectOutage = flag.Duration("reconnect.outage", 10*time.Second, "BenchmarkReconnectAfterOutage: how long the broker stays down each round")

// BenchmarkReconnectAfterOutage measures how long a source and a sink runner, on the default
// reconnect settings (IGGY_CONNECTOR_RECONNECT_MIN/MAX unset), take to move messages again after
// the broker was down for -reconnect.outage (10 s): from the moment the restarted broker listens
// to the first message the source sends and the first one the sink processes. Every iteration is
// one outage; run several, e.g.
//
//	go test -run '^$' -bench ReconnectAfterOutage -benchtime 7x ./runner
//
// and read the min, median and max seconds per runner.
func BenchmarkReconnectAfterOutage(b *testing.B) {
	srv := testkit.StartBroker(b, testkit.WithStream("demo", map[string]uint32{"seq": 1}))
	env := []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + srv.Addr(),
		"IGGY_CONNECTORS_IGGY_USERNAME=iggy",
		"IGGY_CONNECTORS_IGGY_PASSWORD=iggy",
		"IGGY_CONNECTORS_STATE_PATH=" + b.TempDir(),
	}
	source := testkit.StartRunner(b, withConfig(env, sourceTOML("faulty", testkit.PluginPath(b, "fault"), "demo", "seq", "",
		"messages_per_batch = 10\ninterval_ms = 5")))
	sink := testkit.StartRunner(b, withConfig(env, sinkTOML("out", testkit.PluginPath(b, "stdout_sink"), "demo", "seq",
		"batch_length = 50", "print_payload = false")))
	source.WaitStatus(b, "running", waitLong)
	sink.WaitStatus(b, "running", waitLong)
	sink.WaitUntil(b, waitLong, "messages flowing", func() bool { return testkit.OrZero(sink.Stats(b).MessagesProcessed) >= 100 })

	var sourceTimes, sinkTimes []float64
	b.ResetTimer()
	for range b.N {
		srv.Stop()
		time.Sleep(*reconnectOutage) // the outage: its length is what the benchmark sets
		sent := testkit.OrZero(source.Stats(b).MessagesSent)
		processed := testkit.OrZero(sink.Stats(b).MessagesProcessed)
		if err := srv.Restart(true); err != nil {
			b.Fatalf("restart broker: %v", err)
		}
		back := time.Now()
		var sourceBack, sinkBack time.Duration
		// Looked at every 2 ms: the resolution of the measured times. (The runners' logs are
		// printed at cleanup when the wait fails.)
		testkit.EventuallyEvery(b, waitLong, 2*time.Millisecond, "both runners moving messages after the broker came back", func() bool {
			if sourceBack == 0 && testkit.OrZero(source.Stats(b).MessagesSent) > sent {
				sourceBack = time.Since(back)
			}
			if sinkBack == 0 && testkit.OrZero(sink.Stats(b).MessagesProcessed) > processed {
				sinkBack = time.Since(back)
			}
			return sourceBack != 0 && sinkBack != 0
		})
		sourceTimes = append(sourceTimes, sourceBack.Seconds())
		sinkTimes = append(sinkTimes, sinkBack.Seconds())
	}
	b.StopTimer()
	for _, m := range []struct {
		name  string
		times []float64
	}{{"source", sourceTimes}, {"sink", sinkTimes}} {
		slices.Sort(m.times)
		b.ReportMetric(m.times[0], m.name+"-min-s")
		b.ReportMetric(m.times[len(m.times)/2], m.name+"-median-s")
		b.ReportMetric(m.times[len(m.times)-1], m.name+"-max-s")
		b.Logf("%s back after (s): %.3f", m.name, m.times)
	}
}
