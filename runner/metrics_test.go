package runner_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The runner's metrics endpoint serves upstream's exposition to a plain scrape (OpenMetrics text
// ending in "# EOF" under text/plain) and delimited protobuf to the supervisor's scrape, both with
// the same counts.
func TestMetricsEndpointServesUpstreamTextAndSupervisorProtobuf(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 25)
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("scraped", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "25 messages processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) == 25 })

	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", p.SocketPath)
	}}}
	resp, err := client.Get("http://runner/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != metrics.TextContentType {
		t.Errorf("plain scrape Content-Type %q, want upstream's %q", ct, metrics.TextContentType)
	}
	text := p.Metrics(t)
	if !strings.HasSuffix(text, "# EOF\n") {
		t.Errorf("text exposition does not end with # EOF:\n%s", text)
	}
	series := `iggy_connector_messages_processed_total{connector_key="scraped",connector_type="sink"}`
	if got := testkit.RequireMetric(t, text, series); got != 25 {
		t.Errorf("text %s = %v, want 25", series, got)
	}

	families, err := testkit.ScrapeMetrics(context.Background(), client, "http://runner/metrics")
	if err != nil {
		t.Fatalf("supervisor-style scrape: %v", err)
	}
	var processed float64 = -1
	for _, f := range families {
		if f.GetName() == "iggy_connector_messages_processed" || f.GetName() == "iggy_connector_messages_processed_total" {
			for _, m := range f.GetMetric() {
				processed = m.GetCounter().GetValue()
			}
		}
	}
	if processed != 25 {
		t.Errorf("protobuf scrape: messages processed = %v, want 25 (families %d)", processed, len(families))
	}
}
