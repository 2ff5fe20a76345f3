package metrics_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// Dead-lettered records counted by the runner show in the supervisor's view of the page: a
// counter family per stage after upstream's families, and messages_dead_lettered in /stats.
func TestPageDeadLettered(t *testing.T) {
	supervisorSide := newPage(t, "dl", metrics.KindSink)
	runnerSide := attach(t, prometheus.NewRegistry(), openPage(t, supervisorSide.Path(), "dl", metrics.KindSink))

	before := supervisorSide.Stats(true)
	if before.MessagesDeadLettered != nil {
		t.Fatalf("messages_dead_lettered shown before anything asked for it: %d", *before.MessagesDeadLettered)
	}
	body, _ := json.Marshal(before)
	if bytes.Contains(body, []byte("dead_lettered")) {
		t.Fatalf("/stats object of a connector without dead letters: %s", body)
	}
	var text bytes.Buffer
	if err := metrics.WriteOpenMetrics(&text, supervisorSide.Families()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "dead_lettered") {
		t.Fatalf("/metrics of a connector without dead letters:\n%s", text.String())
	}

	runnerSide.ShowDeadLettered()
	if got := supervisorSide.Stats(true).MessagesDeadLettered; got == nil || *got != 0 {
		t.Fatalf("messages_dead_lettered after ShowDeadLettered = %v, want 0", got)
	}
	runnerSide.AddDeadLettered(metrics.DeadLetterConsume, 3)
	runnerSide.AddDeadLettered(metrics.DeadLetterDecode, 2)
	runnerSide.AddDeadLettered("nonsense", 9)
	if got := supervisorSide.Stats(true).MessagesDeadLettered; got == nil || *got != 5 {
		t.Fatalf("messages_dead_lettered = %v, want 5", got)
	}
	text.Reset()
	if err := metrics.WriteOpenMetrics(&text, supervisorSide.Families()); err != nil {
		t.Fatal(err)
	}
	want := "# HELP iggy_connector_dead_lettered Failed records sent to the dead-letter topic (or logged and skipped without one), by stage.\n" +
		"# TYPE iggy_connector_dead_lettered counter\n" +
		"iggy_connector_dead_lettered_total{connector_key=\"dl\",connector_type=\"sink\",stage=\"consume\"} 3\n" +
		"iggy_connector_dead_lettered_total{connector_key=\"dl\",connector_type=\"sink\",stage=\"decode\"} 2\n# EOF\n"
	if !strings.HasSuffix(text.String(), want) {
		t.Fatalf("/metrics:\n%s\nwant it to end with:\n%s", text.String(), want)
	}
}
