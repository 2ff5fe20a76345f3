package runner_test

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

var (
	rateLimitWindow = flag.Duration("ratelimit.window", 20*time.Second, "BenchmarkRateLimitAccuracy: how long each rate is measured")
	rateLimitRate   = flag.Int("ratelimit.rate", 500, "BenchmarkRateLimitAccuracy: messages_per_second of the connector under test")
)

// BenchmarkRateLimitAccuracy measures how closely a connector's [rate_limit] holds: a sink over a
// backlog far larger than the window needs (50-message polls) and a source producing as fast as it
// can (batches of a fiftieth of the rate, at least 10; unlimited it must be faster than the limit),
// each limited to -ratelimit.rate messages a second; over
// -ratelimit.window (20 s) after the first message, the messages processed (sink) or sent (source)
// give the measured rate and its deviation from the limit in percent. One iteration per window:
//
//	go test -run '^$' -bench RateLimitAccuracy -benchtime 1x ./runner
func BenchmarkRateLimitAccuracy(b *testing.B) {
	limit := *rateLimitRate
	window := *rateLimitWindow
	srv := testkit.StartBroker(b, testkit.WithStream("demo", map[string]uint32{"backlog": 1, "produced": 1}))
	need := int(float64(limit)*window.Seconds()*float64(b.N)) + 10*limit
	testkit.FillTopic(b, srv, "demo", "backlog", need)
	section := fmt.Sprintf("\n[rate_limit]\nmessages_per_second = %d\n", limit)
	env := baseEnv(srv, b.TempDir())
	sink := testkit.StartRunner(b, withConfig(env, sinkTOML("limited", testkit.PluginPath(b, "null_sink"), "demo", "backlog",
		"batch_length = 50\npoll_interval = \"1ms\"", "")+section))
	source := testkit.StartRunner(b, withConfig(env, sourceTOML("limited", testkit.PluginPath(b, "fault"), "demo", "produced", "",
		fmt.Sprintf("messages_per_batch = %d\ninterval_ms = 0", max(10, limit/50)))+section))
	sink.WaitStatus(b, "running", waitLong)
	source.WaitStatus(b, "running", waitLong)
	sinkCount := func() uint64 { return testkit.OrZero(sink.Stats(b).MessagesProcessed) }
	sourceCount := func() uint64 { return testkit.OrZero(source.Stats(b).MessagesSent) }
	sink.WaitUntil(b, waitLong, "the sink's first messages", func() bool { return sinkCount() > 0 })
	source.WaitUntil(b, waitLong, "the source's first messages", func() bool { return sourceCount() > 0 })

	b.ResetTimer()
	for range b.N {
		s0, p0, t0 := sinkCount(), sourceCount(), time.Now()
		time.Sleep(window) // the measured window: rates are counted over it
		s1, p1, elapsed := sinkCount(), sourceCount(), time.Since(t0)
		for _, m := range []struct {
			name  string
			count uint64
		}{{"sink", s1 - s0}, {"source", p1 - p0}} {
			rate := float64(m.count) / elapsed.Seconds()
			dev := (rate - float64(limit)) / float64(limit) * 100
			b.ReportMetric(rate, m.name+"-msg/s")
			b.ReportMetric(dev, m.name+"-deviation-%")
			b.Logf("%s: %d messages in %s: %.1f msg/s against a limit of %d (%+.2f%%)", m.name, m.count, elapsed.Round(time.Millisecond), rate, limit, dev)
			if math.Abs(dev) > 5 {
				b.Errorf("%s: %.1f msg/s is %+.2f%% off the limit of %d msg/s (bound ±5%%)", m.name, rate, dev, limit)
			}
		}
	}
}
