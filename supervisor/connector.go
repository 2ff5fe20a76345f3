package supervisor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// Connector statuses: the values runners publish in their stats pages (metrics.Status*), so the
// two sides cannot spell one differently.
const (
	statusStarting = metrics.StatusStarting
	statusRunning  = metrics.StatusRunning
	statusStopping = metrics.StatusStopping
	statusStopped  = metrics.StatusStopped
	statusError    = metrics.StatusError
	statusPaused   = metrics.StatusPaused  // ours (docs/architecture.md, decision 13): an operator paused it; its runner is alive
	statusStandby  = metrics.StatusStandby // a source replica waiting for its lease (state backend iggy)
	statusFailed   = metrics.StatusFailed  // ours: the restart limit was reached (restartlimit.go)
)

// errShuttingDown: the supervisor is draining its runners; nothing new is started.
var errShuttingDown = errors.New("the runtime is shutting down")

// managed is one connector the supervisor runs: its running config and the life loop of its
// runner process.
type managed struct {
	sup    *Supervisor
	kind   config.ConnectorKind
	key    string
	socket string
	page   *metrics.Page // the connector's figures, shared with its runners; nil until Start made it

	restarting atomic.Bool // a POST /restart is in progress
	ops        sync.Mutex  // serialises restart and the lifecycle routes (api_lifecycle.go)
	// refreshing makes reading the page and recording its status one step (refresh), so a
	// slower reader never records an older status over a newer one.
	refreshing sync.Mutex

	mu   sync.Mutex
	cfg  config.Connector // the running config
	path string           // resolved plugin path, or the configured one when it did not resolve
	id   uint32           // instance id of the current start (new on every start)
	// idReserved: id was numbered at startup for the first start to use.
	idReserved bool
	// placeholder: cfg only stands in for a config that does not load (kind, key, what the
	// document told); there is no running config until a restart loads one.
	placeholder bool
	status      string
	lastErr     *metrics.LastError
	restarts    uint64 // times the runner was restarted after it exited on its own
	proc        *child
	version     string // plugin version the runner last reported
	loopStop    chan struct{}
	loopDone    chan struct{}
	// target is what an operator asked for (targetstate.go): running, paused or stopped.
	target string
	// configFailed: the runner refused its configuration; the loop waits for a restart.
	configFailed bool
	// recentRestarts are the automatic restarts within the restart window; limitReached: the
	// restart limit stopped them and the loop waits for an operator (restartlimit.go).
	recentRestarts []time.Time
	limitReached   bool
	// overrides are an operator's run-time log filter and rate limit (overrides.go).
	overrides runtimeOverrides
	// rollback is the last rolled-back activation, while the kept version runs (activation.go).
	rollback *rollbackInfo

	logs *logging.Ring // recent log records: the runner's relayed lines and the supervisor's (api_logs.go)
}

func newManaged(s *Supervisor, cfg config.Connector, socket string) *managed {
	h := s.runtime.HTTP
	return &managed{sup: s, kind: cfg.Kind, key: cfg.Key, socket: socket, cfg: cfg, path: cfg.Path,
		status: statusStopped, version: "unknown", target: targetRunning,
		logs: s.logRings.ring(labelOf(cfg.Kind, cfg.Key), h.LogRecords, h.LogBytes)}
}

// label names the connector in logs (connectorLabel).
func (m *managed) label() string { return labelOf(m.kind, m.key) }

func (m *managed) setStatus(status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status = status
	if status == statusRunning || status == statusStopped {
		m.lastErr = nil
	}
}

func (m *managed) setError(msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status = statusError
	m.lastErr = &metrics.LastError{Message: msg, Timestamp: uint64(time.Now().UnixMicro())}
}

// noteIdleError records why a restart could not start a connector that is in error with no
// runner (its config did not load, or its plugin was not found), so last_error tells the newest
// reason. A running connector is left as it is.
func (m *managed) noteIdleError(msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loopStop == nil && m.status == statusError {
		m.lastErr = &metrics.LastError{Message: msg, Timestamp: uint64(time.Now().UnixMicro())}
	}
}

