package supervisor_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// storedOffset is the sink's consumer-group offset on demo/events as the SDK reads it back
// (-1 when none is stored yet).
func storedOffset(t *testing.T, cli iggcon.Client, key string) int64 {
	t.Helper()
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	gid, _ := iggcon.NewIdentifier(config.DefaultConsumerGroup(key))
	partition := uint32(0)
	info, err := cli.GetConsumerOffset(iggcon.NewGroupConsumer(gid), sid, tid, &partition)
	if err != nil || info == nil {
		return -1
	}
	return int64(info.StoredOffset)
}

// startDrainingSink fills demo/events with n messages and starts a supervisor running one sink
// key on the fault plugin with pluginConfig, reading batches of batchLength and storing its offset
// after each consumed batch (at least once). The supervisor reads runner status once a second, as
// by default. It returns the supervisor and an SDK client to read offsets back.
func startDrainingSink(t *testing.T, key string, n, batchLength int, pluginConfig string) (*testkit.SupervisorProc, iggcon.Client) {
	t.Helper()
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.FillTopic(t, broker, "demo", "events", n)
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	file := strings.Replace(sinkFile(key, f.plugin("fault"), "demo", "events", ""), "batch_length = 50", fmt.Sprintf("batch_length = %d", batchLength), 1)
	f.write(t, "connectors/"+key+".toml", file+"\n[plugin_config]\n"+pluginConfig)
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_SUPERVISOR_HEALTH_INTERVAL=1s"), waitLong)
	return p, testkit.LoggedInClient(t, broker)
}

// A sink whose plugin segfaults inside its 5th consume of every run, with the supervisor reading
// runner status only once a second: every message is processed exactly once (a crashed consume
// never returned, so its batch counts as consumed, not processed, and is delivered again), and
// /stats and /metrics show exactly that, although each run lives well under a second.
//
//	processed == N                          (the SDK reads back offset N-1)
//	consumed  == N + restarts × batch_length (each crash re-polls one full batch)
func TestCountsSurviveCrashesInsideConsume(t *testing.T) {
	const n, batch = 2000, 100
	p, cli := startDrainingSink(t, "crashy", n, batch, "crash_on_batch = 5\n")

	waitFor(t, p, 2*waitLong, "every message to be stored as consumed", func() bool {
		return storedOffset(t, cli, "crashy") == n-1
	})
	waitFor(t, p, waitLong, "the last run to settle", func() bool {
		c := statsOf(t, p, nil)["sink/crashy"]
		return c.Status == "running" && testkit.OrZero(c.MessagesProcessed) == n
	})
	c := statsOf(t, p, nil)["sink/crashy"]
	if c.Restarts < 3 {
		t.Fatalf("restarts = %d; the plugin should have crashed at least 3 times (every 5th batch of %d)", c.Restarts, n/batch)
	}
	if got, want := testkit.OrZero(c.MessagesConsumed), uint64(n)+c.Restarts*batch; got != want {
		t.Errorf("consumed = %d, want %d (N + %d crashed batches of %d)", got, want, c.Restarts, batch)
	}
	if c.Errors != 0 {
		t.Errorf("errors = %d, want 0", c.Errors)
	}
	_, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	series := `{connector_key="crashy",connector_type="sink"}`
	if v := testkit.RequireMetric(t, string(body), "iggy_connector_messages_processed_total"+series); v != n {
		t.Errorf("/metrics processed = %v, want %d", v, n)
	}
	if v := testkit.RequireMetric(t, string(body), "iggy_connector_messages_consumed_total"+series); v != float64(testkit.OrZero(c.MessagesConsumed)) {
		t.Errorf("/metrics consumed = %v, /stats %d", v, testkit.OrZero(c.MessagesConsumed))
	}
	// Each processed batch went through the stage histogram once, whichever run did it.
	if v := testkit.RequireMetric(t, string(body), `iggy_connector_stage_duration_seconds_count{connector_key="crashy",connector_type="sink",stage="ffi"}`); v != n/batch {
		t.Errorf("ffi stage count = %v, want %d batches", v, n/batch)
	}
}

// A sink runner killed with SIGKILL at random moments while it drains a topic: /stats keeps every
// count. At least once means a batch the plugin consumed whose offset was not stored yet when the
// runner died is consumed and processed again by the next runner, so
//
//	N <= processed <= N + kills × batch_length, and consumed - processed <= kills × batch_length
//
// (a kill can leave one batch polled but not processed), once the SDK reads back offset N-1.
func TestCountsSurviveKill9WhileProcessing(t *testing.T) {
	const n, batch = 20000, 100
	// 10 ms per consume: under 100 batches a second, so the kills land mid-drain.
	p, cli := startDrainingSink(t, "victim", n, batch, "sleep_ms = 10\n")

	kills := uint64(0)
	lastPID := 0
	deadline := time.Now().Add(3 * waitLong)
	for storedOffset(t, cli, "victim") < n-1 && kills < 8 {
		pid := 0
		p.WaitUntil(t, time.Until(deadline), fmt.Sprintf("a new runner processing, or the topic drained (%d kills so far)", kills), func() bool {
			if storedOffset(t, cli, "victim") >= n-1 {
				return true
			}
			c := statsOf(t, p, nil)["sink/victim"]
			if c.Status == "running" && c.PID != 0 && c.PID != lastPID && testkit.OrZero(c.MessagesProcessed) > 0 {
				pid = c.PID
				return true
			}
			return false
		})
		if pid == 0 {
			break // drained
		}
		// The kill lands at a random moment of the drain: the moment is what the test varies,
		// not a state it waits for.
		time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			kills++
			lastPID = pid
		}
	}
	waitFor(t, p, 3*waitLong, "every message to be stored as consumed", func() bool {
		return storedOffset(t, cli, "victim") == n-1
	})
	if kills < 3 {
		t.Fatalf("only %d kills landed before the topic was drained", kills)
	}
	// The runner after the last kill: until the supervisor has seen that death, the killed
	// runner's page can still say running.
	waitFor(t, p, waitLong, "the runner after the last kill to settle", func() bool {
		c := statsOf(t, p, nil)["sink/victim"]
		return c.Status == "running" && c.PID != 0 && c.PID != lastPID
	})
	c := statsOf(t, p, nil)["sink/victim"]
	processed, consumed := testkit.OrZero(c.MessagesProcessed), testkit.OrZero(c.MessagesConsumed)
	t.Logf("%d kills: processed %d, consumed %d of %d", kills, processed, consumed, n)
	if processed < n || processed > n+kills*batch {
		t.Errorf("processed = %d, want between %d and %d (%d kills, batches of %d)", processed, n, n+kills*batch, kills, batch)
	}
	if consumed < processed || consumed-processed > kills*batch {
		t.Errorf("consumed = %d, processed = %d: want consumed - processed in [0, %d]", consumed, processed, kills*batch)
	}
	if c.Restarts < kills {
		t.Errorf("restarts = %d after %d kills", c.Restarts, kills)
	}
}
