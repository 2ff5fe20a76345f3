package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/state"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A random source and a stdout sink, each in its own runner process, move a bounded stream through
// the dev broker; every count in /stats and /metrics equals what the official SDK reads back.
func TestSourceToSinkCountsMatchTopic(t *testing.T) {
	testkit.OverProtocols(t, sourceToSinkCountsMatchTopic)
}

func sourceToSinkCountsMatchTopic(t *testing.T, protocol string) {
	const total = 600
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := baseEnvOver(protocol, srv, t.TempDir())

	source := testkit.StartRunner(t, withConfig(env, sourceTOML("gen", testkit.PluginPath(t, "random_source"), "demo", "events", "",
		fmt.Sprintf(`interval = "5ms"
max_count = %d
messages_range = [20, 60]
payload_size = 40`, total))))
	sink := testkit.StartRunner(t, withConfig(env, sinkTOML("out", testkit.PluginPath(t, "stdout_sink"), "demo", "events",
		`batch_length = 50`, `print_payload = true`)))
	source.WaitStatus(t, "running", waitLong)
	sink.WaitStatus(t, "running", waitLong)

	sink.WaitUntil(t, waitLong, "the sink to process every message", func() bool {
		return testkit.OrZero(sink.Stats(t).MessagesProcessed) >= total
	})
	// The plugin says so when asked for a batch past max_count, which it is only after the
	// last one was sent and acknowledged: a stray extra batch would be in the topic by then.
	source.WaitUntil(t, waitLong, "the source past max_count", func() bool {
		return strings.Contains(source.Logs(), "Reached max number of")
	})

	topic := readTopic(t, srv, "demo", "events")
	src, snk := source.Stats(t), sink.Stats(t)
	for _, c := range []struct {
		what string
		got  uint64
	}{
		{"source messages_produced", testkit.OrZero(src.MessagesProduced)},
		{"source messages_sent", testkit.OrZero(src.MessagesSent)},
		{"sink messages_consumed", testkit.OrZero(snk.MessagesConsumed)},
		{"sink messages_processed", testkit.OrZero(snk.MessagesProcessed)},
		{"stdout sink distinct offsets logged", uint64(len(offsetsSeen(sink.Logs())))},
	} {
		if c.got != uint64(len(topic)) {
			t.Errorf("%s = %d, the topic holds %d messages", c.what, c.got, len(topic))
		}
	}
	if len(topic) != total {
		t.Errorf("topic holds %d messages, want max_count %d", len(topic), total)
	}
	if src.Errors != 0 || snk.Errors != 0 {
		t.Errorf("errors: source %d, sink %d; want 0", src.Errors, snk.Errors)
	}
	if src.Status != "running" || snk.Status != "running" || src.PID != int32(source.Pid()) || snk.MemoryUsage == 0 {
		t.Errorf("stats status/pid/memory: source %+v sink %+v", src, snk)
	}

	srcMetrics, snkMetrics := source.Metrics(t), sink.Metrics(t)
	if got := testkit.RequireMetric(t, srcMetrics, `iggy_connector_messages_sent_total{connector_key="gen",connector_type="source"}`); got != float64(len(topic)) {
		t.Errorf("/metrics sent = %v, topic holds %d", got, len(topic))
	}
	if got := testkit.RequireMetric(t, snkMetrics, `iggy_connector_messages_processed_total{connector_key="out",connector_type="sink"}`); got != float64(len(topic)) {
		t.Errorf("/metrics processed = %v, topic holds %d", got, len(topic))
	}
	if got := testkit.RequireMetric(t, snkMetrics, `iggy_connector_stage_duration_seconds_count{connector_key="out",connector_type="sink",stage="ffi"}`); got < 1 {
		t.Errorf("/metrics ffi stage count = %v, want at least one batch", got)
	}

	for _, p := range []*testkit.RunnerProc{source, sink} {
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		code, err := p.Wait(15 * time.Second)
		if err != nil || code != 0 {
			t.Errorf("runner pid %d after SIGTERM: exit %d, %v; logs:\n%s", p.Pid(), code, err, p.Logs())
		}
	}
}

// A sink runner killed with SIGKILL mid-stream and started again delivers every message to the
// plugin at least once, and the second run resumes from the stored offset instead of from 0.
func TestSinkKill9LosesNothing(t *testing.T) { testkit.OverProtocols(t, sinkKill9LosesNothing) }

