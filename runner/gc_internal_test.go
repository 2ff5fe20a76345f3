package runner

import (
	"runtime/debug"
	"testing"
)

// The GC percent is raised while any pump is busy and restored when the last one goes idle; an
// operator's GOGC leaves it alone.
func TestGCTunerRaisesThePercentOnlyWhileBusy(t *testing.T) {
	t.Setenv("GOGC", "200") // read by the Go runtime at start only; the tuner built now is off
	if g := newGCTuner(); !g.off {
		t.Fatal("a tuner with GOGC set retunes the GC")
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	g := &gcTuner{}
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	var a, b bool
	g.setBusy(&a, true)
	g.setBusy(&b, true)
	if p := percent(); p != busyGCPercent {
		t.Fatalf("busy: GC percent %d, want %d", p, busyGCPercent)
	}
	g.setBusy(&a, false)
	if p := percent(); p != busyGCPercent {
		t.Fatalf("one pump still busy: GC percent %d, want %d", p, busyGCPercent)
	}
	g.setBusy(&b, false)
	g.setBusy(&b, false) // no change: not counted twice
	if p := percent(); p != 100 {
		t.Fatalf("all idle: GC percent %d, want 100", p)
	}
	if g.busy != 0 {
		t.Fatalf("busy count %d after all went idle", g.busy)
	}
}
