package supervisor_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The preview and the live tap show the same bytes for the same messages and config, over every
// schema and the transforms (docs/see-inside.md, docs/dry-runs.md). Sinks: a real sink runner
// under the supervisor is tapped at polled and delivered while messages go through the dev
// broker; its polled events, as the tap wrote them, are the samples of POST .../preview of its
// running config; the preview's delivered lines equal the tap's delivered events byte for byte,
// and the messages the preview fails are the ones the tap never shows delivered. Sources: a
// source's produced events previewed give its sent events, byte for byte.
func TestTapEqualsThePreview(t *testing.T) { testkit.OverProtocols(t, tapEqualsThePreview) }

func tapEqualsThePreview(t *testing.T, protocol string) {
	sinks, sources := testkit.SinkCases(t), testkit.SourceCases()
	topics := map[string]uint32{}
	for i := range sinks {
		topics[fmt.Sprintf("in%d", i)] = 1
	}
	for i := range sources {
		topics[fmt.Sprintf("out%d", i)] = 1
	}
	broker := testkit.StartBroker(t, testkit.WithStream("dry", topics))
	f := newFixture(t, broker)
	// Secrets revealed: a tap's polled event is then the message itself, so its preview is one
	// of the same message. (Masked, a sample holds "******" for a secret, and the dry run of it
	// shows the masked payload's size: docs/see-inside.md.)
	f.writeRuntime(t, "reveal_secrets = true")
	probe := testkit.ProbeLibrary(t)
	for i, c := range sinks {
		f.write(t, fmt.Sprintf("connectors/sink%d.toml", i),
			c.ConnectorTOML(fmt.Sprintf("sink%d", i), "sink "+c.Name, f.plugin("null_sink"), "dry", fmt.Sprintf("in%d", i), ""))
	}
	for i, c := range sources {
		key := fmt.Sprintf("source%d", i)
		f.write(t, "connectors/"+key+".toml", testkit.ProbeSourceTOML(t, key, probe, "dry", fmt.Sprintf("out%d", i), c.Stream, c.StreamExtra, int(c.Plugin), c.Payloads, c.Transforms))
		// Started paused (its target-state file), so its tap is open before the plugin produces.
		f.write(t, "state/source_"+key+".target.json", `{"target":"paused","updated_at":"2026-12-01T00:00:00Z"}`)
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)
	waitFor(t, p, waitLong, "every sink running and every source paused", func() bool {
		stats := statsOf(t, p, nil)
		for i := range sinks {
			if stats[fmt.Sprintf("sink/sink%d", i)].Status != "running" {
				return false
			}
		}
		for i := range sources {
			if stats[fmt.Sprintf("source/source%d", i)].Status != "paused" {
				return false
			}
		}
		return true
	})

	taps := make([]*tapped, len(sinks))
	for i := range sinks {
		taps[i] = openTap(t, p, fmt.Sprintf("/sinks/sink%d/tap?point=polled,delivered&rate=100000", i))
	}
	for i, c := range sinks {
		testkit.SendMessages(t, broker, "dry", fmt.Sprintf("in%d", i), testkit.CaseMessages(t, c.Payloads))
	}
	for i, c := range sinks {
		t.Run("sink "+c.Name, func(t *testing.T) {
			tp := taps[i]
			tp.until(t, tap.PointPolled, len(c.Payloads))
			preview := previewLines(t, p, fmt.Sprintf("/sinks/sink%d/preview", i), tp.lines[tap.PointPolled])
			want := map[uint64]string{}
			for _, line := range preview {
				e := event(t, line)
				switch e.Point {
				case tap.PointDelivered:
					want[e.Offset] = line
				case "failed":
				default:
					t.Fatalf("preview line %s", line)
				}
			}
			tp.until(t, tap.PointDelivered, len(want))
			for _, line := range tp.lines[tap.PointDelivered] {
				e := event(t, line)
				if want[e.Offset] != line {
					t.Errorf("offset %d\nthe tap delivered %s\nthe preview shows %s", e.Offset, line, want[e.Offset])
				}
			}
			if t.Failed() {
				t.Logf("samples (the tap's polled events):\n%s\npreview:\n%s", strings.Join(tp.lines[tap.PointPolled], "\n"), strings.Join(preview, "\n"))
			}
			t.Logf("%d messages: %d delivered equal to the preview, %d failed in both", len(c.Payloads), len(want), len(c.Payloads)-len(want))
		})
	}

	for i, c := range sources {
		t.Run("source "+c.Name(), func(t *testing.T) {
			key := fmt.Sprintf("source%d", i)
			tp := openTap(t, p, "/sources/"+key+"/tap?point=produced,sent&rate=100000")
			call(t, p, http.MethodPost, "/sources/"+key+"/resume", "", http.StatusNoContent)
			tp.until(t, tap.PointProduced, len(c.Payloads))
			preview := previewLines(t, p, "/sources/"+key+"/preview", tp.lines[tap.PointProduced])
			for _, line := range preview {
				if e := event(t, line); e.Point != tap.PointSent {
					t.Fatalf("preview line %s", line)
				}
			}
			tp.until(t, tap.PointSent, len(preview))
			for k, line := range tp.lines[tap.PointSent] {
				if line != preview[k] {
					t.Errorf("message %d\nthe tap sent   %s\nthe preview shows %s", k, line, preview[k])
				}
			}
			if t.Failed() {
				t.Logf("samples (the tap's produced events):\n%s", strings.Join(tp.lines[tap.PointProduced], "\n"))
			}
		})
	}
}

