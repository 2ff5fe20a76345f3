package runner

import (
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// connMetrics adapts the pumps' per-batch counts to pkg/metrics (an atomic add per count, sums
// added once per batch).
type connMetrics struct {
	c *metrics.Connector
	// previousError is the last_error the connector's previous runner left in the stats page ("" when
	// none), so a failure that repeats after a restart can say so.
	previousError string
}

// newConnMetrics keeps the connector's figures in the stats page at pagePath, which the supervisor
// created and reads (so they outlive this process), or in this process's memory when pagePath is
// empty (a standalone runner).
func newConnMetrics(reg prometheus.Registerer, key, kind, pagePath string) (*connMetrics, error) {
	// The process's own memory and CPU, read at scrape time (the supervisor shows its runners'
	// figures from its own sample instead, so these are never merged twice).
	self := func() []metrics.ConnectorProcess {
		p, err := metrics.ReadProcess(int32(os.Getpid()))
		if err != nil {
			return nil
		}
		return []metrics.ConnectorProcess{{Key: key, Kind: kind, Process: p}}
	}
	if err := metrics.RegisterResources(reg, self); err != nil {
		return nil, err
	}
	if pagePath == "" {
		c, err := metrics.TryNewConnector(reg, key, kind)
		return &connMetrics{c: c}, err
	}
	page, err := metrics.OpenPage(pagePath, key, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runnerproc.EnvStatsPage, err)
	}
	var previous string
	if le := page.Stats(false).LastError; le != nil {
		previous = le.Message
	}
	// The page stays mapped for the life of the process.
	c, err := metrics.AttachConnector(reg, page)
	return &connMetrics{c: c, previousError: previous}, err
}

func (m *connMetrics) consumed(n int)                     { m.c.AddConsumed(uint64(n)) }
func (m *connMetrics) processed(n int)                    { m.c.AddProcessed(uint64(n)) }
func (m *connMetrics) produced(n int)                     { m.c.AddProduced(uint64(n)) }
func (m *connMetrics) sent(n int)                         { m.c.AddSent(uint64(n)) }
func (m *connMetrics) filtered(n int)                     { m.c.AddFiltered(uint64(n)) }
func (m *connMetrics) errors(n int)                       { m.c.AddErrors(uint64(n)) }
func (m *connMetrics) stage(name string, d time.Duration) { m.c.ObserveStage(name, d) }

// Health is the /health body: upstream's constant {"status":"healthy"} plus, additively, this
// connector's key, type and status (the supervisor and orchestrators probe it).
type Health struct {
	Status          string `json:"status"`
	Key             string `json:"key"`
	ConnectorType   string `json:"connector_type"`
	ConnectorStatus Status `json:"connector_status"`
	// Role is "active" or "standby" for a source whose replicas share a lease (state backend
	// iggy); absent otherwise.
	Role string `json:"role,omitempty"`
}

// Health reports the endpoint as healthy together with the connector status.
func (r *Runner) Health() Health {
	st, _ := r.status.get()
	h := Health{Status: "healthy", Key: r.spec.Key, ConnectorType: r.spec.Kind, ConnectorStatus: st}
	if r.sharedState() {
		h.Role = "standby"
		if r.active.Load() {
			h.Role = "active"
		}
	}
	return h
}

// Ready reports whether the connector is active and running: what a readiness probe asks
// (GET /ready). A standby, paused, starting, stopping or failed connector is not ready.
func (r *Runner) Ready() bool {
	st, _ := r.status.get()
	return st == StatusRunning && (!r.sharedState() || r.active.Load()) && !r.iggyDown.Load()
}

// publishStatus mirrors a status change (and the plugin version known by then) into the
// connector's figures, where the supervisor reads them.
func (r *Runner) publishStatus(st Status, le *LastError) {
	r.metrics.c.SetInfo(r.spec.Name, r.pluginVersion.Load().(string), r.spec.Enabled)
	var mle *metrics.LastError
	if le != nil {
		mle = &metrics.LastError{Message: le.Message, Timestamp: le.Timestamp}
	}
	r.metrics.c.PublishStatus(string(st), mle)
	r.state.Set(r.spec.Key, r.spec.Kind, string(st))
}

// Stats is this connector's /stats object (docs/http-api.md §4.2) with the additive fields of decision
// 10: pid, status, last_error, start and run time, and the process's memory and cpu.
func (r *Runner) Stats() metrics.ConnectorStats {
	st, le := r.status.get()
	r.metrics.c.SetInfo(r.spec.Name, r.pluginVersion.Load().(string), r.spec.Enabled)
	r.procMu.Lock()
	s := r.metrics.c.Snapshot()
	r.procMu.Unlock()
	s.Status = string(st)
	s.LastError = nil
	if le != nil {
		s.LastError = &metrics.LastError{Message: le.Message, Timestamp: le.Timestamp}
	}
	return s
}
