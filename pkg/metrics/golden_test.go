package metrics_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// upstreamExposition is the body upstream's runtime serves for the state
// built in TestExpositionIsUpstreamsBytes, written out by hand from
// docs/http-api.md §4.3: families in registration order, help with a period,
// counters with _total samples and integer values, empty labelled families
// as two comment lines, histogram _sum, _count, then buckets with le in
// dtoa style.
const upstreamExposition = `# HELP iggy_connectors_sources_total Total configured source connectors.
# TYPE iggy_connectors_sources_total gauge
iggy_connectors_sources_total 2
# HELP iggy_connectors_sources_running Sources in Running status.
# TYPE iggy_connectors_sources_running gauge
iggy_connectors_sources_running 0
# HELP iggy_connectors_sinks_total Total configured sink connectors.
# TYPE iggy_connectors_sinks_total gauge
iggy_connectors_sinks_total 1
# HELP iggy_connectors_sinks_running Sinks in Running status.
# TYPE iggy_connectors_sinks_running gauge
iggy_connectors_sinks_running 1
# HELP iggy_connector_messages_produced Messages received from source plugin poll.
# TYPE iggy_connector_messages_produced counter
# HELP iggy_connector_messages_sent Messages sent to Iggy (source).
# TYPE iggy_connector_messages_sent counter
# HELP iggy_connector_messages_consumed Messages consumed from Iggy (sink).
# TYPE iggy_connector_messages_consumed counter
iggy_connector_messages_consumed_total{connector_key="pg_main",connector_type="sink"} 800
# HELP iggy_connector_messages_processed Messages processed and sent to sink plugin.
# TYPE iggy_connector_messages_processed counter
iggy_connector_messages_processed_total{connector_key="pg_main",connector_type="sink"} 795
# HELP iggy_connector_messages_filtered Messages intentionally dropped by transforms returning Ok(None).
# TYPE iggy_connector_messages_filtered counter
# HELP iggy_connector_errors Errors encountered.
# TYPE iggy_connector_errors counter
iggy_connector_errors_total{connector_key="pg_main",connector_type="sink"} 5
# HELP iggy_connector_stage_duration_seconds Per-batch processing stage duration in seconds.
# TYPE iggy_connector_stage_duration_seconds histogram
iggy_connector_stage_duration_seconds_sum{connector_key="pg_main",connector_type="sink",stage="ffi"} 0.0005
iggy_connector_stage_duration_seconds_count{connector_key="pg_main",connector_type="sink",stage="ffi"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.00005"} 0
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.0001"} 0
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.00025"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.0005"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.001"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.005"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.01"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.05"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.1"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.25"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.5"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="1.0"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="5.0"} 2
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="+Inf"} 2
# EOF
`

func TestExpositionIsUpstreamsBytes(t *testing.T) {
	reg := prometheus.NewRegistry()
	rt := metrics.NewRuntime(reg)
	rt.SetTotals(2, 1)
	rt.IncRunning(metrics.KindSink)
	c := metrics.NewConnector(reg, "pg_main", metrics.KindSink)
	c.AddConsumed(800)
	c.AddProcessed(795)
	c.AddErrors(5)
	c.ObserveStage(metrics.StageFFI, 250*time.Microsecond)
	c.ObserveStage(metrics.StageFFI, 250*time.Microsecond)
	// The supervisor's additions (up, restarts) have no series yet, so the
	// body holds upstream's families only.

	_, body := get(t, serve(t, metrics.Handler(reg, nil)), nil)
	if !bytes.Equal(body, []byte(upstreamExposition)) {
		t.Fatalf("exposition differs from upstream's\n got:\n%s\nwant:\n%s", body, upstreamExposition)
	}
}
