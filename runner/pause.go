package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
)

// pauseGate is the operator's pause (POST /pause and POST /resume on the endpoint, or
// IGGY_CONNECTOR_START_PAUSED; docs/architecture.md, decision 13). The loops that move data, its members (one
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

	// The callbacks run with mu held, so the status they set follows the gate's order: paused is
	// shown before a pause's waiter is answered, and never after the resume that followed.
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
	g.settle()
	g.mu.Unlock()
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
	ok, _ := g.awaitParked(ctx, settle)
	return ok
}

// awaitParked is awaitSettling that also reports whether the member parked (a sink's poll
// schedule starts afresh after a resume).
func (g *pauseGate) awaitParked(ctx context.Context, settle func()) (ok, parked bool) {
	g.mu.Lock()
	if !g.paused {
		g.mu.Unlock()
		return ctx.Err() == nil, false
	}
	if settle != nil {
		g.mu.Unlock()
		settle()
		g.mu.Lock()
		if !g.paused { // resumed meanwhile
			g.mu.Unlock()
			return ctx.Err() == nil, false
		}
	}
	resumed := g.resumed
	g.parked++
	g.settle()
	g.mu.Unlock()
	select {
	case <-resumed:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.parked--
	g.mu.Unlock()
	return ctx.Err() == nil, true
}

// settle runs onParked and then closes settled once every member parked. Called with mu held.
func (g *pauseGate) settle() {
	if !g.paused || g.done || g.members <= 0 || g.parked < g.members {
		return
	}
	g.done = true
	g.onParked()
	close(g.settled)
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
	g.onResumed(g.set)
	g.mu.Unlock()
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
		r.log.Info("connector resumed")
		// A source runs again only once its plugin is reopened and its poll loop started
		// (sourceSession marks it running then); a sink's consumers just poll on. Running is set
		// again even when shown already (a pause still settling), so handleResume sees a set after
		// its resume.
		if r.spec.Kind == kindSink && (r.status.is(StatusPaused, StatusRunning) || setUp && r.status.is(StatusStarting)) {
			r.status.set(StatusRunning)
		}
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

// handleResume is POST /resume: 204 once the connector runs again (a sink at once; a source once
// its plugin is reopened and its poll loop started; a pump still starting once it is set up), or
// once a source replica waits in standby for the lease; 409 when it is not paused or is stopping.
// The answer means what it says: a /stats read after it shows running. When it does not run
// within IGGY_CONNECTOR_SHUTDOWN_TIMEOUT the answer is 504 (it stays resumed and runs once ready);
// when it fails on the way (its plugin does not open) 500 with its error.
func (r *Runner) handleResume(w http.ResponseWriter, req *http.Request) {
	if r.status.is(StatusStopping, StatusStopped) {
		writeConflict(w, "the connector is stopping")
		return
	}
	_, before, _ := r.status.watch()
	if !r.pause.resume() {
		writeConflict(w, "the connector is not paused")
		return
	}
	httplimit.ExtendWrite(w, r.settings.HTTP.Limits.WriteTimeout, r.settings.Env.ShutdownTimeout)
	ctx, cancel := context.WithTimeout(req.Context(), r.settings.Env.ShutdownTimeout)
	defer cancel()
	switch st := r.awaitRunning(ctx, before); st {
	case StatusRunning, StatusStandby:
		w.WriteHeader(http.StatusNoContent)
	case StatusError, StatusStopping, StatusStopped:
		reason := "resumed, but the connector did not run again (status " + string(st) + ")"
		if _, le := r.status.get(); le != nil {
			reason += ": " + le.Message
		}
		writeError(w, http.StatusInternalServerError, "error", reason)
	default:
		writeError(w, http.StatusGatewayTimeout, "timeout", fmt.Sprintf(
			"resumed, but the connector is not running after %s (status %s); it runs once ready", r.settings.Env.ShutdownTimeout, st))
	}
}

// awaitRunning waits until the status is set to running after the first before sets, or shows
// standby, error, stopping or stopped, and returns it; when ctx ends first, the status then.
func (r *Runner) awaitRunning(ctx context.Context, before uint64) Status {
	for {
		st, changes, next := r.status.watch()
		switch {
		case st == StatusRunning && changes > before, st == StatusStandby, st == StatusError, st == StatusStopping, st == StatusStopped:
			return st
		}
		select {
		case <-next:
		case <-ctx.Done():
			return st
		}
	}
}

// writeConflict answers 409 with the supervisor's error body shape.
func writeConflict(w http.ResponseWriter, reason string) {
	writeError(w, http.StatusConflict, "invalid_state", reason)
}

// writeError answers status with the supervisor's error body shape.
func writeError(w http.ResponseWriter, status int, code, reason string) {
	body, _ := json.Marshal(struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
	}{code, reason})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
