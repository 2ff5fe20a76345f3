package supervisor_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// activeConfig is the part of GET .../configs/active these tests read.
type activeConfig struct {
	Version        uint64  `json:"version"`
	RolledBackFrom *uint64 `json:"rolled_back_from"`
	RollbackReason string  `json:"rollback_reason"`
	RolledBackAt   string  `json:"rolled_back_at"`
}

// createVersion posts a new version of connector kind/key and returns its number.
func createVersion(t *testing.T, p *testkit.SupervisorProc, kind, key, body string) uint64 {
	t.Helper()
	resp, out, err := p.Do(http.MethodPost, "/"+kind+"s/"+key+"/configs", jsonBody, body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create a version of %s/%s: %v %v %s", kind, key, resp, err, out)
	}
	var v struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v.Version
}

// activate sends PUT .../configs/active with body and returns the status and body of the answer.
func activate(t *testing.T, p *testkit.SupervisorProc, kind, key, body string) (int, string) {
	t.Helper()
	resp, out, err := p.Do(http.MethodPut, "/"+kind+"s/"+key+"/configs/active", jsonBody, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

// sinkBody is a create body of a sink on demo/events with the given plugin, plugin_config (JSON,
// "" for none) and transforms (JSON, "" for none).
func sinkBody(plugin, pluginConfig, transforms string) string {
	body := fmt.Sprintf(`{"enabled": true, "name": "sink out", "path": %q,
		"streams": [{"stream": "demo", "topics": ["events"], "schema": "json", "batch_length": 20, "poll_interval": "5ms"}]`, plugin)
	if pluginConfig != "" {
		body += `, "plugin_config": ` + pluginConfig
	}
	if transforms != "" {
		body += `, "transforms": ` + transforms
	}
	return body + "}"
}

// Activation with a probe over both protocols: a source feeds a stdout sink while bad versions of
// each are activated with a probe. A sink version whose plugin does not open (its plugin_config is
// missing), one whose plugin crashes on its first batch, and one whose transform fails every
// message (over the max error rate asked for) are each rolled back within the window: 409 naming
// the reason and the version kept, the previous version active and running again, the rollback in
// GET .../configs/active and counted; a source version whose plugin does not open likewise. A good
// version stays. Nothing is lost: once the source stops, the sink has delivered every offset of
// the topic (at least once: the rewind may repeat what a rejected version took) and the topic
// holds the source's sequence without a gap.
func TestActivationProbeRollsBackBadVersions(t *testing.T) {
	testkit.OverProtocols(t, activationProbe)
}

func activationProbe(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\ninterval_ms = 20\nmessages_per_batch = 5\n")
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("stdout_sink"), "demo", "events", "")+"\n[plugin_config]\nprint_payload = true\n")
	schema := filepath.Join(f.dir, "order.fbs")
	if err := os.WriteFile(schema, []byte("table Order { id: int; }\nroot_type Order;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)
	processed := func() uint64 { return testkit.OrZero(statsOf(t, p, nil)["sink/out"].MessagesProcessed) }
	waitFor(t, p, waitLong, "messages flowing", func() bool { return processed() > 0 })

	failEvery := fmt.Sprintf(`{"flat_buffer_convert": {"enabled": true, "source_format": "flat_buffer", "target_format": "json",
		"include_paths": [], "preserve_unknown_fields": false, "schema_path": %q,
		"conversion_options": {"verify_buffers": true, "pretty_json": false, "include_metadata": false, "buffer_size_hint": 1024, "strict_mode": false}}}`, schema)
	bad := []struct {
		name, body, activation, reason string
	}{
		{"plugin_config missing", sinkBody(f.plugin("fault"), "", ""), `"probe": "3s"`, "runner exited"},
		{"plugin crashes", sinkBody(f.plugin("fault"), `{"crash_on_batch": 1}`, ""), `"probe": "3s"`, "SIGSEGV"},
		{"transform fails every message", sinkBody(f.plugin("stdout_sink"), `{"print_payload": true}`, failEvery), `"probe": "2s", "max_error_rate": 0.5`, "messages failed in the 2s probe"},
	}
	rollbacks := 0
	for _, b := range bad {
		v := createVersion(t, p, "sink", "out", b.body)
		before := processed()
		code, body := activate(t, p, "sink", "out", fmt.Sprintf(`{"version": %d, %s}`, v, b.activation))
		if code != http.StatusConflict || !strings.Contains(body, `"code":"activation_rolled_back"`) || !strings.Contains(body, b.reason) ||
			!strings.Contains(body, "version 0 is active and running again") {
			t.Fatalf("%s: PUT active answered %d %s; want 409 rolled back (%s)", b.name, code, body, b.reason)
		}
		rollbacks++
		var a activeConfig
		getJSON(t, p, nil, "/sinks/out/configs/active", &a)
		if a.Version != 0 || a.RolledBackFrom == nil || *a.RolledBackFrom != v || !strings.Contains(a.RollbackReason, b.reason) || a.RolledBackAt == "" {
			t.Fatalf("%s: GET configs/active = %+v", b.name, a)
		}
		var versions []struct {
			Version uint64 `json:"version"`
			Active  bool   `json:"active"`
		}
		getJSON(t, p, nil, "/sinks/out/configs", &versions)
		if len(versions) == 0 || versions[len(versions)-1].Version != v || versions[len(versions)-1].Active {
			t.Fatalf("%s: the rolled-back version is not kept, inactive: %+v", b.name, versions)
		}
		metricIs(t, p, `iggy_connector_config_rollbacks_total{connector_key="out",connector_type="sink"}`, float64(rollbacks))
		waitFor(t, p, waitLong, b.name+": the kept version delivering again", func() bool {
			return statsOf(t, p, nil)["sink/out"].Status == "running" && processed() > before
		})
	}

	// A source version whose plugin does not open is rolled back too, its state put back.
	v := createVersion(t, p, "source", "gen", fmt.Sprintf(`{"enabled": true, "name": "source gen", "path": %q,
		"streams": [{"stream": "demo", "topic": "events", "schema": "json"}], "plugin_config": {"open_code": -1}}`, f.plugin("fault")))
	resp, body, err := p.Do(http.MethodPut, "/sources/gen/configs/active?probe=3s", jsonBody, fmt.Sprintf(`{"version": %d}`, v))
	if err != nil || resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "runner exited") {
		t.Fatalf("source: PUT active ?probe=3s: %v %v %s", resp, err, body)
	}

	// A good version stays, and the rollback record goes with the version it was about.
	good := createVersion(t, p, "sink", "out", sinkBody(f.plugin("stdout_sink"), `{"print_payload": true}`, ""))
	start := time.Now()
	if code, body := activate(t, p, "sink", "out", fmt.Sprintf(`{"version": %d, "probe": "2s"}`, good)); code != http.StatusNoContent {
		t.Fatalf("good version: %d %s", code, body)
	}
	if time.Since(start) < 2*time.Second {
		t.Fatalf("the answer came before the probe window ended")
	}
	var a activeConfig
	getJSON(t, p, nil, "/sinks/out/configs/active", &a)
	if a.Version != good || a.RolledBackFrom != nil {
		t.Fatalf("after the good version: %+v", a)
	}

	// Nothing lost: stop the source, let the sink drain, and compare with the topic.
	if resp, body, err := p.Do(http.MethodPost, "/sources/gen/stop", nil, ""); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("stop the source: %v %v %s", resp, err, body)
	}
	cli := testkit.LoggedInClient(t, broker)
	last := lastOffset(t, cli)
	waitFor(t, p, waitLong, "the sink to drain the topic", func() bool { return storedOffset(t, cli, "out") == int64(last) })
	seen := offsetsLogged("out", p.Logs())
	for off := uint64(0); off <= last; off++ {
		if seen[off] == 0 {
			t.Fatalf("offset %d of %d never reached the kept stdout sink", off, last)
		}
	}
	checkSourceSequence(t, cli)
}

