package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// Sentinel errors callers (and tests) branch on.
var (
	// ErrPluginHung: a plugin call did not return within IGGY_CONNECTOR_PLUGIN_TIMEOUT.
	ErrPluginHung = errors.New("plugin call timed out")
	// ErrSourceStalled: the source plugin's poll loop has stopped (docs/architecture.md, decision 5).
	ErrSourceStalled = errors.New("source stalled")
	// ErrStreamNotFound: a configured stream or topic does not exist on the server.
	ErrStreamNotFound = errors.New("stream or topic not found")
)

// Runner runs one connector: its plugin, its Iggy pump and its HTTP endpoint.
type Runner struct {
	settings Settings
	spec     *connectorSpec
	log      *slog.Logger

	status   *statusBoard
	pause    *pauseGate // the operator's pause (pause.go)
	registry *prometheus.Registry
	metrics  *connMetrics
	state    *metrics.StateGauge // iggy_connector_state on the runner's own endpoint
	batches  *telemetry.Reporter // per-batch spans and benchmark events
	dropLog  *dropLogger         // rate-limited warnings about dropped sink messages
	errors   errorPolicy         // [error_handling] over the runner's retry settings (docs/architecture.md, decision 14)
	gc       *gcTuner            // a higher GC percent while messages flow

	plugins       pluginpath.AllowList // where the plugin may be loaded from
	pluginVersion atomic.Value         // string; "unknown" until the library is loaded

	procMu sync.Mutex // serialises process-figure reads (the CPU figure is a delta between calls)

	active atomic.Bool // a source on the iggy state backend holds its lease (standby.go)

	level *logLevel     // the log filter at run time (loglevel.go)
	rate  *rateLimiter  // [rate_limit] and its run-time changes (ratelimit.go)
	tap   *tap.Hub      // the live tap the pumps offer messages to (tap.go)
	logs  *logging.Ring // the runner's recent log records for GET /logs (logs.go); set by Main

	logsDone     chan struct{} // closed at shutdown: logs streams that follow end
	logsDoneOnce sync.Once
	iggyDown     atomic.Bool // the Iggy connection is lost and being re-established (iggystate.go)
}

// New validates the connector (schemas, transforms, streams) and prepares its metrics. Nothing is
// loaded or dialled yet; Run does that. log is the process logger: its lines should already carry
// connector_key and connector_type, as Main's do. tel exports per-batch spans; nil (or disabled
// telemetry) exports nothing.
func New(s Settings, log *slog.Logger, tel *telemetry.Telemetry) (*Runner, error) {
	spec, err := buildSpec(s.Connector)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	m, err := newConnMetrics(reg, spec.Key, spec.Kind, s.Env.StatsPage)
	if err != nil {
		return nil, fmt.Errorf("connector %q: %w", spec.Key, err)
	}
	r := &Runner{
		settings: s,
		spec:     spec,
		log:      log,
		status:   newStatusBoard(),
		registry: reg,
		metrics:  m,
		batches:  tel.Reporter(log, spec.Benchmark),
		dropLog:  newDropLogger(log, dropLogInterval),
		errors:   newErrorPolicy(s.Connector.ErrorHandling, s.Env),
		gc:       newGCTuner(),
	}
	r.pluginVersion.Store("unknown")
	r.tap = tap.NewHub(tap.HubOptions{OnDrop: m.c.AddTapDropped})
	r.logs, r.logsDone = logging.NewRing(0, 0), make(chan struct{})
	if r.errors.tolerateAll {
		m.c.ShowDeadLettered()
	}
	r.pause = r.newPauseGate()
	ceiling, _ := pluginLogCeiling(s.Env.PluginLogCeiling) // checked by ParseEnv
	r.level = newLogLevel(log, currentFilter(log), ceiling)
	r.rate = newRateLimiter(s.Connector.RateLimit, m.c, log, realClock{})
	r.state = metrics.NewStateGauge(reg)
	r.status.onChange = r.publishStatus
	r.publishStatus(r.status.get())
	r.plugins = pluginAllowList(s.Runtime.Plugins.AllowedDirs, spec.Path)
	// A plugin that resolves but may not be loaded is bad configuration (exit 2, not retried); one
	// that does not resolve yet fails the run as before (exit 1), so a restart may find it.
	if path, err := pluginpath.ResolvePath(spec.Path); err == nil {
		if _, err := r.plugins.Check(path); err != nil {
			return nil, fmt.Errorf("%s %q: %w", spec.Kind, spec.Key, err)
		}
	}
	return r, nil
}

// pluginInstanceID is the id the plugin is opened with: the supervisor's numbering when it passed
// one (IGGY_CONNECTOR_INSTANCE_ID), else the process's next id. A runner has one plugin instance
// (a source reopened after a pause keeps its id), so the given id is never used by two at once.
func (r *Runner) pluginInstanceID() uint32 {
	if id := r.settings.Env.InstanceID; id != 0 {
		return id
	}
	return plugin.NextInstanceID()
}

