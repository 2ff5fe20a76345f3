package tap

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Hub defaults.
const (
	DefaultMaxSubscribers = 4 // taps open at once on one runner; one more is refused (ErrTooMany)
	// A subscriber's buffer holds a second of its rate, at least MinBuffer and at most MaxBuffer
	// samples; a sample that does not fit is dropped and counted. The rate's burst is the buffer,
	// so a client that keeps up never loses one.
	MinBuffer = 64
	MaxBuffer = 1024
	// MaxBufferBytes bounds the payload and header bytes waiting for one subscriber: once as much
	// waits, more is dropped (one message of any size always fits an empty buffer).
	MaxBufferBytes = 16 << 20
)

// Sentinel errors of Subscribe.
var (
	ErrTooMany = errors.New("too many taps open")
	ErrClosed  = errors.New("the connector is shutting down")
)

// HubOptions configures NewHub; zero values take the defaults.
type HubOptions struct {
	MaxSubscribers int
	Buffer         int              // a fixed buffer size instead of the rate's second (tests)
	Now            func() time.Time // the clock of the rate (tests); time.Now when nil
	// OnDrop counts samples dropped because a subscriber's buffer was full (the runner adds them
	// to /stats tap_dropped). Called from the pipeline's goroutine; it must not block.
	OnDrop func(n uint64)
}

// Hub fans out the messages a connector's pipeline offers to the taps open on it. The pipeline
// never waits for a tap: each subscriber has a small buffer, and a sample that does not fit is
// dropped and counted. With no subscriber (or none tapping a point) Tapped is one atomic load,
// and the pipeline builds nothing.
type Hub struct {
	tapped atomic.Uint32                 // union of the subscribers' masks
	subs   atomic.Pointer[[]*Subscriber] // copy on write; nil or empty without subscribers

	mu     sync.Mutex // serialises Subscribe, unsubscribe and Close
	closed bool
	done   chan struct{} // closed by Close

	max    int
	buffer int
	onDrop func(uint64)
	now    func() time.Time
}

// NewHub returns a hub with no subscribers.
func NewHub(o HubOptions) *Hub {
	h := &Hub{max: o.MaxSubscribers, buffer: o.Buffer, onDrop: o.OnDrop, now: o.Now, done: make(chan struct{})}
	if h.max <= 0 {
		h.max = DefaultMaxSubscribers
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.onDrop == nil {
		h.onDrop = func(uint64) {}
	}
	return h
}

// Tapped reports whether some subscriber taps a point of m: one atomic load, for the pipeline to
// ask once per batch before it builds any sample.
func (h *Hub) Tapped(m Mask) bool { return Mask(h.tapped.Load())&m != 0 }

// Mask is the union of the points tapped now: one atomic load, for a pipeline stage that checks
// several points of one batch.
func (h *Hub) Mask() Mask { return Mask(h.tapped.Load()) }

// Admit reports whether Subscribe would open a tap now: nil, ErrTooMany or ErrClosed, as Subscribe
// fails. It opens nothing (a HEAD request on the tap route asks it).
func (h *Hub) Admit() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.admit()
}

// admit is Admit with h.mu held.
func (h *Hub) admit() error {
	if h.closed {
		return ErrClosed
	}
	if p := h.subs.Load(); p != nil && len(*p) >= h.max {
		return fmt.Errorf("%w: at most %d taps at once on one connector runner", ErrTooMany, h.max)
	}
	return nil
}

// Subscribe opens a tap for q. It fails with ErrTooMany when the hub has its maximum of
// subscribers, and with ErrClosed once the hub is closed. Close the subscriber when done.
func (h *Hub) Subscribe(q Query) (*Subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.admit(); err != nil {
		return nil, err
	}
	var cur []*Subscriber
	if p := h.subs.Load(); p != nil {
		cur = *p
	}
	rate := max(q.Rate, 1)
	size := h.buffer
	if size <= 0 {
		size = min(max(rate, MinBuffer), MaxBuffer)
	}
	burst := float64(min(rate, size))
	s := &Subscriber{hub: h, mask: q.Mask(), ch: make(chan *Sample, size), rate: float64(rate), burst: burst, tokens: burst,
		last: h.now(), remaining: -1, everything: rate >= MaxRate}
	if q.Partition != nil {
		p := *q.Partition
		s.partition = &p
	}
	if q.Limit > 0 {
		s.remaining = q.Limit
	}
	next := append(slices.Clone(cur), s)
	h.publish(next)
	return s, nil
}

// publish installs a new subscriber list and its mask union; h.mu is held.
func (h *Hub) publish(subs []*Subscriber) {
	var m Mask
	for _, s := range subs {
		m |= s.mask
	}
	h.subs.Store(&subs)
	h.tapped.Store(uint32(m))
}

