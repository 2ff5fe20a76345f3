package runner

import (
	"os"
	"runtime/debug"
	"sync"
)

// busyGCPercent is the GC percent while messages flow. Measured with make bench-e2e (sink into
// the null sink, 1,000 x 100 B batches): CPU per message against the default 100 is about -25%
// at 200, -30% at 400 and -40% at 800, for a peak RSS of +4, +12 and +25 MiB. Most of what is
// still allocated per batch is the Go SDK's poll reply, which the runner cannot reuse.
const busyGCPercent = 400

// gcTuner raises the GC percent to busyGCPercent while at least one pump is busy and puts it back
// when all are idle, so an idle runner keeps the default's small heap (its RSS and PSS count at
// 50 connectors). An operator's GOGC turns it off: that setting then holds throughout.
type gcTuner struct {
	mu      sync.Mutex
	off     bool
	busy    int // pumps currently busy
	idlePct int // the percent to return to
}

func newGCTuner() *gcTuner {
	return &gcTuner{off: os.Getenv("GOGC") != ""}
}

// setBusy records one pump's state change (*was -> now) and retunes on the first busy and the
// last idle pump.
func (g *gcTuner) setBusy(was *bool, now bool) {
	if g.off || *was == now {
		return
	}
	*was = now
	g.mu.Lock()
	defer g.mu.Unlock()
	if now {
		g.busy++
		if g.busy == 1 {
			g.idlePct = debug.SetGCPercent(busyGCPercent)
		}
		return
	}
	g.busy--
	if g.busy == 0 {
		debug.SetGCPercent(g.idlePct)
	}
}
