package runner_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// errorHandling is an [error_handling] section with fast retries, appended to a connector file.
func errorHandling(extra string) string {
	return "\n[error_handling]\ntolerance = \"all\"\nmax_retries = 1\nretry_backoff = \"1 ms\"\nmax_retry_backoff = \"5 ms\"\n" + extra + "\n"
}

// dlqHeaders reads a dead-lettered message's headers as strings by key.
func dlqHeaders(t *testing.T, m iggcon.IggyMessage) map[string]string {
	t.Helper()
	hs, err := iggcon.DeserializeHeaders(m.UserHeaders)
	if err != nil {
		t.Fatalf("headers of offset %d: %v", m.Header.Offset, err)
	}
	out := map[string]string{}
	for _, h := range hs {
		out[string(h.Key.Value)] = string(h.Value.Value)
	}
	return out
}

func stringHeader(t *testing.T, key, value string) iggcon.HeaderEntry {
	t.Helper()
	k, err := iggcon.NewHeaderKeyString(key)
	if err != nil {
		t.Fatal(err)
	}
	return iggcon.HeaderEntry{Key: k, Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte(value)}}
}

// messagesWith builds n JSON messages {"n":i}; payload, when it returns non-nil, replaces one and
// gives it a user header trace=t<i>.
func messagesWith(t *testing.T, n int, payload func(i int) []byte) []iggcon.IggyMessage {
	t.Helper()
	msgs := make([]iggcon.IggyMessage, n)
	for i := range msgs {
		var err error
		if p := payload(i); p != nil {
			msgs[i], err = iggcon.NewIggyMessage(p, iggcon.WithUserHeaders([]iggcon.HeaderEntry{stringHeader(t, "trace", fmt.Sprintf("t%d", i))}))
		} else {
			msgs[i], err = iggcon.NewIggyMessage([]byte(fmt.Sprintf(`{"n":%d}`, i)))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return msgs
}

var faultConsumedLine = regexp.MustCompile(`Fault sink with ID: \d+ consumed batch \d+ with (\d+) messages`)

// deliveredToFault sums the messages of the batches the fault sink accepted.
func deliveredToFault(logs string) int {
	n := 0
	for _, m := range faultConsumedLine.FindAllStringSubmatch(logs, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// waitTopicLen waits until the topic holds n messages, then returns them.
func waitTopicLen(t *testing.T, p *testkit.RunnerProc, srv *devbroker.Server, stream, topic string, n int) []iggcon.IggyMessage {
	t.Helper()
	var msgs []iggcon.IggyMessage
	p.WaitUntil(t, waitLong, fmt.Sprintf("%d messages in %s/%s", n, stream, topic), func() bool {
		if _, err := srv.Messages(stream, topic); err != nil {
			return false
		}
		msgs = readTopic(t, srv, stream, topic)
		return len(msgs) >= n
	})
	return msgs
}

// The case: 1,000 records, 3 of which the plugin refuses. With tolerance = "all" the
// batch is bisected: the 997 good ones reach the plugin, exactly the 3 poison ones land in the
// dead-letter topic (on a stream that did not exist) with their payload, user headers and the
// iggy_dlq_* headers, and the runner keeps running.
func TestSinkDeadLettersPoisonRecords(t *testing.T) {
	testkit.OverProtocols(t, sinkDeadLettersPoisonRecords)
}

func sinkDeadLettersPoisonRecords(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	poison := map[int]bool{10: true, 500: true, 999: true}
	testkit.SendMessages(t, srv, "demo", "events", messagesWith(t, 1000, func(i int) []byte {
		if poison[i] {
			return []byte(fmt.Sprintf(`{"n":%d,"kind":"POISON"}`, i))
		}
		return nil
	}))
	toml := sinkTOML("poison", testkit.PluginPath(t, "fault"), "demo", "events", "", `fail_payload_contains = "POISON"`) +
		errorHandling(`dead_letter_stream = "dlq"`+"\n"+`dead_letter_topic = "poison_dlq"`)
	p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()), toml))
	p.WaitStatus(t, "running", waitLong)
	dead := waitTopicLen(t, p, srv, "dlq", "poison_dlq", 3)
	p.WaitUntil(t, waitLong, "997 records processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) == 997 })

	if len(dead) != 3 {
		t.Fatalf("%d records dead-lettered, want 3", len(dead))
	}
	for i, off := range []int{10, 500, 999} {
		m := dead[i]
		if want := fmt.Sprintf(`{"n":%d,"kind":"POISON"}`, off); string(m.Payload) != want {
			t.Errorf("dead letter %d: payload %s, want %s", i, m.Payload, want)
		}
		h := dlqHeaders(t, m)
		want := map[string]string{
			"trace": fmt.Sprintf("t%d", off), "iggy_dlq_connector_key": "poison", "iggy_dlq_stage": "consume",
			"iggy_dlq_stream": "demo", "iggy_dlq_topic": "events", "iggy_dlq_partition": "0", "iggy_dlq_offset": strconv.Itoa(off),
		}
		for k, v := range want {
			if h[k] != v {
				t.Errorf("dead letter %d: header %s = %q, want %q (all: %v)", i, k, h[k], v, h)
			}
		}
		if !strings.Contains(h["iggy_dlq_error"], "consume failed") {
			t.Errorf("dead letter %d: iggy_dlq_error %q", i, h["iggy_dlq_error"])
		}
		if ts, err := strconv.ParseInt(h["iggy_dlq_timestamp"], 10, 64); err != nil || time.Since(time.UnixMicro(ts)) > time.Minute {
			t.Errorf("dead letter %d: iggy_dlq_timestamp %q", i, h["iggy_dlq_timestamp"])
		}
	}
	if n := deliveredToFault(p.Logs()); n != 997 {
		t.Errorf("the plugin accepted %d records, want 997", n)
	}
	s := p.Stats(t)
	if testkit.OrZero(s.MessagesDeadLettered) != 3 || testkit.OrZero(s.MessagesConsumed) != 1000 {
		t.Errorf("stats: dead-lettered %v consumed %v, want 3 and 1000", s.MessagesDeadLettered, s.MessagesConsumed)
	}
	if want := `iggy_connector_dead_lettered_total{connector_key="poison",connector_type="sink",stage="consume"} 3`; !strings.Contains(p.Metrics(t), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, p.Metrics(t))
	}
	if p.Exited() || s.Status != "running" {
		t.Fatalf("runner exited or not running (%s); logs:\n%s", s.Status, p.Logs())
	}
}

// A record that fails to decode goes to the dead-letter topic as polled, stage decode; without a
// dead-letter topic it is counted and skipped.
func TestSinkDeadLettersDecodeFailures(t *testing.T) {
	for _, withTopic := range []bool{true, false} {
		t.Run(fmt.Sprintf("dead_letter_topic=%v", withTopic), func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
			testkit.SendMessages(t, srv, "demo", "events", messagesWith(t, 20, func(i int) []byte {
				if i%4 == 3 {
					return []byte(fmt.Sprintf(`{"n":%d,`, i)) // malformed
				}
				return nil
			}))
			extra := ""
			if withTopic {
				extra = `dead_letter_stream = "demo"` + "\n" + `dead_letter_topic = "events_dlq"`
			}
			toml := sinkTOML("undecodable", testkit.PluginPath(t, "fault"), "demo", "events", "", "") + errorHandling(extra)
			p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), toml))
			p.WaitStatus(t, "running", waitLong)
			p.WaitUntil(t, waitLong, "15 processed, 5 dead-lettered", func() bool {
				s := p.Stats(t)
				return testkit.OrZero(s.MessagesProcessed) == 15 && testkit.OrZero(s.MessagesDeadLettered) == 5
			})
			if want := `stage="decode"} 5`; !strings.Contains(p.Metrics(t), want) {
				t.Errorf("/metrics lacks %s", want)
			}
			if !withTopic {
				if _, err := srv.Messages("demo", "events_dlq"); err == nil {
					t.Fatal("a dead-letter topic was created though none is configured")
				}
				return
			}
			dead := waitTopicLen(t, p, srv, "demo", "events_dlq", 5)
			for i, m := range dead {
				off := 4*i + 3
				h := dlqHeaders(t, m)
				if string(m.Payload) != fmt.Sprintf(`{"n":%d,`, off) || h["iggy_dlq_stage"] != "decode" || h["iggy_dlq_offset"] != strconv.Itoa(off) || h["trace"] != fmt.Sprintf("t%d", off) {
					t.Errorf("dead letter %d: payload %q headers %v", i, m.Payload, h)
				}
			}
		})
	}
}

