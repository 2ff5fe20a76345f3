package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A flood of messages a sink cannot decode gives one warning naming the connector, the stream,
// topic, partition and offset, not one line per message; the next warning, a second later, says
// how many drops went unreported in between.
func TestSinkDecodeFloodIsWarnedRateLimited(t *testing.T) {
	const flood = 200
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"bad": 1}))
	bad := make([][]byte, flood)
	for i := range bad {
		bad[i] = []byte("not json")
	}
	sendRaw(t, srv, "demo", "bad", bad)

	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("flooded", testkit.PluginPath(t, "null_sink"), "demo", "bad", "", "")))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "every message counted as an error", func() bool { return p.Stats(t).Errors == flood })

	warnings := dropWarnings(p.Logs())
	if len(warnings) != 1 {
		t.Fatalf("%d drop warnings for %d bad messages, want 1:\n%s", len(warnings), flood, strings.Join(warnings, "\n"))
	}
	for _, field := range []string{"level=WARN", "connector_key=flooded", "connector_type=sink", "stage=decode", "stream=demo",
		"topic=bad", "partition_id=0", "offset=0", "error=", "suppressed=0"} {
		if !strings.Contains(warnings[0], field) {
			t.Errorf("drop warning lacks %s: %s", field, warnings[0])
		}
	}

	time.Sleep(1100 * time.Millisecond) // past the one-second window of the first warning
	sendRaw(t, srv, "demo", "bad", [][]byte{[]byte("still not json")})
	p.WaitUntil(t, waitLong, "a second drop warning", func() bool { return len(dropWarnings(p.Logs())) == 2 })
	second := dropWarnings(p.Logs())[1]
	if !strings.Contains(second, "offset=200") || !strings.Contains(second, "suppressed=199") {
		t.Fatalf("second warning %s; want offset=200 and suppressed=199 (the rest of the flood)", second)
	}
}

func dropWarnings(logs string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `msg="sink message dropped"`) {
			out = append(out, line)
		}
	}
	return out
}
