package runner_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A source with two [[streams]] entries sends every batch to both (docs/architecture.md, decision 4), after running its
// transforms in file order (docs/architecture.md, decision 2).
func TestSourceSendsToEveryStreamWithTransforms(t *testing.T) {
	const total = 60
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"a": 1, "b": 1}))
	cfg := `type = "source"
key = "fanout"
enabled = true
version = 1
name = "fan-out"
path = "` + testkit.PluginPath(t, "fault") + `"

[[streams]]
stream = "demo"
topic = "a"
schema = "json"

[[streams]]
stream = "demo"
topic = "b"
schema = "text"

[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "origin"
value.static = "fault"

[transforms.delete_fields]
enabled = true
fields = ["origin"]

[plugin_config]
messages_per_batch = 10
max_messages = 60
interval_ms = 2
`
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), cfg))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "both streams written", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= 2*total })

	for _, topic := range []string{"a", "b"} {
		msgs := readTopic(t, srv, "demo", topic)
		if len(msgs) != total {
			t.Fatalf("topic %s holds %d messages, want %d", topic, len(msgs), total)
		}
		for i, m := range msgs {
			var body map[string]any
			if err := json.Unmarshal(m.Payload, &body); err != nil {
				t.Fatalf("topic %s message %d: %q: %v", topic, i, m.Payload, err)
			}
			// add_fields ran first and delete_fields second, so "origin" is gone again.
			if _, has := body["origin"]; has || body["seq"] != float64(i) {
				t.Fatalf("topic %s message %d = %s; want {\"seq\":%d} with transforms applied in file order", topic, i, m.Payload, i)
			}
		}
	}
	if s := p.Stats(t); testkit.OrZero(s.MessagesProduced) != total || s.Errors != 0 {
		t.Fatalf("produced %d errors %d; want %d and 0", testkit.OrZero(s.MessagesProduced), s.Errors, total)
	}
}

// A sink decodes per the stream schema: messages that are not JSON are dropped and counted as
// errors, the rest reach the plugin transformed, and consumed counts every message polled.
func TestSinkDecodeErrorsAndTransforms(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"mixed": 1}))
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("mixed")
	var batch []iggcon.IggyMessage
	payloads := []string{`{"data":{"n":1},"meta":1}`, `not json`, `{"data":{"n":2}}`, `{"data":"x"`, `{"other":3}`}
	for _, pl := range payloads {
		m, _ := iggcon.NewIggyMessage([]byte(pl))
		batch = append(batch, m)
	}
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch); err != nil {
		t.Fatal(err)
	}
	cfg := sinkTOML("mixed", testkit.PluginPath(t, "stdout_sink"), "demo", "mixed", "", "print_payload = true") + `
[transforms.unwrap_envelope]
enabled = true
field = "data"

[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "seen"
value.static = true
`
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), cfg))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "the batch processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) >= 3 })
	s := p.Stats(t)
	if testkit.OrZero(s.MessagesConsumed) != 5 || testkit.OrZero(s.MessagesProcessed) != 3 || s.Errors != 2 {
		t.Fatalf("consumed %d processed %d errors %d; want 5 polled, 3 handed to the plugin and 2 decode errors",
			testkit.OrZero(s.MessagesConsumed), testkit.OrZero(s.MessagesProcessed), s.Errors)
	}
	logs := p.Logs()
	for _, want := range []string{
		`Message offset: 0, payload: Json({\"n\":1,\"seen\":true})`,
		`Message offset: 2, payload: Json({\"n\":2,\"seen\":true})`,
		`Message offset: 4, payload: Json({\"other\":3,\"seen\":true})`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the plugin did not log %s; logs:\n%s", want, logs)
		}
	}
}

// A source whose target stream and topic do not exist creates them (one partition), as upstream's
// producer does, and writes there.
func TestSourceCreatesMissingTarget(t *testing.T) {
	srv := testkit.StartBroker(t)
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sourceTOML("maker", testkit.PluginPath(t, "fault"), "fresh", "made", "",
		"messages_per_batch = 5\nmax_messages = 20\ninterval_ms = 2")))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "20 messages sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= 20 })
	if got := len(readTopic(t, srv, "fresh", "made")); got != 20 {
		t.Fatalf("the created topic holds %d messages, want 20", got)
	}
}