// Without [error_handling] a refused record still stops the sink, as before; the error now names
// where the batch starts, so the poison record can be found.
func TestSinkToleranceNoneNamesThePoisonRecord(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.SendMessages(t, srv, "demo", "events", messagesWith(t, 5, func(i int) []byte {
		if i == 3 {
			return []byte(`{"poison":"POISON"}`)
		}
		return nil
	}))
	toml := sinkTOML("strict", testkit.PluginPath(t, "fault"), "demo", "events", "batch_length = 1", `fail_payload_contains = "POISON"`)
	p := testkit.StartRunner(t, append(withConfig(baseEnv(srv, t.TempDir()), toml),
		"IGGY_CONNECTOR_CONSUME_RETRIES=1", "IGGY_CONNECTOR_RETRY_BACKOFF_MIN=1ms", "IGGY_CONNECTOR_RETRY_BACKOFF_MAX=5ms"))
	expectExit(t, p, 1, `consume failed after 2 attempts`)
	if want := `stream "demo", topic "events", partition 0, offset 3`; !strings.Contains(p.Logs(), want) {
		t.Fatalf("the error does not name %s:\n%s", want, p.Logs())
	}
	if n := deliveredToFault(p.Logs()); n != 3 {
		t.Fatalf("the plugin accepted %d records before the poison one, want 3", n)
	}
}

