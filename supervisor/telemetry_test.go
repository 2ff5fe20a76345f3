package supervisor_test

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// With [telemetry] on, the supervisor's own log records reach the OTLP collector under the
// configured service name and the runtime version, and what is queued at exit is flushed. The
// runner lines it relays are printed but not exported again by the supervisor: each runner, handed
// the same [telemetry] section, exports its own under its connector key.
func TestSupervisorLogsAreExportedOverOTLP(t *testing.T) {
	collector := testkit.StartOTLPReceiver(t)
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "config.toml", readFile(t, f.dir+"/config.toml")+fmt.Sprintf(`
[telemetry]
enabled = true
service_name = "connectors-under-test"

[telemetry.logs]
transport = "http"
endpoint = %[1]q

[telemetry.traces]
transport = "http"
endpoint = %[1]q
`, collector.URL))
	f.write(t, "connectors/a.toml", sinkFile("a", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	fromPID := func(pid int) []testkit.ReceivedLog {
		var out []testkit.ReceivedLog
		for _, l := range collector.Logs() {
			if l.Resource["process.pid"] == int64(pid) {
				out = append(out, l)
			}
		}
		return out
	}
	hasBody := func(body string) func(testkit.ReceivedLog) bool {
		return func(l testkit.ReceivedLog) bool { return l.Record.GetBody().GetStringValue() == body }
	}
	waitFor(t, p, waitLong, "the supervisor's start record at the collector", func() bool {
		return slices.ContainsFunc(fromPID(p.Pid()), hasBody("iggy-connectors started"))
	})
	if len(linesOf(p.Logs(), "a")) == 0 {
		t.Fatalf("no relayed runner line was printed; the test needs some")
	}
	for _, l := range fromPID(p.Pid()) {
		body := l.Record.GetBody().GetStringValue()
		if l.Resource["service.name"] != "connectors-under-test" || l.Resource["service.version"] != supervisor.RuntimeVersion {
			t.Errorf("record %q: resource service.name %v, service.version %v; want %q, %q",
				body, l.Resource["service.name"], l.Resource["service.version"], "connectors-under-test", supervisor.RuntimeVersion)
		}
		if key, relayed := l.Attrs["connector_key"]; relayed {
			t.Errorf("runner line %q (connector_key %v) exported by the supervisor; runners export their own", body, key)
		}
	}
	runnerPID := statsOf(t, p, nil)["sink/a"].PID
	waitFor(t, p, waitLong, "the runner's own records at the collector", func() bool {
		return slices.ContainsFunc(fromPID(runnerPID), func(l testkit.ReceivedLog) bool {
			return l.Resource["service.name"] == "connectors-under-test" && l.Resource["iggy.connector.key"] == "a"
		})
	})

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("after SIGTERM: exit code %d, %v; want 0", code, err)
	}
	if !slices.ContainsFunc(fromPID(p.Pid()), hasBody("iggy-connectors stopped")) {
		t.Errorf("the last record (%q) was not flushed at exit; got %d records", "iggy-connectors stopped", len(fromPID(p.Pid())))
	}
	if strings.Contains(p.Logs(), "telemetry export failed") {
		t.Errorf("export errors reported:\n%s", p.Logs())
	}
}
