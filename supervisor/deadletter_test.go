package supervisor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func poisonMessages(t *testing.T, n int, poison map[int]bool) []iggcon.IggyMessage {
	t.Helper()
	msgs := make([]iggcon.IggyMessage, n)
	for i := range msgs {
		payload := fmt.Sprintf(`{"n":%d}`, i)
		if poison[i] {
			payload = fmt.Sprintf(`{"n":%d,"kind":"POISON"}`, i)
		}
		m, err := iggcon.NewIggyMessage([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = m
	}
	return msgs
}

// startPoisonedSink starts a supervisor with one fault sink that refuses any batch holding POISON,
// over demo/events filled with n messages, and the given [error_handling] section.
func startPoisonedSink(t *testing.T, key string, n, batchLength int, poison map[int]bool, errorHandling string) *testkit.SupervisorProc {
	t.Helper()
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.SendMessages(t, broker, "demo", "events", poisonMessages(t, n, poison))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	file := strings.Replace(sinkFile(key, f.plugin("fault"), "demo", "events", ""), "batch_length = 50", fmt.Sprintf("batch_length = %d", batchLength), 1)
	f.write(t, "connectors/"+key+".toml", file+
		"\n[plugin_config]\nfail_payload_contains = \"POISON\"\n\n[error_handling]\n"+errorHandling)
	return testkit.StartSupervisor(t, f.dir, f.env("IGGY_SUPERVISOR_HEALTH_INTERVAL=1s"), waitLong)
}

// With tolerance = "all" a poison record costs no restart: the rest is processed, the poison
// ones are dead-lettered, and /stats and /metrics count them.
func TestPoisonRecordsCostNoRestart(t *testing.T) {
	p := startPoisonedSink(t, "tolerant", 300, 50, map[int]bool{7: true, 260: true},
		"tolerance = \"all\"\nmax_retries = 1\nretry_backoff = \"1 ms\"\ndead_letter_stream = \"dlq\"\ndead_letter_topic = \"tolerant_dlq\"\n")
	waitFor(t, p, waitLong, "298 processed and 2 dead-lettered", func() bool {
		c := statsOf(t, p, nil)["sink/tolerant"]
		return testkit.OrZero(c.MessagesProcessed) == 298 && testkit.OrZero(c.MessagesDeadLettered) == 2
	})
	if c := statsOf(t, p, nil)["sink/tolerant"]; c.Restarts != 0 || c.Status != "running" {
		t.Fatalf("restarts %d status %s; want 0 and running", c.Restarts, c.Status)
	}
	_, body, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := testkit.RequireMetric(t, string(body), `iggy_connector_dead_lettered_total{connector_key="tolerant",connector_type="sink",stage="consume"}`); v != 2 {
		t.Fatalf("/metrics dead_lettered = %v, want 2", v)
	}
}

// With tolerance = "none" the poison record fails the sink on every run, as before; the
// connector's last_error names the stream, topic, partition and offset to look at.
func TestPoisonRecordIsNamedWithToleranceNone(t *testing.T) {
	p := startPoisonedSink(t, "strict", 10, 1, map[int]bool{3: true}, "tolerance = \"none\"\nmax_retries = 0\n")
	waitFor(t, p, waitLong, "a restart and the error naming offset 3 again", func() bool {
		c := statsOf(t, p, nil)["sink/strict"]
		return c.Restarts >= 1 && c.Status == "error" && c.LastError != nil &&
			strings.Contains(c.LastError.Message, `failed again on the same offset after a restart`) &&
			strings.Contains(c.LastError.Message, `stream "demo", topic "events", partition 0, offset 3; batch of 1 up to offset 3`)
	})
	if c := statsOf(t, p, nil)["sink/strict"]; testkit.OrZero(c.MessagesProcessed) != 3 || c.MessagesDeadLettered != nil {
		t.Fatalf("processed %d, dead-lettered %v; want the 3 records before the poison one and no dead letters", testkit.OrZero(c.MessagesProcessed), c.MessagesDeadLettered)
	}
}
