package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The gate: a pause settles once every member parked, not before; resume releases them, and a
// resume while a pause still settles answers that pause's waiter; setUp tells whether a resume
// has to mark the pump running.
func TestPauseGate(t *testing.T) {
	var parked atomic.Int32
	var resumed []bool // resume runs on the test's goroutine
	g := newPauseGate(false, func() { parked.Add(1) }, func(setUp bool) { resumed = append(resumed, setUp) })
	g.join(2)
	ctx := context.Background()
	if !g.await(ctx) {
		t.Fatal("await without a pause must pass")
	}
	settled, ok := g.pause()
	if !ok {
		t.Fatal("first pause refused")
	}
	if _, again := g.pause(); again {
		t.Error("second pause accepted")
	}
	released := make(chan bool, 2)
	go func() { released <- g.await(ctx) }()
	testkit.Eventually(t, 10*time.Second, "the first member parked", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.parked == 1
	})
	select {
	case <-settled:
		t.Fatal("settled with one of two members parked")
	default:
	}
	go func() { released <- g.await(ctx) }()
	select {
	case <-settled:
	case <-time.After(2 * time.Second):
		t.Fatal("not settled with both members parked")
	}
	if n := parked.Load(); n != 1 {
		t.Errorf("onParked ran %d times, want 1", n)
	}
	if !g.resume() || g.resume() {
		t.Error("resume: want true once, then false")
	}
	for range 2 {
		if !<-released {
			t.Error("a parked member was released as stopping")
		}
	}

	// A resume before the members parked still answers the pause's waiter.
	settled, _ = g.pause()
	g.resume()
	select {
	case <-settled:
	default:
		t.Error("a resume left the settling pause's waiter hanging")
	}

	// A parked member of a stopping runner is released with false.
	g.pause()
	stopped, cancel := context.WithCancel(ctx)
	go func() { released <- g.await(stopped) }()
	cancel()
	if <-released {
		t.Error("await returned true after its context ended")
	}

	started := newPauseGate(true, func() {}, func(setUp bool) { resumed = append(resumed, setUp) })
	if !started.setUp() {
		t.Error("a gate started paused does not say so at setUp")
	}
	started.resume()
	if len(resumed) != 3 || resumed[0] || !resumed[2] {
		t.Errorf("onResumed saw setUp %v, want false for the unset gate and true after setUp", resumed)
	}
}