// benchmark = true adds upstream's start line and per-batch timing event to the logs.
func TestBenchmarkModeLogsTimingEvents(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 10)
	cfg := strings.Replace(sinkTOML("timed", testkit.PluginPath(t, "null_sink"), "demo", "events", "", ""), "enabled = true\n", "enabled = true\nbenchmark = true\n", 1)
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), cfg))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "a benchmark event", func() bool { return strings.Contains(p.Logs(), "msg=benchmark") })
	var event string
	for _, line := range strings.Split(p.Logs(), "\n") {
		if strings.Contains(line, "msg=benchmark") {
			event = line
		}
	}
	if !strings.Contains(p.Logs(), "benchmark mode enabled") {
		t.Errorf("no benchmark start line in:\n%s", p.Logs())
	}
	for _, field := range []string{"target=iggy_connectors::benchmark", "connector_key=timed", "connector_type=sink", "stream=demo",
		"topic=events", "partition_id=0", "batch_size=10", "processed_count=10", "decode_us=", "prepare_us=", "ffi_us=", "total_us="} {
		if !strings.Contains(event, field) {
			t.Errorf("benchmark event lacks %s: %s", field, event)
		}
	}
}

// The source decodes what the plugin produced with the schema the plugin declared, the way the SDK's
// try_into_payload does: avro and flat_buffer bytes pass as bytes (no schema needed), proto falls
// back to raw bytes, so a plugin declaring them is not rejected.
func TestSourceDecodesDeclaredSchemaAsTheSDKDoes(t *testing.T) {
	lib := probeLibrary(t)
	for _, c := range []struct {
		name         string
		pluginSchema int
		streamSchema string
		streamExtra  string
		payload      []byte
	}{
		{"avro bytes to an avro stream", 5, "avro", `avro_schema_json = '"long"'`, []byte{0x02}},
		{"flat_buffer bytes to a flat_buffer stream", 4, "flat_buffer", "", []byte{1, 2, 3, 4, 5}},
		{"non-Any proto bytes to a raw stream", 3, "raw", "", []byte{0xff, 0x00}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"t": 1}))
			env := baseEnv(srv, t.TempDir())
			source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "t", c.streamSchema, c.streamExtra, c.pluginSchema, [][]byte{c.payload}, "")))
			source.WaitStatus(t, "running", waitLong)
			source.WaitUntil(t, waitLong, "the message sent", func() bool { return testkit.OrZero(source.Stats(t).MessagesSent) == 1 })
			msgs := readTopic(t, srv, "fmt", "t")
			if len(msgs) != 1 || string(msgs[0].Payload) != string(c.payload) {
				t.Fatalf("topic holds %d messages (%x), want the produced bytes %x", len(msgs), msgs, c.payload)
			}
		})
	}
}

var stdoutNLine = regexp.MustCompile(`payload: Json\(\{\\?"n\\?":(\d+)\}\)`)

// A sink on a topic with several partitions gets every message of every partition (the consumer
// group assigns them all to its one member), each partition's offset committed on its own.
func TestSinkReadsEveryPartition(t *testing.T) {
	const total = 900
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"wide": 3}))
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("wide")
	for from := 0; from < total; from += 100 {
		var batch []iggcon.IggyMessage
		for i := from; i < from+100; i++ {
			m, _ := iggcon.NewIggyMessage([]byte(fmt.Sprintf(`{"n":%d}`, i)))
			batch = append(batch, m)
		}
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(uint32(from/100%3)), batch); err != nil {
			t.Fatal(err)
		}
	}
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("wide", testkit.PluginPath(t, "stdout_sink"), "demo", "wide", "batch_length = 64", "print_payload = true")))
	p.WaitStatus(t, "running", waitLong)
	seen := map[int]bool{}
	p.WaitUntil(t, waitLong, "every message of the three partitions", func() bool {
		for _, m := range stdoutNLine.FindAllStringSubmatch(p.Logs(), -1) {
			n, _ := strconv.Atoi(m[1])
			seen[n] = true
		}
		return len(seen) == total
	})
	// The plugin logs during consume; processed moves right after it returns.
	p.WaitUntil(t, waitLong, "the last batch counted", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) >= total })
	if s := p.Stats(t); testkit.OrZero(s.MessagesProcessed) != total || testkit.OrZero(s.MessagesConsumed) != total {
		t.Fatalf("consumed %d processed %d; want %d each (no message twice)", testkit.OrZero(s.MessagesConsumed), testkit.OrZero(s.MessagesProcessed), total)
	}
	// Stopped, the runner has delivered all it ever will and its output is complete: a message
	// delivered twice shows as a second line.
	stopRunner(t, p)
	printed := map[int]int{}
	for _, m := range stdoutNLine.FindAllStringSubmatch(p.Logs(), -1) {
		n, _ := strconv.Atoi(m[1])
		printed[n]++
	}
	for n, times := range printed {
		if times != 1 {
			t.Errorf("message %d reached the plugin %d times, want once", n, times)
		}
	}
}
