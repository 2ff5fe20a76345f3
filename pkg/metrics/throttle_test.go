package metrics_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// Time a runner waited for its rate limit shows in the supervisor's view of the page: absent for a
// connector without a limit, 0 once it has one, then the seconds waited, in /stats and /metrics.
func TestPageThrottled(t *testing.T) {
	supervisorSide := newPage(t, "rl", metrics.KindSink)
	runnerSide := attach(t, prometheus.NewRegistry(), openPage(t, supervisorSide.Path(), "rl", metrics.KindSink))

	openMetrics := func() string {
		t.Helper()
		var text bytes.Buffer
		if err := metrics.WriteOpenMetrics(&text, supervisorSide.Families()); err != nil {
			t.Fatal(err)
		}
		return text.String()
	}
	body, _ := json.Marshal(supervisorSide.Stats(true))
	if bytes.Contains(body, []byte("throttled")) || strings.Contains(openMetrics(), "throttled") {
		t.Fatalf("a connector without a rate limit shows the time throttled: %s\n%s", body, openMetrics())
	}
	runnerSide.ShowThrottled()
	if got := supervisorSide.Stats(true).ThrottledSeconds; got == nil || *got != 0 {
		t.Fatalf("throttled_seconds after ShowThrottled = %v, want 0", got)
	}
	runnerSide.AddThrottled(1500 * time.Millisecond)
	runnerSide.AddThrottled(-time.Second) // ignored
	if got := supervisorSide.Stats(true).ThrottledSeconds; got == nil || *got != 1.5 {
		t.Fatalf("throttled_seconds = %v, want 1.5", got)
	}
	want := "# HELP iggy_connector_throttled_seconds Seconds the connector waited for its rate limit ([rate_limit]).\n" +
		"# TYPE iggy_connector_throttled_seconds counter\n" +
		"iggy_connector_throttled_seconds_total{connector_key=\"rl\",connector_type=\"sink\"} 1.5\n# EOF\n"
	if text := openMetrics(); !strings.HasSuffix(text, want) {
		t.Fatalf("/metrics:\n%s\nwant it to end with:\n%s", text, want)
	}
	// Replicas of one connector (attach mode) sum their times.
	a, b := 1.5, 2.0
	sum := metrics.SumReplicas([]metrics.ConnectorStats{{ThrottledSeconds: &a}, {}, {ThrottledSeconds: &b}})
	if sum.ThrottledSeconds == nil || *sum.ThrottledSeconds != 3.5 {
		t.Fatalf("SumReplicas throttled_seconds = %v, want 3.5", sum.ThrottledSeconds)
	}
	if none := metrics.SumReplicas([]metrics.ConnectorStats{{}, {}}); none.ThrottledSeconds != nil {
		t.Fatalf("SumReplicas of replicas without a limit shows %v", *none.ThrottledSeconds)
	}
}
