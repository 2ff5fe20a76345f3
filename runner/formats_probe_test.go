package runner_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// probeLibrary compiles the format probe (testkit.FormatProbeC) once per test.
func probeLibrary(t *testing.T) string {
	t.Helper()
	return testkit.ProbeLibrary(t)
}

// received is one message as the probe sink wrote it down.
type received struct {
	Offset  uint64
	Schema  int // the label the plugin got: 0 json ... 5 avro
	Payload []byte
}

// readReceived parses the probe sink's file; a missing file is no messages yet.
func readReceived(t *testing.T, path string) []received {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []received
	r := bufio.NewReader(f)
	for {
		header, err := r.ReadString('\n')
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m received
		var n int
		if _, err := fmt.Sscanf(header, "%d %d %d\n", &m.Offset, &m.Schema, &n); err != nil {
			t.Fatalf("probe file header %q: %v", header, err)
		}
		m.Payload = make([]byte, n+1)
		if _, err := io.ReadFull(r, m.Payload); err != nil {
			return out // the sink is still writing this record
		}
		m.Payload = m.Payload[:n]
		out = append(out, m)
	}
}

// waitReceived waits until the probe sink has written n messages.
func waitReceived(t *testing.T, path string, n int, runners ...*testkit.RunnerProc) []received {
	t.Helper()
	var got []received
	if !testkit.Within(waitLong, func() bool {
		got = readReceived(t, path)
		if len(got) >= n {
			return true
		}
		for _, r := range runners {
			if r.Exited() {
				t.Fatalf("runner exited while waiting for %d messages (have %d):\n%s", n, len(got), r.Logs())
			}
		}
		return false
	}) {
		t.Fatalf("the sink received %d of %d messages", len(got), n)
	}
	return got
}

// expectMiddleTwoSkipped checks a probe sink that was sent good, bad, bad, good messages: it
// receives offsets 0 and 3 only, counts two errors, and its logs mention every wantLogs text.
func expectMiddleTwoSkipped(t *testing.T, sink *testkit.RunnerProc, out string, wantLogs ...string) {
	t.Helper()
	got := waitReceived(t, out, 2, sink)
	sink.WaitUntil(t, waitLong, "the endpoint", func() bool { _, err := sink.Health(); return err == nil })
	sink.WaitUntil(t, waitLong, "two errors", func() bool { return sink.Stats(t).Errors == 2 })
	if len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 3 {
		t.Errorf("sink received %+v, want offsets 0 and 3", got)
	}
	logs := sink.Logs()
	for _, want := range wantLogs {
		if !strings.Contains(logs, want) {
			t.Errorf("logs do not mention %q:\n%s", want, logs)
		}
	}
}

// probeSourceTOML is a source connector "probe_source" running the probe (testkit.ProbeSourceTOML).
func probeSourceTOML(t *testing.T, lib, stream, topic, streamSchema, streamExtra string, pluginSchema int, payloads [][]byte, transforms string) string {
	t.Helper()
	return testkit.ProbeSourceTOML(t, "probe_source", lib, stream, topic, streamSchema, streamExtra, pluginSchema, payloads, transforms)
}

// probeSinkTOML is a sink connector running the probe, writing to file.
func probeSinkTOML(lib, stream, topic, streamSchema, streamExtra, file, transforms string) string {
	return fmt.Sprintf(`type = "sink"
key = "probe_sink"
enabled = true
version = 1
name = "probe sink"
path = %q

[[streams]]
stream = %q
topics = [%q]
schema = %q
poll_interval = "10ms"
%s

[plugin_config]
file = %q
%s
`, lib, stream, topic, streamSchema, streamExtra, file, transforms)
}

// sendRaw sends payloads to the topic's partition 0 through the official SDK.
func sendRaw(t *testing.T, srv *devbroker.Server, stream, topic string, payloads [][]byte) {
	t.Helper()
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	batch := make([]iggcon.IggyMessage, len(payloads))
	for i, p := range payloads {
		m, err := iggcon.NewIggyMessage(p)
		if err != nil {
			t.Fatal(err)
		}
		batch[i] = m
	}
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch); err != nil {
		t.Fatalf("SDK send: %v", err)
	}
}

// jsonLines renders JSON payloads as the bytes a plugin would produce.
func jsonLines(docs ...string) [][]byte {
	out := make([][]byte, len(docs))
	for i, d := range docs {
		out[i] = []byte(d)
	}
	return out
}
