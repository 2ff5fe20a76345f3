package supervisor

import (
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// The restart limit (docs/runtime-changes.md): with IGGY_SUPERVISOR_RESTART_LIMIT set, a connector
// whose runner exited that many times within IGGY_SUPERVISOR_RESTART_WINDOW, each exit restarted,
// is not restarted after the next exit: its status becomes "failed", its last_error says why
// (with the last exit's reason), iggy_connector_restart_limit_reached is 1, and it stays so until
// an operator starts it (POST .../start) or restarts it (POST .../restart). 0, the default, is
// unlimited: restarts go on with backoff, as before.

// restartLimit reports whether the supervisor has a restart limit.
func (s *Supervisor) restartLimit() bool { return s.env.RestartLimit > 0 }

// restartsExhausted is called when the runner exited and would be restarted: it reports whether
// the limit forbids it (the connector is then recorded as failed, with exit as the last reason).
func (m *managed) restartsExhausted(exit string, now time.Time) bool {
	env := m.sup.env
	if env.RestartLimit <= 0 {
		return false
	}
	m.mu.Lock()
	recent := m.recentRestarts[:0]
	for _, t := range m.recentRestarts {
		if now.Sub(t) < env.RestartWindow {
			recent = append(recent, t)
		}
	}
	m.recentRestarts = recent
	if len(recent) < env.RestartLimit {
		m.mu.Unlock()
		return false
	}
	m.status = statusFailed
	m.limitReached = true
	msg := fmt.Sprintf("restart limit reached: the runner was restarted %d times within %s (IGGY_SUPERVISOR_RESTART_LIMIT=%d, IGGY_SUPERVISOR_RESTART_WINDOW=%s) and exited again; not restarted until POST /%s/%s/start or /restart; last exit: %s",
		len(recent), env.RestartWindow, env.RestartLimit, env.RestartWindow, m.kind.Plural(), m.key, exit)
	m.lastErr = &metrics.LastError{Message: msg, Timestamp: uint64(now.UnixMicro())}
	m.mu.Unlock()
	m.sup.runtimeMetrics.SetRestartLimitReached(m.key, string(m.kind), true)
	m.sup.log.Error("connector failed: restart limit reached", "connector", m.label(), "restarts", len(recent),
		"window", env.RestartWindow, "last_exit", exit)
	return true
}

// noteRestart records one automatic restart, for the limit's window.
func (m *managed) noteRestart(now time.Time) {
	if m.sup.env.RestartLimit <= 0 {
		return
	}
	m.mu.Lock()
	m.recentRestarts = append(m.recentRestarts, now)
	m.mu.Unlock()
}

// clearRestartLimitLocked forgets the restarts counted so far: a new life loop (an operator's start,
// restart or activation) starts with the whole allowance. Called with m.mu held.
func (m *managed) clearRestartLimitLocked() {
	m.recentRestarts = nil
	if m.limitReached {
		m.limitReached = false
		m.sup.runtimeMetrics.SetRestartLimitReached(m.key, string(m.kind), false)
	}
}

// failed reports whether the connector reached the restart limit and waits for an operator.
func (m *managed) failed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limitReached
}

// startFailed runs a connector that reached the restart limit again (POST .../start): the life
// loop waiting for an operator is stopped and a new one started with the running config.
func (s *Supervisor) startFailed(m *managed) error {
	cfg := m.snapshot().cfg
	path, err := s.prepare(cfg)
	if err != nil {
		return invalidConfiguration(configProblem(err))
	}
	s.log.Info("starting connector on request after its restart limit", "connector", m.label())
	m.stopLoop()
	return firstStartError(<-m.launch(cfg, path))
}

// refreshRestartLimits sets iggy_connector_restart_limit_reached of every connector, when the
// supervisor has a limit (without one the family stays empty).
func (s *Supervisor) refreshRestartLimits() {
	if !s.restartLimit() {
		return
	}
	for _, m := range s.ordered {
		s.runtimeMetrics.SetRestartLimitReached(m.key, string(m.kind), m.failed())
	}
}
