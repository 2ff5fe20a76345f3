package runner_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// logLines splits a GET /logs answer into records, failing the test on a line that is not one.
func logLines(t *testing.T, body []byte) []logging.Record {
	t.Helper()
	var out []logging.Record
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r logging.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %s: %v", sc.Bytes(), err)
		}
		out = append(out, r)
	}
	return out
}

// A plugin that logs without pause never grows the runner's log ring past its bounds (records and
// bytes), while GET /logs keeps answering the newest records; level filters and follow work on it.
func TestRunnerLogRingStaysBounded(t *testing.T) {
	const records, maxBytes = 100, 12000
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 3000)
	sink := testkit.StartRunner(t, append(withConfig(baseEnv(srv, t.TempDir()),
		sinkTOML("noisy", testkit.PluginPath(t, "fault"), "demo", "events", "batch_length = 10", "log_lines = 40")),
		"IGGY_CONNECTORS_HTTP_LOG_RECORDS="+strconv.Itoa(records), "IGGY_CONNECTORS_HTTP_LOG_BYTES="+strconv.Itoa(maxBytes)))
	sink.WaitStatus(t, "running", waitLong)
	follow := sink.OpenStream(t, "/logs?follow=true&level=info", nil)
	reads := 0
	for testkit.OrZero(sink.Stats(t).MessagesProcessed) < 3000 {
		code, body, err := sink.Get("/logs", nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET /logs: %d %v", code, err)
		}
		got := logLines(t, body)
		if len(got) > records || len(body)-len(got) > maxBytes { // the newlines are not the ring's
			t.Fatalf("GET /logs: %d records of %d bytes; the ring holds at most %d records and %d bytes", len(got), len(body)-len(got), records, maxBytes)
		}
		if sink.Exited() {
			t.Fatalf("runner exited; logs:\n%s", sink.Logs())
		}
		reads++
	}
	// Many times the ring's bound went through it while it was read.
	if seq := logsSeq(t, sink); seq < 5*records || reads == 0 {
		t.Fatalf("%d records went through the ring (%d reads); the plugin did not log enough to test its bound", seq, reads)
	}
	code, body, err := sink.Get("/logs?level=warn", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /logs?level=warn: %d %v", code, err)
	}
	for _, r := range logLines(t, body) {
		if r.Level != "WARN" && r.Level != "ERROR" {
			t.Fatalf("level=warn answered a %s record", r.Level)
		}
	}
	_, body, _ = sink.Get("/logs?tail=5", nil)
	tail := logLines(t, body)
	if len(tail) != 5 || tail[4].Origin != logging.OriginPlugin || tail[4].Target != "iggy_connector_fault" {
		t.Fatalf("tail 5: %+v", tail)
	}
	plugin := 0
	for plugin < 10 {
		m := follow.Next(t, waitLong)
		if m.Event != tap.EventLog {
			t.Fatalf("follow: %s %s", m.Event, m.Data)
		}
		var r logging.Record
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Origin == logging.OriginPlugin {
			plugin++
		}
	}
}

// logsSeq is the sequence number of the runner's newest log record (the Iggy-Logs-Seq header).
func logsSeq(t *testing.T, p *testkit.RunnerProc) uint64 {
	t.Helper()
	resp, err := p.StreamClient().Get("http://runner/logs?tail=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	n, err := strconv.ParseUint(resp.Header.Get(tap.HeaderLogsSeq), 10, 64)
	if err != nil {
		t.Fatalf("%s header %q: %v", tap.HeaderLogsSeq, resp.Header.Get(tap.HeaderLogsSeq), err)
	}
	return n
}
