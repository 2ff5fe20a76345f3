package metrics

import "github.com/prometheus/client_golang/prometheus"

// Memory and CPU per connector, as families (not in upstream; /stats has the same figures as each
// connector's memory_usage and cpu_usage). A dashboard charts them from /metrics alone, in the
// supervisor's shape and in the one-container-per-connector shape alike.
const (
	FamilyConnectorMemory = "iggy_connector_memory_usage_bytes"
	FamilyConnectorCPU    = "iggy_connector_cpu_seconds_total"

	helpConnectorMemory = "Resident memory of the connector's runner process in bytes."
	helpConnectorCPU    = "User and system CPU time of the connector's current runner process in seconds."
)

// ConnectorProcess is one connector's process figures, labelled by its key and kind.
type ConnectorProcess struct {
	Key, Kind string
	Process   ProcessStats
}

// resources is a collector that reads the figures when scraped.
type resources struct {
	read        func() []ConnectorProcess
	memory, cpu *prometheus.Desc
}

// RegisterResources registers the memory and CPU families in reg; read is called on every scrape
// and returns the connectors whose process is live (others get no series).
func RegisterResources(reg prometheus.Registerer, read func() []ConnectorProcess) error {
	labels := []string{LabelConnectorKey, LabelConnectorType}
	return reg.Register(&resources{
		read:   read,
		memory: prometheus.NewDesc(FamilyConnectorMemory, helpConnectorMemory, labels, nil),
		cpu:    prometheus.NewDesc(FamilyConnectorCPU, helpConnectorCPU, labels, nil),
	})
}

func (r *resources) Describe(ch chan<- *prometheus.Desc) {
	ch <- r.memory
	ch <- r.cpu
}

func (r *resources) Collect(ch chan<- prometheus.Metric) {
	for _, p := range r.read() {
		ch <- prometheus.MustNewConstMetric(r.memory, prometheus.GaugeValue, float64(p.Process.RSS), p.Key, p.Kind)
		ch <- prometheus.MustNewConstMetric(r.cpu, prometheus.CounterValue, p.Process.CPUSeconds, p.Key, p.Kind)
	}
}