func sinkKill9LosesNothing(t *testing.T, protocol string) {
	const total = 3000
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", total)
	env := withConfig(baseEnvOver(protocol, srv, t.TempDir()), sinkTOML("out", testkit.PluginPath(t, "stdout_sink"), "demo", "events",
		`batch_length = 100
poll_interval = "40ms"`, `print_payload = true`))

	first := testkit.StartRunner(t, env)
	first.WaitStatus(t, "running", waitLong)
	first.WaitUntil(t, waitLong, "the first run to get a third of the way", func() bool {
		return testkit.OrZero(first.Stats(t).MessagesProcessed) >= total/3
	})
	first.Kill9()
	firstSeen := offsetsSeen(first.Logs())
	if len(firstSeen) >= total {
		t.Fatalf("the first run saw all %d messages before the kill; the test needs a mid-stream kill", total)
	}

	second := testkit.StartRunner(t, env)
	second.WaitStatus(t, "running", waitLong)
	second.WaitUntil(t, waitLong, "the second run to drain the topic", func() bool {
		return len(offsetsSeen(first.Logs(), second.Logs())) >= total
	})
	seen := offsetsSeen(first.Logs(), second.Logs())
	for off := uint64(0); off < total; off++ {
		if seen[off] == 0 {
			t.Fatalf("offset %d never reached the plugin", off)
		}
	}
	secondSeen := offsetsSeen(second.Logs())
	if secondSeen[0] != 0 {
		t.Errorf("the second run re-read offset 0: it did not resume from the stored offset")
	}
}

// A source runner killed with SIGKILL and started again continues from the state it saved: the
// fault source's sequence numbers in the topic have no gap, and at most the batch in flight at the
// kill is written twice.
func TestSourceKill9ContinuesFromSavedState(t *testing.T) {
	testkit.OverProtocols(t, sourceKill9ContinuesFromSavedState)
}

func sourceKill9ContinuesFromSavedState(t *testing.T, protocol string) {
	const perBatch = 10
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"seq": 1}))
	stateDir := t.TempDir()
	env := withConfig(baseEnvOver(protocol, srv, stateDir), sourceTOML("faulty", testkit.PluginPath(t, "fault"), "demo", "seq", "",
		fmt.Sprintf(`messages_per_batch = %d
interval_ms = 5`, perBatch)))

	first := testkit.StartRunner(t, env)
	first.WaitStatus(t, "running", waitLong)
	first.WaitUntil(t, waitLong, "the first run to send 200 messages", func() bool {
		return testkit.OrZero(first.Stats(t).MessagesSent) >= 200
	})
	first.Kill9()
	saved, err := state.Load(stateDir, "faulty")
	if err != nil || len(saved) == 0 {
		t.Fatalf("state after kill: %x, %v", saved, err)
	}

	second := testkit.StartRunner(t, env)
	second.WaitStatus(t, "running", waitLong)
	second.WaitUntil(t, waitLong, "the second run to send 100 messages", func() bool {
		return testkit.OrZero(second.Stats(t).MessagesSent) >= 100
	})
	if err := second.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := second.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("second run after SIGTERM: exit %d, %v", code, err)
	}
	// A clean stop leaves the state in upstream's file format, and only there.
	upstreamFile, err := os.ReadFile(state.Path(stateDir, "faulty"))
	if err != nil || len(upstreamFile) == 0 {
		t.Fatalf("upstream-format state file after SIGTERM: %x, %v", upstreamFile, err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 1 {
		t.Errorf("state directory after SIGTERM holds %d files, want only %s", len(entries), state.Path(stateDir, "faulty"))
	}

	checkSequence(t, readTopic(t, srv, "demo", "seq"), perBatch)
}

// The broker goes away for a second and comes back (keeping its data) while a source and a sink runner run; both reconnect by
// themselves and every message still reaches the sink plugin.
func TestBrokerRestartBothRecover(t *testing.T) { testkit.OverProtocols(t, brokerRestartBothRecover) }

func brokerRestartBothRecover(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"seq": 1}))
	env := baseEnvOver(protocol, srv, t.TempDir())
	source := testkit.StartRunner(t, withConfig(env, sourceTOML("faulty", testkit.PluginPath(t, "fault"), "demo", "seq", "",
		`messages_per_batch = 10
interval_ms = 5`)))
	sink := testkit.StartRunner(t, withConfig(env, sinkTOML("out", testkit.PluginPath(t, "stdout_sink"), "demo", "seq",
		`batch_length = 50`, `print_payload = true`)))
	source.WaitStatus(t, "running", waitLong)
	sink.WaitStatus(t, "running", waitLong)
	sink.WaitUntil(t, waitLong, "messages flowing", func() bool { return testkit.OrZero(sink.Stats(t).MessagesProcessed) >= 100 })

	srv.Stop()
	time.Sleep(time.Second) // an outage long enough for both runners to notice and back off
	if err := srv.Restart(true); err != nil {
		t.Fatalf("restart broker: %v", err)
	}
	before := testkit.OrZero(source.Stats(t).MessagesSent)
	source.WaitUntil(t, waitLong, "the source to send again after the restart", func() bool {
		return testkit.OrZero(source.Stats(t).MessagesSent) >= before+200
	})
	if err := source.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := source.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("source after SIGTERM: exit %d, %v", code, err)
	}
	topic := readTopic(t, srv, "demo", "seq")
	sink.WaitUntil(t, waitLong, "the sink to reach every message of the topic", func() bool {
		return len(offsetsSeen(sink.Logs())) >= len(topic)
	})
	seen := offsetsSeen(sink.Logs())
	for off := range uint64(len(topic)) {
		if seen[off] == 0 {
			t.Fatalf("offset %d of %d never reached the sink plugin", off, len(topic))
		}
	}
}

