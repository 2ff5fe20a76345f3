package metrics

import "github.com/prometheus/client_golang/prometheus"

// ConnectorStates are the values of the state label of FamilyConnectorState, kube-state-metrics
// style: every connector has one series per state, 1 for its current state and 0 for the others,
// so an alert can match state="paused" without knowing which states exist. "standby" belongs to
// active/standby sources (docs/architecture.md, decision 15); "failed" to the supervisor's restart limit.
var ConnectorStates = []string{StatusStarting, StatusRunning, StatusPaused, StatusStopping, StatusStopped, StatusError, StatusStandby, StatusFailed}

// StateGauge is the iggy_connector_state family: the supervisor's for every connector, a runner's
// for its own.
type StateGauge struct{ vec *prometheus.GaugeVec }

// NewStateGauge registers the family in reg (nil: unregistered); it panics when reg already
// holds the name, as MustRegister does.
func NewStateGauge(reg prometheus.Registerer) *StateGauge {
	g := &StateGauge{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: FamilyConnectorState, Help: helpConnectorState,
	}, []string{LabelConnectorKey, LabelConnectorType, LabelState})}
	if reg != nil {
		reg.MustRegister(g.vec)
	}
	return g
}

// Set makes state the current state of connector key of kind: its series is 1, every other
// state's 0. A state outside ConnectorStates (nothing published yet) leaves every series at 0.
func (g *StateGauge) Set(key, kind, state string) {
	for _, s := range ConnectorStates {
		v := 0.0
		if s == state {
			v = 1
		}
		g.vec.WithLabelValues(key, kind, s).Set(v)
	}
}
