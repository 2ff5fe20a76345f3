package runner

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/memclient"
)

// errInjected is the fault the property test injects: a request lost on the way, as a broken
// connection loses it.
var errInjected = fmt.Errorf("injected: %w", iggyclient.ErrTimeout)

// FuzzSinkFeedAtLeastOnce drives the real sink loop (feed, plugin, stores) over the in-memory
// client through a random script while it runs: messages appended to random partitions, pauses
// and resumes, polls and stores lost on the way, a second member joining and leaving the group
// (a rebalance, moving partitions away and back), partitions added. Whatever the interleaving,
// no offset is ever stored before every message up to it reached the plugin (checked at the
// moment each store is made), a settled pause has stored what was delivered, and in the end
// every message is delivered and every partition's offset stored.
func FuzzSinkFeedAtLeastOnce(f *testing.F) {
	for _, seed := range []string{
		"\x00\x00\x08\x10\x18",                             // one partition, batches of 1
		"\x02\x04\x00\x21\x42\x03\x04\x00\x01\x02",         // three partitions, pause and resume
		"\x01\x03\x00\x00\x05\x06\x05\x00\x06\x01\x02",     // lost polls and stores
		"\x02\x02\x00\x01\x02\x07\x00\x01\x07\x02\x00",     // a member joins and leaves
		"\x00\x01\x00\x0f\x07\x87\x00\x01\x02\x03\x04",     // partitions added while running
		"\x02\x04\x3f\x3f\x03\x05\x06\x07\x04\x3f\x87\x07", // everything
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) < 2 || len(script) > 64 {
			return
		}
		runFeedScript(t, script)
	})
}

// feedHarness is one script's world: the broker, the runner's recorded deliveries, the faults
// to inject and the invariant violations seen.
type feedHarness struct {
	b          *memclient.Broker
	rec        *deliveries
	runner     uint32 // the runner's client id
	failPoll   atomic.Bool
	failStore  atomic.Bool
	lostStores atomic.Int32 // store faults that fired: such a store leaves its offset unstored
	mu         sync.Mutex
	violations []string
	counts     []int // messages appended per partition
}

func (h *feedHarness) violate(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.violations) < 5 {
		h.violations = append(h.violations, fmt.Sprintf(format, args...))
	}
}

// onRequest injects the faults asked for and checks, as a store of the runner is made, that
// every message up to the stored offset has reached the plugin.
func (h *feedHarness) onRequest(r memclient.Request) error {
	if r.Client != h.runner {
		return nil
	}
	switch r.Kind {
	case memclient.KindPoll:
		if h.failPoll.CompareAndSwap(true, false) {
			return errInjected
		}
	case memclient.KindStore:
		if h.failStore.CompareAndSwap(true, false) {
			h.lostStores.Add(1)
			return errInjected
		}
		if !h.rec.upTo(r.Partition, r.Offset) {
			h.violate("offset %d of partition %d stored before every message up to it reached the plugin", r.Offset, r.Partition)
		}
	}
	return nil
}

func runFeedScript(t *testing.T, script []byte) {
	partitions := uint32(1 + script[0]%3)
	batch := 1 + script[1]%5
	h := &feedHarness{b: memclient.NewBroker(), rec: newDeliveries(), counts: make([]int, partitions)}
	h.b.CreateTopic("s", "t", partitions)
	h.b.OnRequest = h.onRequest
	h.b.OnServed = func(memclient.Request) { h.rec.poke() }
	client := h.b.Dial()
	h.runner = client.ID()
	r := memRunner(t, memSinkTOML(t, fmt.Sprintf("batch_length = %d\npoll_interval = \"0\"", batch)), slog.New(h.rec),
		"IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=5s")
	stop := startSink(t, r, client)
	var other *memclient.Client // the second member, while it is in the group
	paused := false
	for _, step := range script[2:] {
		switch step % 8 {
		case 0, 1, 2: // append 1..8 messages to a partition
			p := uint32(step>>5) % uint32(len(h.counts))
			n := int(step>>3)%8 + 1
			if _, err := h.b.Append("s", "t", p, numbered(p, h.counts[p], n)...); err != nil {
				t.Fatal(err)
			}
			h.counts[p] += n
		case 3:
			if !paused {
				h.pause(t, r, other == nil)
				paused = true
			}
		case 4:
			if paused {
				r.pause.resume()
				paused = false
			}
		case 5:
			h.failPoll.Store(true)
		case 6:
			h.failStore.Store(true)
		case 7:
			switch {
			case step&0x80 != 0 && len(h.counts) < 5:
				if err := h.b.AddPartitions("s", "t", 1); err != nil {
					t.Fatal(err)
				}
				h.counts = append(h.counts, 0)
			case other == nil:
				other = h.b.Dial()
				if err := other.EnsureConsumerGroup(t.Context(), "s", "t", "g"); err != nil {
					t.Fatal(err)
				}
			default:
				other.Close()
				other = nil
			}
		}
	}
	if paused {
		r.pause.resume()
	}
	if other != nil {
		other.Close()
	}
	h.rec.await(t, 20*time.Second, "every message delivered and every offset stored", func() bool {
		for p, n := range h.counts {
			if n == 0 {
				continue
			}
			last := uint64(n - 1)
			if off, ok := h.b.Stored("s", "t", "g", uint32(p)); !ok || off != last || !h.rec.upTo(uint32(p), last) {
				return false
			}
		}
		return true
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.violations {
		t.Error(v)
	}
}

// pause pauses the runner and waits for it to settle; when the runner owns every partition and
// no store was lost, what it delivered is stored by then.
func (h *feedHarness) pause(t *testing.T, r *Runner, ownsAll bool) {
	t.Helper()
	settled, ok := r.pause.pause()
	if !ok {
		t.Fatal("pause refused")
	}
	select {
	case <-settled:
	case <-time.After(10 * time.Second):
		t.Fatal("the pause did not settle")
	}
	if !ownsAll || h.lostStores.Load() != 0 {
		return
	}
	for p := range h.counts {
		last, delivered := h.rec.lastSeen(uint32(p))
		if !delivered {
			continue
		}
		if off, ok := h.b.Stored("s", "t", "g", uint32(p)); !ok || off < last {
			h.violate("paused with offset %d of partition %d delivered, stored %d (%v)", last, p, off, ok)
		}
	}
}

// numbered makes n payloads {"p":P,"i":I} from I = from.
func numbered(p uint32, from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, from+i)
	}
	return out
}
