package runner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// fakeClock advances only when a wait sleeps, by exactly what it asked for, and records each
// sleep; a sleep may be woken early by its wake channel when a test says so.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	// onSleep, when set, runs instead of advancing: it may change the limits and return how
	// long the sleep lasted.
	onSleep func(d time.Duration) time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	hook := c.onSleep
	c.mu.Unlock()
	slept := d
	if hook != nil {
		slept = hook(d)
	}
	c.mu.Lock()
	c.now = c.now.Add(slept)
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

func ratePtr(v float64) *float64 { return &v }

func newTestLimiter(t *testing.T, limit *config.RateLimit) (*rateLimiter, *fakeClock, *metrics.Connector) {
	t.Helper()
	c := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	m := metrics.NewConnector(nil, "rl", metrics.KindSink)
	return newRateLimiter(limit, m, nil, c), c, m
}

// The buckets start empty and refill at the rate: batches wait exactly what their size needs,
// a batch larger than a second's worth included, and the time waited is counted.
func TestRateLimiterWaitsWhatEachBatchNeeds(t *testing.T) {
	l, clock, m := newTestLimiter(t, &config.RateLimit{MessagesPerSecond: ratePtr(100)})
	ctx := context.Background()
	for _, n := range []int{50, 50, 250, 0, 1} {
		if err := l.wait(ctx, n, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 2500 * time.Millisecond, 10 * time.Millisecond}
	if len(clock.sleeps) != len(want) {
		t.Fatalf("sleeps %v, want %v", clock.sleeps, want)
	}
	for i := range want {
		if clock.sleeps[i] != want[i] {
			t.Fatalf("sleeps %v, want %v", clock.sleeps, want)
		}
	}
	if got := m.Throttled(); got != 3510*time.Millisecond {
		t.Fatalf("throttled %v, want 3.51s", got)
	}
	// 351 messages over 3.51 s: the limit exactly.
	if got := l.pollCount(1000); got != 100 {
		t.Fatalf("poll count %d, want one second's worth (100)", got)
	}
	if got := l.pollCount(20); got != 20 {
		t.Fatalf("poll count %d, want batch_length (20) below the cap", got)
	}
}

// With both limits the slower one decides; bytes are taken in bucket-sized parts.
func TestRateLimiterMessagesAndBytes(t *testing.T) {
	l, clock, _ := newTestLimiter(t, &config.RateLimit{MessagesPerSecond: ratePtr(1000), BytesPerSecond: ratePtr(1024)})
	if err := l.wait(context.Background(), 10, 4096); err != nil {
		t.Fatal(err)
	}
	if len(clock.sleeps) != 1 || clock.sleeps[0] != 4*time.Second {
		t.Fatalf("sleeps %v, want [4s] (4 KiB at 1 KiB/s)", clock.sleeps)
	}
}

// A change while a batch waits: the batch is measured again against the new limits at once (its
// reservation on the old buckets given back), and no limit lets it go.
func TestRateLimiterChangeWhileWaiting(t *testing.T) {
	l, clock, _ := newTestLimiter(t, &config.RateLimit{MessagesPerSecond: ratePtr(1)})
	first := true
	clock.onSleep = func(d time.Duration) time.Duration {
		if first {
			first = false
			l.set(&config.RateLimit{MessagesPerSecond: ratePtr(10)}, false) // wakes the wait at once
			return 0
		}
		return d
	}
	if err := l.wait(context.Background(), 10, 0); err != nil {
		t.Fatal(err)
	}
	if len(clock.sleeps) != 2 || clock.sleeps[0] != 10*time.Second || clock.sleeps[1] != time.Second {
		t.Fatalf("sleeps %v, want [10s 1s]: 10 messages at 1/s, then again at 10/s", clock.sleeps)
	}
	l.set(&config.RateLimit{}, false) // no limit
	clock.sleeps = nil
	if err := l.wait(context.Background(), 1_000_000, 1<<30); err != nil || len(clock.sleeps) != 0 {
		t.Fatalf("without a limit: sleeps %v, %v", clock.sleeps, err)
	}
	if l.pollCount(1000) != 1000 {
		t.Fatal("poll count capped without a limit")
	}
	if got := l.set(nil, true); got == nil || *got.MessagesPerSecond != 1 {
		t.Fatalf("reset put %+v in force, want the configured 1/s", got)
	}
}

// A wait that its context ends gives its tokens back and reports the context's error.
func TestRateLimiterWaitEndsWithContext(t *testing.T) {
	l, clock, _ := newTestLimiter(t, &config.RateLimit{MessagesPerSecond: ratePtr(10)})
	ctx, cancel := context.WithCancel(context.Background())
	clock.onSleep = func(d time.Duration) time.Duration { cancel(); return 0 }
	if err := l.wait(ctx, 10, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", err)
	}
	// The cancelled batch's tokens came back: the next one waits only for its own.
	clock.onSleep = nil
	clock.sleeps = nil
	if err := l.wait(context.Background(), 10, 0); err != nil {
		t.Fatal(err)
	}
	if len(clock.sleeps) != 1 || clock.sleeps[0] != time.Second {
		t.Fatalf("sleeps %v, want [1s]", clock.sleeps)
	}
}