// tapped is an open tap and the message events read from it so far, by point, as written.
type tapped struct {
	s     *testkit.EventStream
	lines map[string][]string
}

func openTap(t *testing.T, p *testkit.SupervisorProc, path string) *tapped {
	t.Helper()
	return &tapped{s: testkit.OpenStream(t, http.DefaultClient, p.URL(path), nil), lines: map[string][]string{}}
}

// until reads message events until n of them are at point; any other event fails the test.
func (tp *tapped) until(t *testing.T, point string, n int) {
	t.Helper()
	for len(tp.lines[point]) < n {
		m := tp.s.Next(t, waitLong)
		if m.Event != tap.EventMessage {
			t.Fatalf("waiting for %d %s events (%d so far): %s %s", n, point, len(tp.lines[point]), m.Event, m.Data)
		}
		e := event(t, string(m.Data))
		tp.lines[e.Point] = append(tp.lines[e.Point], string(m.Data))
	}
}

// previewLines posts samples (JSON lines) to a preview route and returns its output lines.
func previewLines(t *testing.T, p *testkit.SupervisorProc, path string, samples []string) []string {
	t.Helper()
	body := call(t, p, http.MethodPost, path, `{"messages":[`+strings.Join(samples, ",")+`]}`, http.StatusOK)
	return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
}

func event(t *testing.T, line string) tap.Event {
	t.Helper()
	var e tap.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return e
}

// In attach mode the supervisor merges the replicas' taps, and a message it relays is the
// runner's event with its replica named, nothing else changed: for every sink schema the merged
// tap's delivered events equal `iggy-connectors test` of the runner's connector file over the
// merged tap's polled events (the preview routes are the orchestrator's there, so the CLI is the
// dry run), byte for byte but for "replica".
func TestFleetTapEqualsTheDryRun(t *testing.T) {
	sinks := testkit.SinkCases(t)
	topics := map[string]uint32{}
	for i := range sinks {
		topics[fmt.Sprintf("in%d", i)] = 1
	}
	broker := testkit.StartBroker(t, testkit.WithStream("dry", topics))
	dir := t.TempDir()
	files, endpoints := make([]string, len(sinks)), make([]string, len(sinks))
	for i, c := range sinks {
		cfg := c.ConnectorTOML(fmt.Sprintf("sink%d", i), "sink "+c.Name, testkit.PluginPath(t, "null_sink"), "dry", fmt.Sprintf("in%d", i), "")
		files[i] = filepath.Join(dir, fmt.Sprintf("sink%d.toml", i))
		if err := os.WriteFile(files[i], []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		r := testkit.StartRunner(t, []string{
			"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
			"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=" + fleetRunnerKey,
			"IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true", // the samples are then the messages (see above)
			"IGGY_CONNECTOR_CONFIG_PATH=" + files[i],
		})
		endpoints[i] = "http://" + r.WaitTCPEndpoint(t, waitLong)
	}
	base := startAttached(t, broker, endpoints...)
	waitUntil(t, "every replica running in the fleet view", func() bool {
		for i := range sinks {
			if e, ok := sinkEntry(t, base, fmt.Sprintf("sink%d", i)); !ok || e.replica(endpoints[i]).Status != "running" {
				return false
			}
		}
		return true
	})
	taps := make([]*tapped, len(sinks))
	for i := range sinks {
		taps[i] = &tapped{s: testkit.OpenStream(t, http.DefaultClient, base+fmt.Sprintf("/sinks/sink%d/tap?point=polled,delivered&rate=100000", i), nil),
			lines: map[string][]string{}}
	}
	for i, c := range sinks {
		testkit.SendMessages(t, broker, "dry", fmt.Sprintf("in%d", i), testkit.CaseMessages(t, c.Payloads))
	}
	for i, c := range sinks {
		t.Run(c.Name, func(t *testing.T) {
			tp := taps[i]
			tp.until(t, tap.PointPolled, len(c.Payloads))
			samples := filepath.Join(dir, fmt.Sprintf("samples%d.jsonl", i))
			if err := os.WriteFile(samples, []byte(strings.Join(tp.lines[tap.PointPolled], "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(testkit.SupervisorBinary(t), "test", files[i], "--input", samples)
			cmd.Env = []string{"IGGY_SUPERVISOR_RUNNER_PATH=" + testkit.RunnerBinary(t), "IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true"}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("iggy-connectors test: %v\n%s", err, out)
			}
			replica, _ := json.Marshal(endpoints[i])
			want := map[uint64]string{}
			for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if e := event(t, line); e.Point == tap.PointDelivered {
					want[e.Offset] = strings.Replace(line, `{"point":"delivered",`, `{"point":"delivered","replica":`+string(replica)+`,`, 1)
				}
			}
			tp.until(t, tap.PointDelivered, len(want))
			for _, line := range tp.lines[tap.PointDelivered] {
				if e := event(t, line); want[e.Offset] != line {
					t.Errorf("offset %d\nthe merged tap delivered %s\nthe dry run, replica added %s", e.Offset, line, want[e.Offset])
				}
			}
		})
	}
}
