package runner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// telemetryEnv points [telemetry] (through its IGGY_CONNECTORS_TELEMETRY_* variables) at the
// receiver, both signals over OTLP/HTTP.
func telemetryEnv(recv *testkit.OTLPReceiver) []string {
	return []string{
		"IGGY_CONNECTORS_TELEMETRY_ENABLED=true",
		"IGGY_CONNECTORS_TELEMETRY_SERVICE_NAME=runner-under-test",
		"IGGY_CONNECTORS_TELEMETRY_TRACES_TRANSPORT=http",
		"IGGY_CONNECTORS_TELEMETRY_TRACES_ENDPOINT=" + recv.URL,
		"IGGY_CONNECTORS_TELEMETRY_LOGS_TRANSPORT=http",
		"IGGY_CONNECTORS_TELEMETRY_LOGS_ENDPOINT=" + recv.URL,
	}
}

// A source runner and a sink runner with telemetry enabled export one batch span per batch with a
// child span per stage, and their log records, all under a resource naming the connector.
func TestTelemetryExportsBatchSpansAndLogs(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	recv := testkit.StartOTLPReceiver(t)
	env := append(baseEnv(srv, t.TempDir()), telemetryEnv(recv)...)

	source := testkit.StartRunner(t, withConfig(env, sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events", "",
		"messages_per_batch = 10\nmax_messages = 30\ninterval_ms = 2")))
	sink := testkit.StartRunner(t, withConfig(env, sinkTOML("out", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")))

	cases := []struct {
		key, kind, span string
		stages          []string
		proc            *testkit.RunnerProc
	}{
		{"gen", "source", "source batch", []string{"decode", "prepare", "iggy_send"}, source},
		{"out", "sink", "sink batch", []string{"decode", "prepare", "ffi"}, sink},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			var parent testkit.ReceivedSpan
			c.proc.WaitUntil(t, waitLong, "a "+c.span+" span with its stage children", func() bool {
				spans := recv.Spans()
				for _, s := range spans {
					if s.Span.GetName() == c.span && s.Resource["iggy.connector.key"] == c.key {
						parent = s
						return len(childNames(spans, s)) >= len(c.stages)
					}
				}
				return false
			})
			want := c.stages
			if parent.Attrs["state_saved"] == true { // a source batch that carried plugin state
				want = append(slices.Clone(want), "state_save")
			}
			if got := childNames(recv.Spans(), parent); !slices.Equal(got, want) {
				t.Errorf("%s children %v, want %v", c.span, got, want)
			}
			wantResource := map[string]any{"iggy.connector.key": c.key, "iggy.connector.type": c.kind, "service.name": "runner-under-test",
				"process.pid": int64(c.proc.Pid())}
			for k, v := range wantResource {
				if parent.Resource[k] != v {
					t.Errorf("span resource %s = %v, want %v (resource %v)", k, parent.Resource[k], v, parent.Resource)
				}
			}
			if parent.Attrs["stream"] != "demo" || parent.Attrs["topic"] != "events" || parent.Attrs["batch_size"] == nil {
				t.Errorf("%s attributes %v lack stream demo, topic events and batch_size", c.span, parent.Attrs)
			}

			c.proc.WaitUntil(t, waitLong, "a log record of "+c.key, func() bool {
				for _, l := range recv.Logs() {
					if l.Resource["iggy.connector.key"] == c.key && strings.Contains(l.Record.GetBody().GetStringValue(), "running") {
						return l.Resource["iggy.connector.type"] == c.kind
					}
				}
				return false
			})
		})
	}
}

// childNames lists the names of parent's child spans, in start order.
func childNames(spans []testkit.ReceivedSpan, parent testkit.ReceivedSpan) []string {
	var children []testkit.ReceivedSpan
	for _, s := range spans {
		if string(s.Span.GetParentSpanId()) == string(parent.Span.GetSpanId()) && string(s.Span.GetTraceId()) == string(parent.Span.GetTraceId()) {
			children = append(children, s)
		}
	}
	slices.SortStableFunc(children, func(a, b testkit.ReceivedSpan) int {
		return int(int64(a.Span.GetStartTimeUnixNano()) - int64(b.Span.GetStartTimeUnixNano()))
	})
	names := make([]string, len(children))
	for i, s := range children {
		names[i] = s.Span.GetName()
	}
	return names
}

// With IGGY_CONNECTORS_LOGGING_FORMAT=json every line the runner writes, its own and the plugin's,
// from start to graceful stop, is one JSON object naming the connector.
func TestJSONLogFormatEveryLineNamesTheConnector(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 20)
	env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTORS_LOGGING_FORMAT=json", "IGGY_CONNECTOR_LOG_LEVEL=debug")
	p := testkit.StartRunner(t, withConfig(env, sinkTOML("jsonlog", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "20 messages processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) >= 20 })
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(waitLong); err != nil || code != 0 {
		t.Fatalf("exit %d, %v; logs:\n%s", code, err, p.Logs())
	}

	lines := strings.Split(strings.TrimRight(p.Logs(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("only %d log lines:\n%s", len(lines), p.Logs())
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is not JSON (%v): %s", i+1, err, line)
		}
		if rec["connector_key"] != "jsonlog" || rec["connector_type"] != "sink" {
			t.Errorf("line %d does not name the connector: %s", i+1, line)
		}
	}
}

// A batch that fails is exported too, its span marked as an error with the reason: a sink whose
// plugin refuses the batch (no retries left) and a source batch rejected (NACK) because its
// messages do not fit the target schema. Each runner then exits 1; its spans are flushed first.
func TestTelemetryMarksFailedBatches(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 5)
	recv := testkit.StartOTLPReceiver(t)
	env := append(baseEnv(srv, t.TempDir()), telemetryEnv(recv)...)
	const strictSchema = `'''{"type":"record","name":"R","fields":[{"name":"id","type":"string"}]}'''`

	cases := []struct {
		key, span, reason string
		env               []string
	}{
		{"refused", "sink batch", "consume failed",
			append(withConfig(env, sinkTOML("refused", testkit.PluginPath(t, "fault"), "demo", "events", "", "consume_code = 1")),
				"IGGY_CONNECTOR_CONSUME_RETRIES=0")},
		{"rejected", "source batch", "Rejected source batch",
			withConfig(env, strings.Replace(sourceTOML("rejected", testkit.PluginPath(t, "fault"), "demo", "avro_out", "avro_schema_json = "+strictSchema,
				"messages_per_batch = 3\ninterval_ms = 2"), `schema = "json"`, `schema = "avro"`, 1))},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			p := testkit.StartRunner(t, c.env)
			if code, err := p.Wait(waitLong); err != nil || code != 1 {
				t.Fatalf("exit %d, %v; want 1; logs:\n%s", code, err, p.Logs())
			}
			var failed *testkit.ReceivedSpan
			for _, s := range recv.Spans() {
				if s.Span.GetName() == c.span && s.Resource["iggy.connector.key"] == c.key && s.Span.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
					failed = &s
					break
				}
			}
			if failed == nil {
				t.Fatalf("no %s span with error status from %s among %d spans; logs:\n%s", c.span, c.key, len(recv.Spans()), p.Logs())
			}
			if msg := failed.Span.GetStatus().GetMessage(); !strings.Contains(msg, c.reason) {
				t.Errorf("error status %q does not mention %q", msg, c.reason)
			}
		})
	}
}
