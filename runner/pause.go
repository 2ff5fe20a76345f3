package runner

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
)

// pauseGate is the operator's pause (POST /pause and POST /resume on the endpoint, or
// IGGY_CONNECTOR_START_PAUSED; DESIGN decision 13). The loops that move data, its members (one
// consumer per sink topic, the source's plugin session), wait at it between batches, never inside
// one. The connector shows paused once every member is parked: the batch that was in flight has
// settled (a sink stored its offset, a source saved its state and closed its plugin).
type pauseGate struct {
	mu      sync.Mutex
	paused  bool
	members int
	parked  int
	pausing chan struct{} // closed while a pause is requested; a new one at resume
	resumed chan struct{} // closed at resume; a new one at pause
	settled chan struct{} // closed once every member parked after the pause
	done    bool          // settled is closed
	set     bool          // the pump is set up (setUp): a resume may mark it running

	onParked  func() // every member is parked
	onResumed func(setUp bool)
}

func newPauseGate(paused bool, onParked func(), onResumed func(setUp bool)) *pauseGate {
	g := &pauseGate{pausing: make(chan struct{}), resumed: make(chan struct{}), settled: make(chan struct{}),
		onParked: onParked, onResumed: onResumed}
	if paused {
		g.paused = true
		close(g.pausing)
	}
	return g
}

// join adds n members; each calls leave when its loop ends.
func (g *pauseGate) join(n int) {
	g.mu.Lock()
	g.members += n
	g.mu.Unlock()
}

func (g *pauseGate) leave() {
	g.mu.Lock()
	g.members--
	parked := g.settle()
	g.mu.Unlock()
	if parked {
		g.onParked()
	}
}

// requested is closed while a pause is requested: a member that waits on something long (the
// source's session) selects on it.
func (g *pauseGate) requested() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pausing
}

// isPaused reports whether a pause is requested.
func (g *pauseGate) isPaused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused
}

// setUp records that the pump is ready to run and reports whether it starts paused: then a
// later resume, not the pump, marks it running.
func (g *pauseGate) setUp() (paused bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set = true
	return g.paused
}

// await returns at once while no pause is requested; else the member parks until resume. It
// returns false when ctx ended (the runner stops).
func (g *pauseGate) await(ctx context.Context) bool { return g.awaitSettling(ctx, nil) }

// awaitSettling is await for a member that has something to settle before it parks (a sink's
// offset not stored yet): settle, when not nil, runs before the member counts as parked.
func (g *pauseGate) awaitSettling(ctx context.Context, settle func()) bool {
	g.mu.Lock()
	if !g.paused {
		g.mu.Unlock()
		return ctx.Err() == nil
	}
	if settle != nil {
		g.mu.Unlock()
		settle()
		g.mu.Lock()
		if !g.paused { // resumed meanwhile
			g.mu.Unlock()
			return ctx.Err() == nil
		}
	}
	resumed := g.resumed
	g.parked++
	parked := g.settle()
	g.mu.Unlock()
	if parked {
		g.onParked()
	}
	select {
	case <-resumed:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.parked--
	g.mu.Unlock()
	return ctx.Err() == nil
}

// settle closes settled once every member parked; true when it did now. Called with mu held.
func (g *pauseGate) settle() bool {
	if !g.paused || g.done || g.members <= 0 || g.parked < g.members {
		return false
	}
	g.done = true
	close(g.settled)
	return true
}

// pause requests a pause; false when one is requested already. settled is closed once every
// member parked.
func (g *pauseGate) pause() (settled <-chan struct{}, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return nil, false
	}
	g.paused, g.done = true, false
	close(g.pausing)
	g.resumed, g.settled = make(chan struct{}), make(chan struct{})
	return g.settled, true
}

// resume ends the pause; false when none is requested.
func (g *pauseGate) resume() bool {
	g.mu.Lock()
	if !g.paused {
		g.mu.Unlock()
		return false
	}
	g.paused = false
	close(g.resumed)
	if !g.done { // a pause still settling: its POST /pause answers now
		g.done = true
		close(g.settled)
	}
	g.pausing = make(chan struct{})
	setUp := g.set
	g.mu.Unlock()
	g.onResumed(setUp)
	return true
}

// newRunnerPauseGate is the runner's gate: paused is published once every member parked, running
// at resume.
func (r *Runner) newPauseGate() *pauseGate {
	return newPauseGate(r.settings.Env.StartPaused, func() {
		if !r.status.is(StatusStopping, StatusStopped) {
			r.status.set(StatusPaused)
			r.log.Info("connector paused")
		}
	}, func(setUp bool) {
		// Paused, or a sink set up paused whose consumers have not parked yet.
		if r.status.is(StatusPaused) || setUp && r.status.is(StatusStarting) {
			r.status.set(StatusRunning)
		}
		r.log.Info("connector resumed")
	})
}

// handlePause is POST /pause: 204 once the connector is paused (its in-flight batch settled), or
// after IGGY_CONNECTOR_SHUTDOWN_TIMEOUT at the latest (it then shows paused once the batch has
// settled); 409 when it is paused already or stopping.
func (r *Runner) handlePause(w http.ResponseWriter, req *http.Request) {
	if r.status.is(StatusStopping, StatusStopped) {
		writeConflict(w, "the connector is stopping")
		return
	}
	settled, ok := r.pause.pause()
	if !ok {
		writeConflict(w, "the connector is paused already")
		return
	}
	r.log.Info("pause requested: settling the batch in flight")
	httplimit.ExtendWrite(w, r.settings.HTTP.Limits.WriteTimeout, r.settings.Env.ShutdownTimeout)
	t := time.NewTimer(r.settings.Env.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-settled:
	case <-t.C:
	case <-req.Context().Done():
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleResume is POST /resume: 204, or 409 when the connector is not paused or is stopping.
func (r *Runner) handleResume(w http.ResponseWriter, _ *http.Request) {
	if r.status.is(StatusStopping, StatusStopped) {
		writeConflict(w, "the connector is stopping")
		return
	}
	if !r.pause.resume() {
		writeConflict(w, "the connector is not paused")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// writeConflict answers 409 with the supervisor's error body shape.
func writeConflict(w http.ResponseWriter, reason string) {
	body, _ := json.Marshal(struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
	}{"invalid_state", reason})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	_, _ = w.Write(body)
}