// pluginAllowList is plugins.allowed_dirs (the supervisor always passes its list), else the
// default of a standalone runner: the directory of its own connector's plugin, the one config it
// starts with, and plugins/ next to the binary.
func pluginAllowList(configured []string, pluginPath string) pluginpath.AllowList {
	if len(configured) > 0 {
		return pluginpath.NewAllowList(configured)
	}
	return pluginpath.NewAllowList(pluginpath.DefaultAllowedDirs([]string{pluginPath}))
}

// Status returns the connector's status and last error.
func (r *Runner) Status() (Status, *LastError) { return r.status.get() }

// Run starts the endpoint, dials Iggy, loads and opens the plugin and pumps until ctx is cancelled
// (graceful stop, nil error) or a fatal error (status error, the error returned). Either way the
// in-flight batch is settled and the plugin closed before Run returns.
func (r *Runner) Run(ctx context.Context) error {
	if r.metrics.c.Shared() {
		// Beats until Run returns (draining included), so the supervisor sees a live runner.
		beatCtx, stopBeating := context.WithCancel(context.Background())
		defer stopBeating()
		go r.metrics.c.KeepBeating(beatCtx)
	}
	h := r.settings.HTTP
	if h.Enabled {
		ep, err := startEndpoint(h, r, r.registry, r.log)
		if err != nil {
			return r.fail(fmt.Errorf("start http endpoint: %w", err))
		}
		defer ep.close()
	}
	// Before the endpoint closes: open taps end with reason shutdown, so it need not wait on them.
	defer r.tap.Close()
	defer r.stopFollowers()
	plugin.SetLogger(r.log)
	r.level.tellPlugin() // before the plugin's first open, which reads RUST_LOG once
	plugin.SetLogLimit(r.settings.Env.PluginLogRate, r.metrics.c.AddLogLinesDropped)
	r.batches.BenchmarkStarted()

	client, err := r.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			r.status.set(StatusStopped)
			return nil
		}
		return r.fail(err)
	}
	defer client.Close()

	switch r.spec.Kind {
	case kindSink:
		err = r.runSink(ctx, client)
	default:
		err = r.runSource(ctx, client)
	}
	if err != nil {
		return r.fail(err)
	}
	r.status.set(StatusStopped)
	r.log.Info("connector stopped")
	return nil
}

// fail records a fatal error as the connector's status and returns it.
func (r *Runner) fail(err error) error {
	r.status.setError(err.Error())
	r.log.Error("connector failed", "error", err)
	return err
}

// dial connects and logs in, retrying with capped backoff while the server is unreachable; bad
// credentials are final.
func (r *Runner) dial(ctx context.Context) (iggyclient.Client, error) {
	e := r.settings.Env
	bo := reconnectBackoff(e)
	for {
		c, err := iggyclient.Dial(ctx, r.iggyOptions())
		if err == nil {
			return c, nil
		}
		if errors.Is(err, iggyclient.ErrUnauthorized) {
			return nil, fmt.Errorf("log in to iggy at %s: %w", r.settings.Iggy.Address, err)
		}
		r.log.Warn("cannot reach iggy; retrying", "address", r.settings.Iggy.Address, "error", err)
		if bo.Wait(ctx) != nil {
			return nil, ctx.Err()
		}
	}
}

// pluginCall runs one call into the plugin through pkg/plugin's context-aware variants, bounded
// by IGGY_CONNECTOR_PLUGIN_TIMEOUT (0 = no limit). On timeout the foreign call keeps running on its
// thread; the caller treats the plugin as hung (ErrPluginHung) and the process exits.
func (r *Runner) pluginCall(op string, fn func(ctx context.Context) error) error {
	return r.pluginCallWithin(op, r.settings.Env.PluginCallTimeout, fn)
}

// pluginClose runs the plugin's close, bounded by the shutdown timeout as well: close is part of
// the shutdown the operator waits for. A non-zero stopBy bounds it to what is left of a budget
// that began earlier (a sink settles its batch first).
func (r *Runner) pluginClose(op string, stopBy time.Time, fn func(ctx context.Context) error) error {
	limit := r.settings.Env.ShutdownTimeout
	if !stopBy.IsZero() {
		// A spent budget still gives close a moment: a healthy close returns at once.
		limit = max(time.Until(stopBy), 50*time.Millisecond)
	}
	if p := r.settings.Env.PluginCallTimeout; p > 0 && p < limit {
		limit = p
	}
	return r.pluginCallWithin(op, limit, fn)
}

func (r *Runner) pluginCallWithin(op string, limit time.Duration, fn func(ctx context.Context) error) error {
	ctx := context.Background()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	err := fn(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w after %s: %w", op, ErrPluginHung, limit, err)
	}
	return err
}

// callWithContext runs a plugin call that has no context-aware variant (handle, which returns at
// once in a healthy plugin) so that pluginCall can bound it too.
func callWithContext(ctx context.Context, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reconnectBackoff is the jittered pause between attempts to reach Iggy (dial, poll), from
// IGGY_CONNECTOR_RECONNECT_MIN doubling up to IGGY_CONNECTOR_RECONNECT_MAX: the jitter keeps a fleet
// of runners that lost the same server from coming back in step.
func reconnectBackoff(e Env) *backoff.Backoff {
	return backoff.New(backoff.Policy{Min: e.ReconnectMin, Max: e.ReconnectMax, Jitter: backoff.DefaultJitter})
}