// snapshot is a consistent copy of what the API shows about the connector.
type snapshot struct {
	cfg      config.Connector
	path     string
	id       uint32
	status   string
	lastErr  *metrics.LastError
	restarts uint64
	proc     *child
	version  string
	// placeholder: cfg stands in for a config that does not load.
	placeholder bool
}

// runs reports whether version is the connector's running config ("active" in the config routes).
func (sn snapshot) runs(version uint64) bool { return !sn.placeholder && sn.cfg.Version == version }

func (m *managed) snapshot() snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	var le *metrics.LastError
	if m.lastErr != nil {
		c := *m.lastErr
		le = &c
	}
	return snapshot{cfg: m.cfg, path: m.path, id: m.id, status: m.status, lastErr: le,
		restarts: m.restarts, proc: m.proc, version: m.version, placeholder: m.placeholder}
}

// prepare checks a config before anything is stopped or started: the start-time checks, the
// plugin path (pluginPath) and the size of the runner's document. It returns the resolved path.
func (s *Supervisor) prepare(cfg config.Connector) (string, error) {
	if err := cfg.CheckStart(); err != nil {
		return "", err
	}
	path, err := s.pluginPath(cfg.Path)
	if err != nil {
		return "", err
	}
	if _, err := s.runnerDocument(cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// pluginPath resolves a connector's configured plugin path as upstream does and checks the file
// against the plugin allow-list. It returns the resolved path made absolute (so the runner's
// working directory never matters); the runner checks it again before it loads the library.
func (s *Supervisor) pluginPath(configured string) (string, error) {
	path, err := pluginpath.ResolvePath(configured)
	if err != nil {
		return "", fmt.Errorf("Failed to resolve plugin path: %w", err)
	}
	if _, err := s.plugins.Check(path); err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// launch starts the life loop with cfg. The returned channel gets one value once the first start
// settled: nil when the connector is running (or still starting after the start timeout), else why
// it failed.
//
// Once Shutdown has begun nothing is launched (errShuttingDown): the check and the new loop are set
// up under m.mu, which Shutdown's stopLoop also takes after setting closing, so a restart racing
// with Shutdown either is stopped by it or sees closing.
func (m *managed) launch(cfg config.Connector, path string) <-chan error {
	first := make(chan error, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	m.mu.Lock()
	if m.sup.closing.Load() {
		m.mu.Unlock()
		first <- errShuttingDown
		return first
	}
	m.cfg, m.path, m.placeholder, m.configFailed = cfg, path, false, false
	m.clearRestartLimitLocked()
	m.dropRuntimeOverridesLocked() // a new loop starts with the configured values (overrides.go)
	m.forgetRollbackLocked(cfg.Version)
	m.loopStop, m.loopDone = stop, done
	m.mu.Unlock()
	go m.loop(cfg, path, stop, done, first)
	return first
}

// stopLoop stops the life loop (draining the runner) and waits for it to end.
func (m *managed) stopLoop() {
	m.mu.Lock()
	stop, done := m.loopStop, m.loopDone
	m.loopStop, m.loopDone = nil, nil
	m.clearRestartLimitLocked() // the loop that gave up goes: the connector is no longer failed
	m.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
}

// loop runs the runner, watches it and restarts it with capped exponential backoff when it exits
// on its own; the backoff starts over after a run of at least StableAfter.
func (m *managed) loop(cfg config.Connector, path string, stop <-chan struct{}, done chan<- struct{}, first chan<- error) {
	defer close(done)
	env := m.sup.env
	restarts := restartBackoff{min: env.BackoffMin, max: env.BackoffMax, stableAfter: env.StableAfter, jitter: backoff.DefaultJitter}
	report := func(err error) {
		if first != nil {
			first <- err
			first = nil
		}
	}
	defer report(errors.New("stopped before it started"))
	// stopCtx ends when stop is closed, so a runner still starting is abandoned at once.
	stopCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-stopCtx.Done():
		}
	}()
	for {
		started := time.Now()
		c, err := m.start(stopCtx, cfg, path)
		if stopCtx.Err() != nil {
			if err == nil {
				// It came up just as the stop came: drain it as watch drains a running one, or it
				// would outlive the stop (and show running after a shutdown).
				m.setStatus(statusStopping)
				c.stop(env.DrainTimeout)
				m.mu.Lock()
				m.proc = nil
				m.mu.Unlock()
				m.sup.sampler.Forget(int32(c.pid))
			}
			m.setStatus(statusStopped)
			return
		}
		var exit exitInfo // how the runner ended, when it ran at all
		if err != nil {
			m.setError(err.Error())
			report(err)
			var early *exitedError // it exited before its endpoint answered, as on bad configuration
			if errors.As(err, &early) {
				exit = early.exit
				m.sup.log.Warn("runner exited while starting", "connector", m.label(), "exit", exit.String())
			}
		} else {
			if stopped := m.watch(c, stop, report); stopped {
				return
			}
			exit = c.exit
			m.setError(exit.String())
			report(errors.New(exit.String()))
			m.sup.log.Warn("runner exited", "connector", m.label(), "pid", c.pid, "exit", exit.String())
		}
		if exit.ConfigError {
			// A configuration error does not heal by itself: wait for a restart request.
			m.setError(exit.String() + " (invalid configuration; not restarted until POST /" + m.kind.Plural() + "/" + m.key + "/restart)")
			m.mu.Lock()
			m.configFailed = true
			m.mu.Unlock()
			<-stop
			m.setStatus(statusStopped)
			return
		}
		if m.restartsExhausted(exit.String(), time.Now()) { // the restart limit: wait for an operator
			<-stop
			m.setStatus(statusStopped)
			return
		}
		if backoff.Sleep(stopCtx, restarts.pause(time.Since(started))) != nil {
			m.setStatus(statusStopped)
			return
		}
		m.mu.Lock()
		m.restarts++
		m.mu.Unlock()
		m.noteRestart(time.Now())
		m.sup.runtimeMetrics.IncRestarts(m.key, string(m.kind))
		m.sup.log.Info("restarting runner", "connector", m.label(), "restarts", m.snapshot().restarts)
	}
}

// start spawns a runner for cfg and waits until its endpoint answers.
func (m *managed) start(ctx context.Context, cfg config.Connector, path string) (*child, error) {
	m.mu.Lock()
	id := m.id
	if !m.idReserved {
		id = m.sup.nextID.Add(1)
	}
	m.id, m.idReserved = id, false
	m.status = statusStarting
	startPaused := m.target == targetPaused
	m.mu.Unlock()
	env, handover, err := m.sup.runnerEnv(m, cfg, path)
	if err != nil {
		return nil, err
	}
	// The runner read its config and secrets before its endpoint answered (or it exited): the
	// files go.
	defer removeAll(handover)
	if startPaused { // a paused connector's runner comes back paused, after a crash too
		env = append(env, runnerproc.EnvStartPaused+"=true")
	}
	relay := logging.NewRelayer(m.sup.runnerLog, m.key)
	relay.SetAlso(m.keepLine) // the connector's log ring (api_logs.go), whatever the filter prints
	c, err := startChild(m.sup.runnerBin, env, m.socket, relay.Line)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, m.sup.env.StartTimeout); err != nil {
		c.stop(m.sup.env.DrainTimeout)
		return nil, err
	}
	// Nothing else is asked over the endpoint (the stats page has the rest): free the connection.
	c.http.CloseIdleConnections()
	m.mu.Lock()
	m.proc = c
	paused := m.target == targetPaused
	m.mu.Unlock()
	m.sup.log.Info("runner started", "connector", m.label(), "pid", c.pid, "id", id)
	if paused != startPaused {
		// A pause or resume came while the runner started: it saw no runner, this start sees it.
		m.sup.tellRunner(ctx, m, c, paused)
	}
	return c, nil
}

// watch follows the runner's status until it exits (false) or stop is closed (true: the runner was
// drained). The first settled status is reported.
func (m *managed) watch(c *child, stop <-chan struct{}, report func(error)) bool {
	startDeadline := time.Now().Add(m.sup.env.StartTimeout)
	poll := time.NewTicker(m.sup.env.HealthInterval)
	defer poll.Stop()
	// Check quickly at first, so the first report does not wait a whole interval.
	quick := time.NewTicker(20 * time.Millisecond)
	defer quick.Stop()
	defer func() {
		m.mu.Lock()
		m.proc = nil
		m.mu.Unlock()
		m.sup.sampler.Forget(int32(c.pid))
	}()
	settled := false
	check := func() {
		status := m.refresh(c)
		if settled {
			return
		}
		switch {
		case status == statusRunning, status == statusPaused, status == statusStandby:
			// A standby is settled: it may wait for its lease as long as another replica runs.
			settled = true
			report(nil)
		case status == statusError:
			settled = true
			_, msg := m.statusNow()
			report(errors.New(cmp.Or(msg, "connector failed")))
		case time.Now().After(startDeadline):
			settled = true
			report(nil)
		}
		if settled {
			quick.Stop()
		}
	}
	for {
		select {
		case <-stop:
			m.setStatus(statusStopping)
			c.stop(m.sup.env.DrainTimeout)
			m.setStatus(statusStopped)
			return true
		case <-c.done:
			return false
		case <-quick.C:
			check()
		case <-poll.C:
			check()
		}
	}
}

// statusNow returns the status and the last error's message ("" when none).
func (m *managed) statusNow() (status, lastError string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastErr != nil {
		return m.status, m.lastErr.Message
	}
	return m.status, ""
}

// refresh reads the status, last error and plugin version runner c published in the connector's
// stats page and records them. It creates the connector's counter series at 0, as the runner's own
// /stats read does.
func (m *managed) refresh(c *child) string {
	m.refreshing.Lock()
	defer m.refreshing.Unlock()
	st := m.page.Stats(true)
	if st.PID == int32(c.pid) && !c.exited() {
		m.noteVersion(st.Version)
		switch st.Status {
		case statusError:
			msg := "connector failed"
			if st.LastError != nil {
				msg = st.LastError.Message
			}
			m.setError(msg)
		case "":
		default:
			m.setStatus(st.Status)
		}
	}
	status, _ := m.statusNow()
	return status
}

// noteVersion remembers the plugin version a runner reported.
func (m *managed) noteVersion(v string) {
	if v == "" || v == "unknown" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.version = v
}

// socketName is the runner socket's file name; an index keeps it short (Unix socket paths are
// limited to about 100 bytes, keys to 128).
func socketName(kind config.ConnectorKind, index int) string {
	return string(kind) + "-" + strconv.Itoa(index) + ".sock"
}

// pageName is the file name of the connector's stats page, beside its socket.
func pageName(kind config.ConnectorKind, index int) string {
	return string(kind) + "-" + strconv.Itoa(index) + ".stats"
}

// restartBackoff is the pause before restarting a runner: min, doubling per restart up to max,
// and min again after a run of at least stableAfter. Each pause is jittered by ±jitter, so runners
// that died together (their Iggy server went away) are not restarted in step.
type restartBackoff struct {
	min, max, stableAfter time.Duration
	jitter                float64
	delays                *backoff.Backoff // made at the first pause
}

// pause returns the wait before the next start, given how long the last run lasted.
func (b *restartBackoff) pause(ran time.Duration) time.Duration {
	if b.delays == nil {
		b.delays = backoff.New(backoff.Policy{Min: b.min, Max: b.max, Jitter: b.jitter})
	} else if ran >= b.stableAfter {
		b.delays.Reset()
	}
	return b.delays.Next()
}
