package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Runtime is the runtime-level set the supervisor exposes (docs/http-api.md
// §4.3.1): the four connector-count gauges, plus iggy_connector_up and
// iggy_connector_restarts_total (docs/architecture.md, decision 10) and
// iggy_connector_state (docs/architecture.md, decision 13). Runners do not register it, so merging
// their families never clashes with it.
type Runtime struct {
	sourcesTotal, sourcesRunning, sinksTotal, sinksRunning prometheus.Gauge

	up       *prometheus.GaugeVec
	restarts *prometheus.CounterVec
	state    *StateGauge

	// Ours (docs/runtime-changes.md): rolled-back activations, and the restart limit reached.
	rollbacks    *prometheus.CounterVec
	limitReached *prometheus.GaugeVec
}

// NewRuntime registers the runtime set in reg (nil: unregistered). It
// panics when reg already holds one of the names, as MustRegister does.
func NewRuntime(reg prometheus.Registerer) *Runtime {
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	labels := []string{LabelConnectorKey, LabelConnectorType}
	r := &Runtime{
		sourcesTotal:   gauge(FamilySourcesTotal, helpSourcesTotal),
		sourcesRunning: gauge(FamilySourcesRunning, helpSourcesRunning),
		sinksTotal:     gauge(FamilySinksTotal, helpSinksTotal),
		sinksRunning:   gauge(FamilySinksRunning, helpSinksRunning),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: FamilyConnectorUp, Help: helpConnectorUp,
		}, labels),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: FamilyConnectorRestarts, Help: helpConnectorRestarts,
		}, labels),
	}
	if reg != nil {
		reg.MustRegister(r.sourcesTotal, r.sourcesRunning, r.sinksTotal, r.sinksRunning, r.up, r.restarts)
	}
	r.state = NewStateGauge(reg)
	r.rollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: FamilyConfigRollbacks, Help: helpConfigRollbacks}, labels)
	r.limitReached = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: FamilyRestartLimitReached, Help: helpRestartLimit}, labels)
	if reg != nil {
		reg.MustRegister(r.rollbacks, r.limitReached)
	}
	return r
}

// IncRollbacks counts one rolled-back activation of connector key. The family has no series
// until the first one.
func (r *Runtime) IncRollbacks(key, kind string) { r.rollbacks.WithLabelValues(key, kind).Inc() }

// SetRestartLimitReached records whether the supervisor gave up restarting connector key. Only a
// supervisor with a restart limit calls it, so without one the family has no series.
func (r *Runtime) SetRestartLimitReached(key, kind string, reached bool) {
	v := 0.0
	if reached {
		v = 1
	}
	r.limitReached.WithLabelValues(key, kind).Set(v)
}

// SetTotals sets the configured-connector gauges; upstream sets them once
// at boot to the number of configs, disabled and failed ones included.
func (r *Runtime) SetTotals(sources, sinks uint32) {
	r.sourcesTotal.Set(float64(sources))
	r.sinksTotal.Set(float64(sinks))
}

// SetRunning sets the running gauges (callers counting statuses themselves).
func (r *Runtime) SetRunning(sources, sinks uint32) {
	r.sourcesRunning.Set(float64(sources))
	r.sinksRunning.Set(float64(sinks))
}

// IncRunning counts a transition of a connector of kind into running.
func (r *Runtime) IncRunning(kind string) { r.running(kind).Inc() }

// DecRunning counts a transition of a connector of kind out of running.
func (r *Runtime) DecRunning(kind string) { r.running(kind).Dec() }

func (r *Runtime) running(kind string) prometheus.Gauge {
	if kind == KindSource {
		return r.sourcesRunning
	}
	return r.sinksRunning
}

// Counts returns the four gauges for /stats.
func (r *Runtime) Counts() (sourcesTotal, sourcesRunning, sinksTotal, sinksRunning uint32) {
	return gaugeValue(r.sourcesTotal), gaugeValue(r.sourcesRunning), gaugeValue(r.sinksTotal), gaugeValue(r.sinksRunning)
}

// SetUp records whether the runner of connector key answers.
func (r *Runtime) SetUp(key, kind string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	r.up.WithLabelValues(key, kind).Set(v)
}

// Forget drops the up and state series of connector key: it is gone (an attached fleet's
// connector whose last runner left discovery).
func (r *Runtime) Forget(key, kind string) {
	r.up.DeleteLabelValues(key, kind)
	r.limitReached.DeleteLabelValues(key, kind)
	r.state.vec.DeletePartialMatch(prometheus.Labels{LabelConnectorKey: key, LabelConnectorType: kind})
}

// SetState records the lifecycle state of connector key (iggy_connector_state).
func (r *Runtime) SetState(key, kind, state string) { r.state.Set(key, kind, state) }

// IncRestarts counts one restart of the runner of connector key, and
// returns the new total.
func (r *Runtime) IncRestarts(key, kind string) uint64 {
	c := r.restarts.WithLabelValues(key, kind)
	c.Inc()
	var m dto.Metric
	_ = c.Write(&m) // a plain counter's Write cannot fail
	return uint64(m.GetCounter().GetValue())
}

func gaugeValue(g prometheus.Gauge) uint32 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		return 0
	}
	v := m.GetGauge().GetValue()
	if v < 0 { // upstream's gauges are i64 cast to u32; a negative count means a bookkeeping bug
		return 0
	}
	return uint32(v)
}