// lastOffset is the last offset of demo/events partition 0.
func lastOffset(t *testing.T, cli iggcon.Client) uint64 {
	t.Helper()
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	topic, err := cli.GetTopic(sid, tid)
	if err != nil || len(topic.Partitions) == 0 {
		t.Fatalf("get topic: %v", err)
	}
	return topic.Partitions[0].CurrentOffset
}

// checkSourceSequence reads demo/events and checks the fault source's {"seq":N} has no gap.
func checkSourceSequence(t *testing.T, cli iggcon.Client) {
	t.Helper()
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	partition := uint32(0)
	seen := map[int]bool{}
	maxSeq := -1
	for offset := uint64(0); ; {
		polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(offset), 1000, false, &partition)
		if err != nil {
			t.Fatal(err)
		}
		if len(polled.Messages) == 0 {
			break
		}
		for _, m := range polled.Messages {
			var body struct {
				Seq int `json:"seq"`
			}
			if err := json.Unmarshal(m.Payload, &body); err != nil {
				t.Fatalf("payload %q: %v", m.Payload, err)
			}
			seen[body.Seq] = true
			maxSeq = max(maxSeq, body.Seq)
		}
		offset += uint64(len(polled.Messages))
	}
	for seq := 0; seq <= maxSeq; seq++ {
		if !seen[seq] {
			t.Fatalf("sequence %d of the source is missing (max %d)", seq, maxSeq)
		}
	}
}

