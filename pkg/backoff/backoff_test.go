package backoff_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
)

const ms = time.Millisecond

func take(b *backoff.Backoff, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = b.Next()
	}
	return out
}

// Without jitter the sequence is exact: Min, growing by Multiplier, capped at Max.
func TestSequenceWithoutJitter(t *testing.T) {
	tests := []struct {
		name   string
		policy backoff.Policy
		want   []time.Duration
	}{
		{"doubling by default", backoff.Policy{Min: 100 * ms, Max: 1000 * ms},
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1000 * ms, 1000 * ms}},
		{"multiplier 1.5", backoff.Policy{Min: 100 * ms, Max: 300 * ms, Multiplier: 1.5},
			[]time.Duration{100 * ms, 150 * ms, 225 * ms, 300 * ms, 300 * ms}},
		{"multiplier below 1 is constant", backoff.Policy{Min: 100 * ms, Max: time.Second, Multiplier: 0.5},
			[]time.Duration{100 * ms, 100 * ms, 100 * ms}},
		{"max below min caps all but the first", backoff.Policy{Min: 500 * ms, Max: 100 * ms},
			[]time.Duration{500 * ms, 100 * ms, 100 * ms}},
		{"zero min never waits", backoff.Policy{Max: time.Second},
			[]time.Duration{0, 0, 0}},
		{"negative jitter is none", backoff.Policy{Min: 10 * ms, Max: 40 * ms, Jitter: -1},
			[]time.Duration{10 * ms, 20 * ms, 40 * ms, 40 * ms}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := take(backoff.New(tc.policy), len(tc.want)); !slices.Equal(got, tc.want) {
				t.Fatalf("delays %v, want %v", got, tc.want)
			}
		})
	}
}

// Reset starts over at Min, wherever the sequence was.
func TestReset(t *testing.T) {
	b := backoff.New(backoff.Policy{Min: 100 * ms, Max: time.Second})
	take(b, 5)
	b.Reset()
	if got, want := take(b, 3), []time.Duration{100 * ms, 200 * ms, 400 * ms}; !slices.Equal(got, want) {
		t.Fatalf("after Reset: delays %v, want %v", got, want)
	}
}

// With jitter every delay lies within ±Jitter of the exact one, and the delays at the cap are
// spread on both sides of Max, so processes that failed together do not retry together.
func TestJitterBounds(t *testing.T) {
	const jitter = backoff.DefaultJitter
	exact := take(backoff.New(backoff.Policy{Min: 100 * ms, Max: time.Second}), 8)
	var below, above int
	for range 500 {
		got := take(backoff.New(backoff.Policy{Min: 100 * ms, Max: time.Second, Jitter: jitter}), len(exact))
		for i, d := range got {
			low := time.Duration(float64(exact[i]) * (1 - jitter))
			high := time.Duration(float64(exact[i])*(1+jitter)) + 1
			if d < low || d > high {
				t.Fatalf("delay %d = %v, outside [%v, %v]", i, d, low, high)
			}
		}
		last := got[len(got)-1]
		if last < time.Second {
			below++
		} else if last > time.Second {
			above++
		}
	}
	if below == 0 || above == 0 {
		t.Fatalf("delays at the cap not spread around it: %d below, %d above", below, above)
	}
}

// Jitter above 1 is clamped to 1: a delay never goes negative.
func TestJitterClamped(t *testing.T) {
	b := backoff.New(backoff.Policy{Min: 100 * ms, Max: 100 * ms, Jitter: 5})
	for range 1000 {
		if d := b.Next(); d < 0 || d > 200*ms+1 {
			t.Fatalf("delay %v outside [0, 200ms]", d)
		}
	}
}

// Wait and Sleep end with the context's cause when it ends first, and return nil once the delay
// has passed.
func TestWaitHonoursContext(t *testing.T) {
	cause := errors.New("shutting down")
	ended, cancel := context.WithCancelCause(context.Background())
	cancel(cause)

	long := backoff.New(backoff.Policy{Min: time.Hour, Max: time.Hour})
	if err := long.Wait(ended); !errors.Is(err, cause) {
		t.Fatalf("Wait on an ended context: %v, want %v", err, cause)
	}
	if err := backoff.Sleep(ended, 0); !errors.Is(err, cause) {
		t.Fatalf("Sleep(0) on an ended context: %v, want %v", err, cause)
	}
	if err := backoff.Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0): %v", err)
	}
	short := backoff.New(backoff.Policy{Min: time.Microsecond, Max: time.Microsecond})
	if err := short.Wait(context.Background()); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

// A context that ends during the wait ends it.
func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- backoff.Sleep(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep: %v, want %v", err, context.Canceled)
	}
}
