package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// Lifecycle operations (docs/architecture.md, decision 13): POST /{sinks,sources}/{key}/{op}.
const (
	opPause  = "pause"
	opResume = "resume"
	opStop   = "stop"
	opStart  = "start"
)

// lifecycleConflicts says, per operation and target state, why the operation makes no sense
// (409); a missing entry means it applies. Any operation is refused as well for a connector that
// is disabled or whose config or plugin did not start (lifecycleBlocked).
var lifecycleConflicts = map[string]map[string]string{
	opPause:  {targetPaused: "it is paused already", targetStopped: "it is stopped; start it first"},
	opResume: {targetRunning: "it is not paused", targetStopped: "it is stopped; start it instead"},
	opStop:   {targetStopped: "it is stopped already"},
	opStart:  {targetRunning: "it is running already", targetPaused: "it is paused; resume it instead"},
}

// lifecycleRoutes registers the four operations under base ("/sinks" or "/sources").
func (s *Supervisor) lifecycleRoutes(mux router, base string, kind config.ConnectorKind, budget time.Duration) {
	for _, op := range []string{opPause, opResume, opStop, opStart} {
		mux.HandleFunc("POST "+base+"/{key}/"+op, s.withBudget(budget, s.withKind(kind, s.connectorOp(func(ctx context.Context, m *managed) error {
			return s.transition(ctx, m, op)
		}))))
	}
}

// connectorOp is the handler of an operation on the path's connector (a lifecycle operation,
// restart): 204 when do succeeds, else its *apiError as it says, anything else as 500.
func (s *Supervisor) connectorOp(do func(context.Context, *managed) error) kindHandler {
	return func(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
		m, ok := s.running(w, r, kind)
		if !ok {
			return
		}
		if err := do(r.Context(), m); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				ae = internalError(err)
			}
			writeAPIError(w, ae)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func conflict(m *managed, op, reason string) *apiError {
	return &apiError{status: http.StatusConflict, Code: "invalid_state",
		Reason: fmt.Sprintf("Cannot %s %s with key: %s: %s", op, m.kind, m.key, reason)}
}

func shuttingDown() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, Code: "error", Reason: errShuttingDown.Error()}
}

// transition applies op to the connector, one operation (or restart) at a time.
func (s *Supervisor) transition(ctx context.Context, m *managed, op string) error {
	m.ops.Lock()
	defer m.ops.Unlock()
	if s.closing.Load() {
		return shuttingDown()
	}
	if op == opStart && m.failed() { // the restart limit stopped it (restartlimit.go)
		return s.startFailed(m)
	}
	target, reason := m.lifecycleBlocked()
	if reason == "" {
		reason = lifecycleConflicts[op][target]
	}
	if reason != "" {
		return conflict(m, op, reason)
	}
	switch op {
	case opPause, opResume:
		return s.pauseOrResume(ctx, m, op == opPause)
	case opStop:
		if _, err := s.setTarget(m, targetStopped); err != nil {
			return err
		}
		s.log.Info("stopping connector on request", "connector", m.label())
		m.stopLoop() // drains the runner; the loop records stopped
		return nil
	default:
		return s.startStopped(m)
	}
}

// lifecycleBlocked returns the connector's target state and why no lifecycle operation applies to
// it ("" when they do): POST .../restart is the way out of these.
func (m *managed) lifecycleBlocked() (target, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	restart := "; fix it and POST /" + m.kind.Plural() + "/" + m.key + "/restart"
	switch {
	case m.placeholder:
		return m.target, "its config does not load" + restart
	case !m.cfg.Enabled:
		return m.target, "it is disabled (enabled = false in its config)"
	case m.configFailed, m.loopStop == nil && m.target != targetStopped:
		return m.target, "it is in error with no runner (its config or plugin did not start)" + restart
	}
	return m.target, ""
}

// setTarget saves and records a new target state and returns the connector's runner at that
// moment (nil when none). A runner that starts later sees the new target (managed.start), so
// exactly one of them tells the runner.
func (s *Supervisor) setTarget(m *managed, target string) (*child, error) {
	if err := s.saveTarget(m.kind, m.key, target); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = target
	if m.proc.alive() {
		return m.proc, nil
	}
	return nil, nil
}