// With the HTTP config provider the active version is set through the service's API, and a
// rollback sets the previous one there again; the rejected version stays stored in the service.
func TestActivationProbeWithHTTPProvider(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	svc := &configService{plugin: f.plugin("null_sink"), versions: map[uint64]string{}}
	svc.versions[0] = svc.sinkJSON(0, "first")
	// Version 1 reads a topic that does not exist: its runner exits with a fatal error.
	svc.versions[1] = strings.Replace(svc.sinkJSON(1, "second"), `"topics":["events"]`, `"topics":["nowhere"]`, 1)
	server := httptest.NewServer(svc)
	t.Cleanup(server.Close)
	f.write(t, "config.toml", fmt.Sprintf(`[http]
address = "127.0.0.1:0"

[http.metrics]
enabled = true

[iggy]
address = %q

[state]
path = "state"

[connectors]
config_type = "http"
base_url = %q
timeout = "2s"
activation_probe = "3s"

[connectors.retry]
enabled = false
max_attempts = 0
initial_backoff = "10ms"
max_backoff = "10ms"
backoff_multiplier = 2
`, broker.Addr(), server.URL))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	code, body := activate(t, p, "sink", "remote", `{"version": 1}`) // the probe from activation_probe
	if code != http.StatusConflict || !strings.Contains(body, "runner exited") || !strings.Contains(body, "version 0 is active") {
		t.Fatalf("PUT active: %d %s", code, body)
	}
	svc.mu.Lock()
	active, kept := svc.active, svc.versions[1] != ""
	svc.mu.Unlock()
	if active != 0 || !kept {
		t.Fatalf("the service's active version is %d (want 0 again), version 1 kept: %v", active, kept)
	}
	var a activeConfig
	getJSON(t, p, nil, "/sinks/remote/configs/active", &a)
	if a.Version != 0 || a.RolledBackFrom == nil || *a.RolledBackFrom != 1 {
		t.Fatalf("GET configs/active = %+v", a)
	}
	if c := statsOf(t, p, nil)["sink/remote"]; c.Status != "running" {
		t.Fatalf("the kept version is %s", c.Status)
	}
	// A bad probe value names itself.
	if code, body := activate(t, p, "sink", "remote", `{"version": 1, "probe": "soon"}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "probe") {
		t.Fatalf("bad probe: %d %s", code, body)
	}
	resp, out, err := p.Do(http.MethodPut, "/sinks/remote/configs/active?max_error_rate=2", jsonBody, `{"version": 1}`)
	if err != nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), "Failed to deserialize query string: max_error_rate") {
		t.Fatalf("bad max_error_rate in the query: %v %v %s", resp, err, out)
	}
}
