package runner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// connMetrics adapts the pumps' per-batch counts to pkg/metrics (series resolved once, sums added
// once per batch).
type connMetrics struct{ c *metrics.Connector }

func newConnMetrics(reg prometheus.Registerer, key, kind string) *connMetrics {
	return &connMetrics{c: metrics.NewConnector(reg, key, kind)}
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
}

// Health reports the endpoint as healthy together with the connector status.
func (r *Runner) Health() Health {
	st, _ := r.status.get()
	return Health{Status: "healthy", Key: r.spec.Key, ConnectorType: r.spec.Kind, ConnectorStatus: st}
}

// Stats is this connector's /stats object (http-api.md §4.2) with the additive fields of decision
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