// pauseOrResume records the new target and tells the runner, if one is up (else the next start
// uses the target). When a live runner does not take it, the old target is put back; one that took
// it but did not confirm the new state in time keeps it (504).
func (s *Supervisor) pauseOrResume(ctx context.Context, m *managed, pause bool) error {
	old, next := targetRunning, targetPaused
	if !pause {
		old, next = next, old
	}
	c, err := s.setTarget(m, next)
	if err != nil || c == nil {
		return err
	}
	err = s.tellRunner(ctx, m, c, pause)
	if errors.Is(err, errRunnerUnconfirmed) {
		return &apiError{status: http.StatusGatewayTimeout, Code: "timeout",
			Reason: fmt.Sprintf("Cannot confirm %s of %s with key: %s: %v", op(pause), m.kind, m.key, err)}
	}
	if err != nil && !c.exited() {
		if _, rerr := s.setTarget(m, old); rerr != nil {
			s.log.Error("cannot put the target state back", "connector", m.label(), "error", rerr)
		}
		return err
	}
	return nil
}

// op names the operation of pauseOrResume.
func op(pause bool) string {
	if pause {
		return opPause
	}
	return opResume
}

// tellRunner pauses or resumes runner c (its POST /pause answers once the in-flight batch
// settled, its POST /resume once the connector runs again) and records the status it then shows.
// A runner in that state already is fine.
func (s *Supervisor) tellRunner(ctx context.Context, m *managed, c *child, pause bool) error {
	path := "/" + op(pause)
	ctx, cancel := context.WithTimeout(ctx, s.env.DrainTimeout)
	defer cancel()
	err := c.post(ctx, path)
	if errors.Is(err, errRunnerConflict) {
		err = nil
	}
	if err != nil {
		s.log.Warn("runner did not take the request", "connector", m.label(), "request", "POST "+path, "error", err)
	}
	m.refresh(c)
	return err
}

// restart stops the connector's runner and starts it again with the provider's active config
// (docs/architecture.md, decision 6). The new config and its plugin path are checked before anything is stopped,
// so a bad config leaves the running connector as it is. A restart already in progress makes this
// one a no-op, as upstream.
func (s *Supervisor) restart(ctx context.Context, m *managed) error {
	if !m.restarting.CompareAndSwap(false, true) {
		return nil
	}
	defer m.restarting.Store(false)
	m.ops.Lock()
	defer m.ops.Unlock()
	if s.closing.Load() {
		return shuttingDown()
	}
	cfg, err := s.provider.Get(ctx, m.kind, m.key)
	if err != nil {
		if errors.Is(err, provider.ErrNotFound) {
			return notRunning(m.kind, m.key)
		}
		m.noteIdleError(err.Error())
		return invalidConfiguration(err.Error())
	}
	path, err := s.prepare(cfg)
	if err != nil {
		m.noteIdleError(err.Error())
		return invalidConfiguration(configProblem(err))
	}
	s.log.Info("restarting connector on request", "connector", m.label(), "version", cfg.Version)
	m.stopLoop()
	m.mu.Lock()
	stopped := m.target == targetStopped // an operator stopped it: it stays stopped, with the new config
	m.mu.Unlock()
	if !cfg.Enabled || stopped {
		m.mu.Lock()
		m.cfg, m.path, m.status, m.lastErr, m.placeholder = cfg, path, statusStopped, nil, false
		m.mu.Unlock()
		return nil
	}
	return firstStartError(<-m.launch(cfg, path))
}

// startStopped starts a stopped connector's runner again with its running config, from its stored
// offsets or state.
func (s *Supervisor) startStopped(m *managed) error {
	cfg := m.snapshot().cfg
	path, err := s.prepare(cfg)
	if err != nil {
		return invalidConfiguration(configProblem(err))
	}
	if _, err := s.setTarget(m, targetRunning); err != nil {
		return err
	}
	s.log.Info("starting connector on request", "connector", m.label())
	return firstStartError(<-m.launch(cfg, path))
}

// firstStartError is the answer to a failed first start of a launched connector (nil for none).
func firstStartError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errShuttingDown):
		return shuttingDown()
	}
	return invalidConfiguration(err.Error())
}
