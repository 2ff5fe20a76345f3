package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// rateState is GET /rate_limit.
type rateState struct {
	Limit            map[string]*float64 `json:"limit"`
	Configured       map[string]*float64 `json:"configured"`
	ThrottledSeconds float64             `json:"throttled_seconds"`
}

func readRate(t *testing.T, body []byte) rateState {
	t.Helper()
	var s rateState
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("rate limit answer %s: %v", body, err)
	}
	return s
}

func throttled(t *testing.T, p *testkit.RunnerProc) float64 {
	t.Helper()
	s := p.Stats(t)
	if s.ThrottledSeconds == nil {
		t.Fatalf("/stats of a connector with a rate limit has no throttled_seconds")
	}
	return *s.ThrottledSeconds
}

// A sink's [rate_limit] holds it back before its plugin: it waits (throttled_seconds grows, and
// /metrics counts it) while a backlog waits in the topic; PUT /rate_limit lifting the limit lets
// the whole backlog through at once, which at the configured 1 message a second would take over a
// minute; every message reaches the plugin exactly once.
func TestSinkRateLimitChangedAtRunTime(t *testing.T) { testkit.OverProtocols(t, sinkRateLimit) }

func sinkRateLimit(t *testing.T, protocol string) {
	const total = 100
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", total)
	p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()), sinkTOML("slow", testkit.PluginPath(t, "stdout_sink"), "demo", "events",
		"batch_length = 50\npoll_interval = \"1ms\"", "print_payload = true")+"\n[rate_limit]\nmessages_per_second = 1\n"))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "the limiter to hold the sink back", func() bool {
		return testkit.OrZero(p.Stats(t).MessagesProcessed) >= 1 && throttled(t, p) > 0
	})
	if v, ok := testkit.MetricValue(p.Metrics(t), `iggy_connector_throttled_seconds_total{connector_key="slow",connector_type="sink"}`); !ok || v <= 0 {
		t.Fatalf("iggy_connector_throttled_seconds_total = %v (%v), want > 0", v, ok)
	}
	s := readRate(t, mustGet(t, p, "/rate_limit"))
	if m := s.Limit["messages_per_second"]; m == nil || *m != 1 || s.Configured["messages_per_second"] == nil || s.Limit["bytes_per_second"] != nil {
		t.Fatalf("GET /rate_limit = %+v", s)
	}
	if processed := testkit.OrZero(p.Stats(t).MessagesProcessed); processed >= total/2 {
		t.Fatalf("%d of %d messages went through a limit of 1 a second", processed, total)
	}

	s = readRate(t, putJSON(t, p, "/rate_limit", `{}`, http.StatusOK))
	if s.Limit["messages_per_second"] != nil || s.Configured["messages_per_second"] == nil {
		t.Fatalf("PUT {} answered %+v", s)
	}
	p.WaitUntil(t, waitLong, "the backlog to go through without the limit", func() bool {
		return testkit.OrZero(p.Stats(t).MessagesProcessed) >= total
	})
	putJSON(t, p, "/rate_limit", `{"messages_per_second": -1}`, http.StatusBadRequest)
	if s := readRate(t, putJSON(t, p, "/rate_limit", `null`, http.StatusOK)); s.Limit["messages_per_second"] == nil {
		t.Fatalf("reset to the configured limit: %+v", s)
	}
	stopRunner(t, p)
	seen := offsetsSeen(p.Logs())
	for off := uint64(0); off < total; off++ {
		if seen[off] != 1 {
			t.Fatalf("offset %d reached the plugin %d times, want once", off, seen[off])
		}
	}
}

// A source's [rate_limit] holds its batches back before they are sent (bytes this time, from the
// environment override): it waits, and everything it produced arrives in order without a gap.
func TestSourceRateLimit(t *testing.T) { testkit.OverProtocols(t, sourceRateLimit) }

func sourceRateLimit(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnvOver(protocol, srv, t.TempDir()), sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events",
		"", "messages_per_batch = 10\ninterval_ms = 0\nmax_messages = 200\npayload_size = 100")),
		"IGGY_CONNECTORS_SOURCE_GEN_RATE_LIMIT_BYTES_PER_SECOND=4000")
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "the source to wait for its limit", func() bool {
		return testkit.OrZero(p.Stats(t).MessagesSent) >= 20 && throttled(t, p) > 0
	})
	if s := readRate(t, mustGet(t, p, "/rate_limit")); s.Limit["bytes_per_second"] == nil || *s.Limit["bytes_per_second"] != 4000 {
		t.Fatalf("GET /rate_limit = %+v", s)
	}
	putJSON(t, p, "/rate_limit", `{"messages_per_second": 1000000}`, http.StatusOK)
	p.WaitUntil(t, waitLong, "every message to be sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= 200 })
	stopRunner(t, p)
	maxSeq, _ := checkSequence(t, readTopic(t, srv, "demo", "events"), 10)
	if maxSeq != 199 {
		t.Fatalf("highest sequence %d, want 199", maxSeq)
	}
	if !strings.Contains(p.Logs(), "rate limit changed") {
		t.Errorf("the change is not logged:\n%s", p.Logs())
	}
}