// A source batch with malformed records: with tolerance = "all" they go to the dead-letter topic
// as the plugin produced them, the rest is sent and the batch ACKed (no NACK, so no stall).
// Without [error_handling] the same batches are NACKed until the source stalls, as before.
func TestSourceDeadLettersBadRecords(t *testing.T) {
	testkit.OverProtocols(t, sourceDeadLettersBadRecords)
}

func sourceDeadLettersBadRecords(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t)
	plugin := "max_messages = 20\nmessages_per_batch = 10\nbad_payload_every = 4"
	toml := sourceTOML("badsrc", testkit.PluginPath(t, "fault"), "out", "events", "", plugin) +
		errorHandling(`dead_letter_stream = "dlq"`+"\n"+`dead_letter_topic = "badsrc_dlq"`)
	p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()), toml))
	p.WaitStatus(t, "running", waitLong)
	sent := waitTopicLen(t, p, srv, "out", "events", 15)
	dead := waitTopicLen(t, p, srv, "dlq", "badsrc_dlq", 5)
	p.WaitUntil(t, waitLong, "15 sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) == 15 })
	for i, m := range sent {
		if strings.Contains(string(m.Payload), "bad") {
			t.Errorf("sent message %d is a bad one: %s", i, m.Payload)
		}
	}
	for i, m := range dead {
		seq := 4*i + 3
		h := dlqHeaders(t, m)
		if want := fmt.Sprintf(`{"seq":%d,"bad":`, seq); string(m.Payload) != want {
			t.Errorf("dead letter %d: payload %q, want %q", i, m.Payload, want)
		}
		if h["iggy_dlq_stage"] != "decode" || h["iggy_dlq_connector_key"] != "badsrc" || h["iggy_dlq_stream"] != "out" ||
			h["iggy_dlq_topic"] != "events" || h["iggy_dlq_error"] == "" || h["iggy_dlq_timestamp"] == "" {
			t.Errorf("dead letter %d: headers %v", i, h)
		}
		if _, ok := h["seq"]; !ok {
			t.Errorf("dead letter %d lost the plugin's header seq: %v", i, h)
		}
	}
	s := p.Stats(t)
	if testkit.OrZero(s.MessagesDeadLettered) != 5 || s.Status != "running" || p.Exited() {
		t.Fatalf("dead-lettered %v, status %s; logs:\n%s", s.MessagesDeadLettered, s.Status, p.Logs())
	}
	if strings.Contains(p.Logs(), "Rejected source batch") {
		t.Fatalf("a batch was NACKed:\n%s", p.Logs())
	}

	strict := sourceTOML("strictsrc", testkit.PluginPath(t, "fault"), "out", "strict", "", plugin)
	q := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()), strict))
	expectExit(t, q, 1, "source stalled")
	if !strings.Contains(q.Logs(), "Rejected source batch") {
		t.Fatalf("without [error_handling] the bad batch was not NACKed:\n%s", q.Logs())
	}
}

