package runner

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/memclient"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The sink and source loops in this process against the in-memory client (pkg/iggyclient/
// memclient), with the real C plugins: fast unit tests beside the end-to-end ones, which run
// real runner processes against the dev broker.

// memRunner builds a runner of the connector file toml, logging through log.
func memRunner(t testing.TB, toml string, log *slog.Logger, env ...string) *Runner {
	t.Helper()
	environ := append([]string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=127.0.0.1:1", // never dialled: the test hands the runner its client
		"IGGY_CONNECTORS_IGGY_USERNAME=iggy", "IGGY_CONNECTORS_IGGY_PASSWORD=iggy",
		"IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTOR_RECONNECT_MIN=1ms", "IGGY_CONNECTOR_RECONNECT_MAX=5ms",
		"IGGY_CONNECTOR_CONFIG=" + toml,
	}, env...)
	s, err := LoadSettings(context.Background(), environ)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	plugin.SetLogger(log)
	plugin.SetLogLimit(0, nil) // every message's line is the evidence
	return r
}

// memSinkTOML is a stdout sink printing every payload, on topic t of stream s.
func memSinkTOML(t testing.TB, streamExtra string) string {
	return fmt.Sprintf(`type = "sink"
key = "mem"
enabled = true
version = 1
name = "sink over memclient"
path = %q

[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
consumer_group = "g"
%s

[plugin_config]
print_payload = true
`, testkit.PluginPath(t, "stdout_sink"), streamExtra)
}

// deliveries records what the stdout sink printed: every message's partition (from its payload,
// {"p":P,...}) and offset (from the line), as the plugin prints it, during its consume call.
type deliveries struct {
	mu      sync.Mutex
	seen    map[[2]uint64]int // (partition, offset) -> times delivered
	changed chan struct{}     // closed at every change, then replaced
	slog.Handler
}

var deliveredLine = regexp.MustCompile(`^Message offset: (\d+), payload: Json\(\{"p":(\d+)`)

func newDeliveries() *deliveries {
	return &deliveries{seen: map[[2]uint64]int{}, changed: make(chan struct{}),
		Handler: slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelError})}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func (d *deliveries) Enabled(context.Context, slog.Level) bool { return true }
func (d *deliveries) WithAttrs([]slog.Attr) slog.Handler       { return d }
func (d *deliveries) WithGroup(string) slog.Handler            { return d }

func (d *deliveries) Handle(ctx context.Context, r slog.Record) error {
	m := deliveredLine.FindStringSubmatch(r.Message)
	if m == nil {
		return d.Handler.Handle(ctx, r)
	}
	off, _ := strconv.ParseUint(m[1], 10, 64)
	p, _ := strconv.ParseUint(m[2], 10, 64)
	d.mu.Lock()
	d.seen[[2]uint64{p, off}]++
	d.mu.Unlock()
	d.poke()
	return nil
}

// poke wakes whoever waits for a change.
func (d *deliveries) poke() {
	d.mu.Lock()
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

// upTo reports whether every offset of partition p up to last was delivered.
func (d *deliveries) upTo(p uint32, last uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for o := uint64(0); o <= last; o++ {
		if d.seen[[2]uint64{uint64(p), o}] == 0 {
			return false
		}
	}
	return true
}

// lastSeen is the highest offset of partition p delivered, and whether any was.
func (d *deliveries) lastSeen(p uint32) (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var last uint64
	found := false
	for k := range d.seen {
		if k[0] == uint64(p) && (!found || k[1] > last) {
			last, found = k[1], true
		}
	}
	return last, found
}

// twice counts the messages delivered more than once.
func (d *deliveries) twice() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.seen {
		if c > 1 {
			n++
		}
	}
	return n
}