func (h *Hub) unsubscribe(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.subs.Load()
	if p == nil {
		return
	}
	if i := slices.Index(*p, s); i >= 0 {
		h.publish(slices.Delete(slices.Clone(*p), i, i+1))
	}
}

// Close ends every tap (their streams end with reason "shutdown") and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	h.publish(nil)
	close(h.done)
}

// Open is the number of taps open now.
func (h *Hub) Open() int {
	if p := h.subs.Load(); p != nil {
		return len(*p)
	}
	return 0
}

// Offer hands n messages seen at point m to the subscribers tapping it. partition is the batch's
// partition (sink points; a source passes 0, and its taps filter on no partition). build makes the
// sample of message i, copying what it needs (the pipeline reuses its buffers); it is called at
// most once per message and only for messages some subscriber takes: a subscriber takes at most
// what its rate allows (spread evenly over the batch when that is fewer than n) and its limit
// leaves. Offer never blocks: a sample that does not fit a subscriber's buffer is dropped and
// counted.
func (h *Hub) Offer(m Mask, partition uint32, n int, build func(i int) *Sample) {
	p := h.subs.Load()
	if p == nil || n <= 0 {
		return
	}
	now := h.now()
	var built []*Sample
	for _, s := range *p {
		if s.mask&m == 0 || (s.partition != nil && *s.partition != partition) {
			continue
		}
		k, spread := s.take(now, n)
		if k == 0 {
			continue
		}
		dropped := 0
		free := cap(s.ch) - len(s.ch) // a stalled client's full buffer costs no copy
		if free > 0 && built == nil {
			built = make([]*Sample, n)
		}
		for j := range k {
			if j >= free {
				dropped += k - j
				break
			}
			if s.bytes.Load() >= MaxBufferBytes {
				dropped += k - j
				break
			}
			i := j * n / spread
			if built[i] == nil {
				built[i] = build(i)
			}
			select {
			case s.ch <- built[i]:
				s.bytes.Add(built[i].bytes())
			default:
				dropped++
			}
		}
		if dropped > 0 {
			s.lost(dropped)
			h.onDrop(uint64(dropped))
		}
	}
}

// Subscriber is one open tap: the samples for it wait in a bounded buffer until Serve (or a
// caller of Samples) writes them out.
type Subscriber struct {
	hub       *Hub
	mask      Mask
	partition *uint32
	ch        chan *Sample
	bytes     atomic.Int64  // payload and header bytes in ch (Release takes them off)
	dropped   atomic.Uint64 // dropped since the last TakeDropped
	closeOnce sync.Once

	mu     sync.Mutex // the rate's token bucket and the limit left
	rate   float64    // tokens a second
	burst  float64
	tokens float64
	// everything: the rate is MaxRate, which takes every message (no token bucket): what does
	// not fit the buffer of a client that falls behind is dropped and counted, never skipped
	// unseen.
	everything bool
	last       time.Time
	remaining  int // samples the limit leaves to hand over; -1: no limit
}

// take reserves samples of a batch of n from the token bucket and the limit: the rate allows
// spread of them, evenly spaced over the batch, and the limit leaves the first k of those.
func (s *Subscriber) take(now time.Time, n int) (k, spread int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remaining == 0 {
		return 0, 0
	}
	if s.everything {
		s.tokens = float64(n)
	} else if elapsed := now.Sub(s.last).Seconds(); elapsed > 0 {
		s.tokens = min(s.burst, s.tokens+elapsed*s.rate)
	}
	s.last = now
	spread = min(n, int(s.tokens))
	k = spread
	if s.remaining > 0 {
		k = min(k, s.remaining)
		s.remaining -= k
	}
	s.tokens -= float64(k)
	return k, spread
}

// lost counts dropped samples; the limit gets them back, since they never reached the client.
func (s *Subscriber) lost(n int) {
	s.dropped.Add(uint64(n))
	s.mu.Lock()
	if s.remaining >= 0 {
		s.remaining += n
	}
	s.mu.Unlock()
}

// Samples delivers the samples taken for this subscriber, in the order offered per point. Call
// Release with each one once it is written out.
func (s *Subscriber) Samples() <-chan *Sample { return s.ch }

// Release frees a sample's room in the subscriber's buffer budget (MaxBufferBytes).
func (s *Subscriber) Release(smp *Sample) { s.bytes.Add(-smp.bytes()) }

// Done is closed when the hub closes (the connector is shutting down).
func (s *Subscriber) Done() <-chan struct{} { return s.hub.done }

// TakeDropped returns the samples dropped since the last call and starts counting again.
func (s *Subscriber) TakeDropped() uint64 { return s.dropped.Swap(0) }

// Close leaves the hub; nothing more is offered to the subscriber.
func (s *Subscriber) Close() { s.closeOnce.Do(func() { s.hub.unsubscribe(s) }) }