// A dead-letter send that cannot succeed (its stream was deleted after start) fails the connector
// rather than losing the record: the runner exits 1 naming the dead-letter topic, and the batch's
// offset is not stored, so the next run sees the poison record again.
func TestSinkFailsWhenDeadLetterSendFails(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	toml := sinkTOML("dlqgone", testkit.PluginPath(t, "fault"), "demo", "events", "", `fail_payload_contains = "POISON"`) +
		errorHandling(`dead_letter_stream = "dlq"`+"\n"+`dead_letter_topic = "gone"`)
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), toml))
	p.WaitStatus(t, "running", waitLong)
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier("dlq")
	if err := cli.DeleteStream(sid); err != nil {
		t.Fatalf("delete the dead-letter stream: %v", err)
	}
	testkit.SendMessages(t, srv, "demo", "events", messagesWith(t, 4, func(i int) []byte {
		if i == 2 {
			return []byte(`{"kind":"POISON"}`)
		}
		return nil
	}))
	expectExit(t, p, 1, `dead-lettering 1 records to stream "dlq" topic "gone" failed`)

	// The next run finds the records again (nothing was stored) and, the topic created anew,
	// dead-letters the poison one.
	q := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), toml))
	dead := waitTopicLen(t, q, srv, "dlq", "gone", 1)
	if h := dlqHeaders(t, dead[0]); h["iggy_dlq_offset"] != "2" || string(dead[0].Payload) != `{"kind":"POISON"}` {
		t.Fatalf("dead letter: %s %v", dead[0].Payload, h)
	}
}

// Without a dead-letter topic a source's bad records are counted and skipped; the rest is sent.
func TestSourceSkipsBadRecordsWithoutDeadLetterTopic(t *testing.T) {
	srv := testkit.StartBroker(t)
	toml := sourceTOML("skipsrc", testkit.PluginPath(t, "fault"), "out", "events", "",
		"max_messages = 20\nmessages_per_batch = 10\nbad_payload_every = 4") + errorHandling("")
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), toml))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "15 sent, 5 dead-lettered", func() bool {
		s := p.Stats(t)
		return testkit.OrZero(s.MessagesSent) == 15 && testkit.OrZero(s.MessagesDeadLettered) == 5
	})
	if got := len(readTopic(t, srv, "out", "events")); got != 15 {
		t.Fatalf("%d messages in out/events, want 15; logs:\n%s", got, p.Logs())
	}
	p.WaitUntil(t, waitLong, "the skipped records to be logged", func() bool {
		return strings.Contains(p.Logs(), "source records failed; dead-lettered and skipped")
	})
}