// SIGTERM during a slow consume lets that batch finish and commits it before the runner exits 0:
// the next runner of the group starts right after it, neither losing nor repeating it.
func TestSinkSIGTERMSettlesInFlightBatch(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 300)
	env := baseEnv(srv, t.TempDir())
	stream := "batch_length = 100\nconsumer_group = \"shared\""
	slow := testkit.StartRunner(t, withConfig(env, sinkTOML("k", testkit.PluginPath(t, "fault"), "demo", "events", stream, "sleep_ms = 400")))
	slow.WaitStatus(t, "running", waitLong)
	// consumed moves before the plugin is called: at 200 the second batch is inside its 400 ms consume.
	slow.WaitUntil(t, waitLong, "the second batch in the plugin", func() bool { return testkit.OrZero(slow.Stats(t).MessagesConsumed) >= 200 })
	if err := slow.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := slow.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit %d, %v after SIGTERM; logs:\n%s", code, err, slow.Logs())
	}

	next := testkit.StartRunner(t, withConfig(env, sinkTOML("k", testkit.PluginPath(t, "stdout_sink"), "demo", "events", stream, "print_payload = true")))
	next.WaitStatus(t, "running", waitLong)
	next.WaitUntil(t, waitLong, "the rest of the topic", func() bool { return len(offsetsSeen(next.Logs())) >= 100 })
	seen := offsetsSeen(next.Logs())
	for off := range seen {
		if off < 200 {
			t.Fatalf("offset %d was delivered again: the batch settled at SIGTERM was not committed", off)
		}
	}
	if len(seen) != 100 {
		t.Fatalf("the next runner saw %d messages, want the remaining 100", len(seen))
	}
}

// With offset_commit after_consuming, a consumed batch's offset is stored while the sink runs,
// whether the next poll follows at once (the store goes in that poll's write) or waits for the
// poll interval (stored on its own before the wait): the group's offset reaches the last consumed
// message without a stop, a pause or a newer batch.
func TestSinkStoresOffsetBeforeNextPollOrWait(t *testing.T) {
	for _, c := range []struct {
		name, interval string
		consumed       int
	}{
		{"next poll at once", "0", 250},
		{"next poll after an hour", "1h", 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
			fillTopic(t, srv, "demo", "events", 250)
			stream := fmt.Sprintf("batch_length = 100\npoll_interval = %q\nconsumer_group = \"g\"", c.interval)
			p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("k", testkit.PluginPath(t, "null_sink"), "demo", "events", stream, "")))
			p.WaitStatus(t, "running", waitLong)
			want := uint64(c.consumed - 1)
			p.WaitUntil(t, waitLong, fmt.Sprintf("the group's offset at %d", want), func() bool {
				off, ok, err := groupOffset(t, srv, "demo", "events", "g")
				return err == nil && ok && off == want
			})
			if got := testkit.OrZero(p.Stats(t).MessagesProcessed); got != uint64(c.consumed) {
				t.Fatalf("processed %d messages, want %d", got, c.consumed)
			}
			if p.Exited() {
				t.Fatalf("the runner exited; logs:\n%s", p.Logs())
			}
		})
	}
}

// A pause requested while a batch is in the plugin answers once that batch settled, its offset
// stored: the group's offset is the batch's last one as soon as POST /pause returned.
func TestSinkPauseStoresTheSettledBatchOffset(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 300)
	stream := "batch_length = 100\npoll_interval = \"0\"\nconsumer_group = \"g\""
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("k", testkit.PluginPath(t, "fault"), "demo", "events", stream, "sleep_ms = 400")))
	p.WaitStatus(t, "running", waitLong)
	// consumed moves before the plugin is called: at 100 the first batch is inside its 400 ms consume.
	p.WaitUntil(t, waitLong, "the first batch in the plugin", func() bool { return testkit.OrZero(p.Stats(t).MessagesConsumed) >= 100 })
	if code, body, err := p.Do("POST", "/pause", nil); err != nil || code != 204 {
		t.Fatalf("POST /pause: %d %s %v", code, body, err)
	}
	processed := testkit.OrZero(p.Stats(t).MessagesProcessed)
	off, ok, err := groupOffset(t, srv, "demo", "events", "g")
	if err != nil || !ok || off+1 != processed {
		t.Fatalf("paused after %d processed messages: group offset %d (stored %v, %v), want %d", processed, off, ok, err, processed-1)
	}
}

// groupOffset reads group's stored offset on the one partition of stream/topic, without joining.
func groupOffset(t *testing.T, srv *devbroker.Server, stream, topic, group string) (uint64, bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	admin, err := iggyclient.DialAdmin(ctx, iggyclient.Options{Address: srv.Addr(), Username: "iggy", Password: "iggy", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, false, err
	}
	defer admin.Close()
	parts, err := admin.Partitions(ctx, stream, topic)
	if err != nil || len(parts) != 1 {
		return 0, false, fmt.Errorf("partitions of %s/%s: %v %w", stream, topic, parts, err)
	}
	return admin.GroupOffset(ctx, stream, topic, group, parts[0].ID)
}