// await waits until cond holds, re-checking at every delivery or poke, for at most limit.
func (d *deliveries) await(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		changed := d.changed
		d.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// appendNumbered appends n messages {"p":P,"i":I} to partition p.
func appendNumbered(t testing.TB, b *memclient.Broker, p uint32, n int) {
	t.Helper()
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i)
	}
	if _, err := b.Append("s", "t", p, payloads...); err != nil {
		t.Fatal(err)
	}
}

// startSink runs r's sink on client, once it runs, until the returned stop is called; stop
// waits for it to end and returns its error.
func startSink(t testing.TB, r *Runner, client *memclient.Client) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.runSink(ctx, client) }()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("the sink did not stop within 15s")
			return nil
		}
	}
	deadline := time.After(10 * time.Second)
	for {
		st, _, next := r.status.watch()
		if st == StatusRunning || st == StatusPaused {
			return stop
		}
		select {
		case <-next:
		case err := <-done:
			t.Fatalf("the sink ended before it ran: %v", err)
		case <-deadline:
			t.Fatalf("the sink is %s after 10s", st)
		}
	}
}

// The sink loop over the in-memory client: every message of three partitions reaches the plugin
// exactly once, batches of a backlog are fetched ahead by polls that name their partition, and
// the group's offsets end at each partition's last message.
func TestSinkLoopOverMemclient(t *testing.T) {
	b := memclient.NewBroker()
	b.CreateTopic("s", "t", 3)
	for p := range uint32(3) {
		appendNumbered(t, b, p, 50)
	}
	var named sync.Map
	rec := newDeliveries()
	b.OnRequest = func(r memclient.Request) error {
		if r.Kind == memclient.KindPoll && r.At {
			named.Store(r.Partition, true)
		}
		return nil
	}
	b.OnServed = func(memclient.Request) { rec.poke() }
	r := memRunner(t, memSinkTOML(t, "batch_length = 7\npoll_interval = \"0\""), slog.New(rec))
	stop := startSink(t, r, b.Dial())
	rec.await(t, 10*time.Second, "every message delivered and stored", func() bool {
		for p := range uint32(3) {
			if off, ok := b.Stored("s", "t", "g", p); !ok || off != 49 || !rec.upTo(p, 49) {
				return false
			}
		}
		return true
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := rec.twice(); n != 0 {
		t.Errorf("%d messages delivered twice without a failure", n)
	}
	for p := range uint32(3) {
		if _, ok := named.Load(p); !ok {
			t.Errorf("no poll named partition %d: the backlog was not fetched ahead", p)
		}
	}
}

// The source loop over the in-memory client: the fault source's numbered messages all reach the
// topic, in order, and its state is saved after each batch.
func TestSourceLoopOverMemclient(t *testing.T) {
	b := memclient.NewBroker()
	toml := fmt.Sprintf(`type = "source"
key = "gen"
enabled = true
version = 1
name = "source over memclient"
path = %q

[[streams]]
stream = "s"
topic = "t"
schema = "json"

[plugin_config]
messages_per_batch = 7
max_messages = 100
interval_ms = 0
`, testkit.PluginPath(t, "fault"))
	rec := newDeliveries()
	sent := make(chan struct{}, 1)
	b.OnServed = func(r memclient.Request) {
		if r.Kind == memclient.KindSend {
			select {
			case sent <- struct{}{}:
			default:
			}
		}
	}
	r := memRunner(t, toml, slog.New(rec))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.runSource(ctx, b.Dial()) }()
	deadline := time.After(10 * time.Second)
	for {
		msgs, _ := b.Messages("s", "t", 0)
		if len(msgs) >= 100 {
			break
		}
		select {
		case <-sent:
		case <-deadline:
			t.Fatalf("the topic holds %d of 100 messages", len(msgs))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs, _ := b.Messages("s", "t", 0)
	for i, m := range msgs[:100] {
		if want := fmt.Sprintf(`{"seq":%d}`, i); string(m.Payload) != want {
			t.Fatalf("message %d is %s, want %s", i, m.Payload, want)
		}
	}
}
