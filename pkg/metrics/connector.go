package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Connector status values (docs/http-api.md §5.2).
const (
	StatusStarting = "starting"
	StatusRunning  = "running"
	StatusStopping = "stopping"
	StatusStopped  = "stopped"
	StatusError    = "error"
	// StatusPaused is ours (docs/architecture.md, decision 13): the operator paused the connector; its runner
	// process is alive and serving.
	StatusPaused = "paused"
	// StatusStandby is ours (docs/architecture.md, decision 15): a replica of a source waiting for the lease.
	StatusStandby = "standby"
	// StatusFailed is ours (docs/runtime-changes.md): the supervisor stopped restarting the
	// connector's runner after IGGY_SUPERVISOR_RESTART_LIMIT restarts within the window. Only the
	// supervisor shows it; a runner never publishes it.
	StatusFailed = "failed"
)

// ErrInvalidKind is returned for a connector kind other than "sink" or "source".
var ErrInvalidKind = errors.New(`connector kind must be "sink" or "source"`)

// HeartbeatEvery is how often a runner attached to a page beats (KeepBeating).
const HeartbeatEvery = 200 * time.Millisecond

// Connector is one connector's metric series plus the identity and status its /stats object
// reports. Its figures live in cells: in this process's memory, or in a Page shared with the
// supervisor (AttachConnector). The counting methods are safe for concurrent use and cheap enough
// for the hot path: an atomic add per call.
type Connector struct {
	key, kind string
	c         *cells
	page      *Page // nil when the cells are in this process's memory
	labels    *seriesLabels

	startTime time.Time
	process   *Sampler

	lagMu    sync.Mutex     // serialises additions to the lag table
	lagIndex map[lagKey]int // partition -> its entry in the lag table

	mu      sync.Mutex // serialises writers of the texts in cells
	name    string
	enabled bool
	status  string
	lastErr *LastError
	version string
}

// NewConnector registers the connector's families in reg and returns the series of connector key
// of kind "sink" or "source", kept in this process's memory. A nil reg keeps the families
// unregistered. It panics on an invalid kind, as prometheus.MustRegister does on bad input;
// TryNewConnector returns the error instead.
func NewConnector(reg prometheus.Registerer, key, kind string) *Connector {
	c, err := TryNewConnector(reg, key, kind)
	if err != nil {
		panic(err)
	}
	return c
}

// TryNewConnector is NewConnector returning errors instead of panicking.
func TryNewConnector(reg prometheus.Registerer, key, kind string) (*Connector, error) {
	if kind != KindSink && kind != KindSource {
		return nil, fmt.Errorf("connector %q: kind %q: %w", key, kind, ErrInvalidKind)
	}
	return newConnector(reg, key, kind, new(cells), nil)
}

// AttachConnector is NewConnector over the figures of page: counters and histograms go on from
// what earlier runners of the connector left there; the status starts over at starting, and the
// page records this process as the connector's runner.
func AttachConnector(reg prometheus.Registerer, page *Page) (*Connector, error) {
	return newConnector(reg, page.key, page.kind, page.c, page)
}

func newConnector(reg prometheus.Registerer, key, kind string, c *cells, page *Page) (*Connector, error) {
	m := &Connector{
		key: key, kind: kind, c: c, page: page, labels: newSeriesLabels(key, kind),
		startTime: time.Now(),
		process:   NewSampler(),
		name:      key,
		version:   "unknown",
		enabled:   true,
		status:    StatusStarting,
		lagIndex:  map[lagKey]int{},
	}
	if reg != nil {
		if err := reg.Register(connectorCollector{m}); err != nil {
			return nil, fmt.Errorf("connector %q: register metric families: %w", key, err)
		}
	}
	c.lag.reset()
	c.pid.Store(uint64(os.Getpid()))
	c.startTime.Store(uint64(m.startTime.UnixMicro()))
	c.beat()
	c.publish(m.status, nil, m.version)
	return m, nil
}

// Key returns the connector key.
func (c *Connector) Key() string { return c.key }

// Kind returns "sink" or "source".
func (c *Connector) Kind() string { return c.kind }

// AddProduced counts messages a source plugin handed over (before decoding).
// The series is created even for n = 0, as upstream does.
func (c *Connector) AddProduced(n uint64) { c.c.add(counterProduced, n) }

// AddSent counts messages a source sent to Iggy.
func (c *Connector) AddSent(n uint64) { c.c.add(counterSent, n) }

// AddConsumed counts messages a sink took from Iggy (one flushed batch).
func (c *Connector) AddConsumed(n uint64) { c.c.add(counterConsumed, n) }

// AddProcessed counts messages handed to the sink plugin.
func (c *Connector) AddProcessed(n uint64) { c.c.add(counterProcessed, n) }

// AddFiltered counts messages a transform dropped; n = 0 creates no series.
func (c *Connector) AddFiltered(n uint64) {
	if n > 0 {
		c.c.add(counterFiltered, n)
	}
}

// AddDeadLettered counts n records dead-lettered at stage (one of DeadLetterStages; others are
// ignored).
func (c *Connector) AddDeadLettered(stage string, n uint64) {
	if i := deadLetterStageIndex(stage); i >= 0 && n > 0 {
		c.c.deadLettered[i].Add(n)
		c.c.create(deadLetterSeries(i))
	}
}

// AddLogLinesDropped counts plugin log lines dropped over the runner's limit.
func (c *Connector) AddLogLinesDropped(n uint64) { c.c.logLinesDropped.Add(n) }

// AddTapDropped counts tap events dropped because a tap client's buffer was full (pkg/tap).
func (c *Connector) AddTapDropped(n uint64) { c.c.tapDropped.Add(n) }

// ShowDeadLettered puts messages_dead_lettered (0) in /stats before anything was dead-lettered.
func (c *Connector) ShowDeadLettered() { c.c.create(deadLettersShown) }

// IncErrors counts one error.
func (c *Connector) IncErrors() { c.c.add(counterErrors, 1) }

// AddErrors counts n errors at once (per-batch sums); n = 0 creates no series.
func (c *Connector) AddErrors(n uint64) {
	if n > 0 {
		c.c.add(counterErrors, n)
	}
}

// CreateErrorSeries creates the errors series at 0 if absent: upstream does
// so whenever a source starts forwarding (§4.3.3).
func (c *Connector) CreateErrorSeries() { c.c.create(counterErrors) }

// ObserveStage records one batch stage duration. Only the Stage* constants are stages (the shared
// layout has a fixed set); another name is ignored.
func (c *Connector) ObserveStage(stage string, d time.Duration) {
	for i := range knownStages {
		if knownStages[i] == stage {
			c.c.observe(i, d.Seconds())
			return
		}
	}
}

// Beat records that this runner is alive; KeepBeating calls it every HeartbeatEvery.
func (c *Connector) Beat() { c.c.beat() }

// KeepBeating beats every HeartbeatEvery until ctx ends. The supervisor takes a page whose beat
// is older than its runner timeout for a runner that does not answer.
func (c *Connector) KeepBeating(ctx context.Context) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		c.c.beat()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SetInfo sets the display name, the version the plugin reports
// ("unknown" when it could not be loaded) and the enabled flag.
func (c *Connector) SetInfo(name, version string, enabled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := version != c.version
	c.name, c.version, c.enabled = name, version, enabled
	if changed {
		c.c.publish(c.status, c.lastErr, c.version)
	}
}

// SetStatus moves the connector to status; running and stopped clear the
// last error, the other statuses keep it (docs/http-api.md §5.2).
func (c *Connector) SetStatus(status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = status
	if status == StatusRunning || status == StatusStopped {
		c.lastErr = nil
	}
	c.c.publish(c.status, c.lastErr, c.version)
}

// SetError moves the connector to status error with message as last_error.
func (c *Connector) SetError(message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = StatusError
	c.lastErr = &LastError{Message: message, Timestamp: uint64(time.Now().UnixMicro())}
	c.c.publish(c.status, c.lastErr, c.version)
}

// PublishStatus sets the status and last error (nil: none) as they are, for callers that keep
// their own status rules.
func (c *Connector) PublishStatus(status string, le *LastError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = status
	c.lastErr = nil
	if le != nil {
		copied := *le
		c.lastErr = &copied
	}
	c.c.publish(c.status, c.lastErr, c.version)
}

// Status returns the current status and last error (nil when none).
func (c *Connector) Status() (string, *LastError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil {
		return c.status, nil
	}
	le := *c.lastErr
	return c.status, &le
}

// Families renders the connector's series that exist (upstream creates series lazily).
func (c *Connector) Families() []*dto.MetricFamily { return c.c.families(c.labels) }

// Snapshot returns the connector's /stats object. Like upstream it creates
// the kind's counter series at 0 when absent (§4.3.3). Process figures are
// this process's: the runner hosts exactly one connector. cpu_usage is the
// share since the previous Snapshot (0 on the first call).
func (c *Connector) Snapshot() ConnectorStats {
	s := c.c.stats(c.key, c.kind, true)
	c.mu.Lock()
	s.Name, s.Enabled, s.Status = c.name, c.enabled, c.status
	s.LastError = nil
	if c.lastErr != nil {
		le := *c.lastErr
		s.LastError = &le
	}
	c.mu.Unlock()
	s.PID = int32(os.Getpid())
	if p, err := c.process.Process(s.PID); err == nil {
		s.MemoryUsage = p.RSS
		s.CPUUsage = Float32(p.CPUUsage)
	}
	return s
}

// connectorCollector exposes a Connector's families through a prometheus.Registry. It describes
// nothing up front (an unchecked collector), so the connectors of one registry share its families.
type connectorCollector struct{ c *Connector }

func (connectorCollector) Describe(chan<- *prometheus.Desc) {}

func (cc connectorCollector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range cc.c.Families() {
		var labels []string
		if len(f.Metric) > 0 {
			for _, l := range f.Metric[0].Label {
				labels = append(labels, l.GetName())
			}
		}
		desc := prometheus.NewDesc(f.GetName(), f.GetHelp(), labels, nil)
		for _, m := range f.Metric {
			ch <- gatheredMetric{desc: desc, m: m}
		}
	}
}

// gatheredMetric is an already rendered series handed to a registry.
type gatheredMetric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (g gatheredMetric) Desc() *prometheus.Desc { return g.desc }

func (g gatheredMetric) Write(out *dto.Metric) error {
	out.Label, out.Counter, out.Histogram, out.Gauge = g.m.Label, g.m.Counter, g.m.Histogram, g.m.Gauge
	return nil
}

// Shared reports whether the figures live in a Page (and so outlive this process).
func (c *Connector) Shared() bool { return c.page != nil }
