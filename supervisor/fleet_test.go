package supervisor_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

const fleetRunnerKey = "runner-key"

// startFleetRunner starts a real runner process of connector file cfg on a loopback TCP port,
// guarded by fleetRunnerKey, and returns it with its endpoint as fleet.runners lists it.
func startFleetRunner(t *testing.T, broker *devbroker.Server, cfg string) (*testkit.RunnerProc, string) {
	t.Helper()
	p := testkit.StartRunner(t, []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=" + fleetRunnerKey,
		"IGGY_CONNECTOR_CONFIG=" + cfg,
	})
	return p, "http://" + p.WaitTCPEndpoint(t, waitLong)
}

// startAttached starts a supervisor in attach mode over runners, in this process.
func startAttached(t *testing.T, broker *devbroker.Server, runners ...string) string {
	t.Helper()
	return startAttachedWith(t, broker, config.Fleet{Runners: runners}, nil)
}

// startAttachedWith starts a supervisor in attach mode with fleet's runners and DNS names, the
// names answered by resolver.
func startAttachedWith(t *testing.T, broker *devbroker.Server, fleet config.Fleet, resolver *net.Resolver) string {
	t.Helper()
	rt := config.DefaultRuntime()
	rt.HTTP.Address = "127.0.0.1:0"
	rt.HTTP.Metrics.Enabled = true
	rt.Iggy.Address = broker.Addr()
	fleet.Enabled, fleet.Refresh, fleet.RunnerAPIKey = true, 100*time.Millisecond, fleetRunnerKey
	rt.Fleet = fleet
	if err := rt.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := supervisor.New(supervisor.Options{Runtime: rt, Resolver: resolver, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return "http://" + s.APIAddr()
}

type fleetReplica struct {
	Endpoint  string          `json:"endpoint"`
	Status    string          `json:"status"`
	PID       int32           `json:"pid"`
	LastSeen  uint64          `json:"last_seen"`
	LastError json.RawMessage `json:"last_error"`
}

type fleetEntry struct {
	ID       uint32         `json:"id"`
	Key      string         `json:"key"`
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Replicas []fleetReplica `json:"replicas"`
}

// replica finds the replica of endpoint (replicas are listed in endpoint order).
func (e fleetEntry) replica(endpoint string) fleetReplica {
	for _, r := range e.Replicas {
		if r.Endpoint == endpoint {
			return r
		}
	}
	return fleetReplica{}
}

func getBody(t *testing.T, url string, into any) {
	t.Helper()
	resp, body, err := testkit.DoHTTP("GET", url, nil, "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v %s", url, err, body)
	}
	if into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v: %s", url, err, body)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, waitLong, what, cond)
}

// waitRunnerStatus waits until the runner at endpoint shows status in its /health.
func waitRunnerStatus(t *testing.T, endpoint, status string) {
	t.Helper()
	waitUntil(t, endpoint+" "+status, func() bool {
		var h struct {
			ConnectorStatus string `json:"connector_status"`
		}
		getBody(t, endpoint+"/health", &h)
		return h.ConnectorStatus == status
	})
}

func sinkEntry(t *testing.T, base, key string) (fleetEntry, bool) {
	var list []fleetEntry
	getBody(t, base+"/sinks", &list)
	for _, e := range list {
		if e.Key == key {
			return e, true
		}
	}
	return fleetEntry{}, false
}

// Attach mode over real runner processes: two replicas of one sink and a source are two
// connectors, with the same shapes as the spawn mode's plus "replicas"; /stats sums the replicas'
// counters; /metrics labels each runner's series with its replica; configs come masked from the
// runners; pause is forwarded to every replica; what belongs to the orchestrator answers 409;
// offsets are read from Iggy. A replica killed with SIGKILL stays listed as unreachable and a
// forwarded call names it.
func TestFleetMergedAPI(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 2}))
	sink := sinkFile("pg", testkit.PluginPath(t, "null_sink"), "demo", "events", "") + "\n[plugin_config]\npassword = \"hunter2\"\nhost = \"db\"\n"
	source := sourceFile("gen", testkit.PluginPath(t, "fault"), "demo", "events", "") + "\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 10\n"
	r1, ep1 := startFleetRunner(t, broker, sink)
	r2, ep2 := startFleetRunner(t, broker, sink)
	rs, eps := startFleetRunner(t, broker, source)
	base := startAttached(t, broker, ep1, ep2, eps)

	waitUntil(t, "pg running with two replicas", func() bool {
		e, ok := sinkEntry(t, base, "pg")
		return ok && e.Status == "running" && len(e.Replicas) == 2
	})
	e, _ := sinkEntry(t, base, "pg")
	if rep1, rep2 := e.replica(ep1), e.replica(ep2); e.Name != "sink pg" || e.ID != 2 ||
		rep1.PID != int32(r1.Pid()) || rep2.PID != int32(r2.Pid()) || rep1.LastSeen == 0 || rep2.LastSeen == 0 {
		t.Fatalf("GET /sinks entry = %+v", e)
	}
	var sources []fleetEntry
	getBody(t, base+"/sources", &sources)
	if len(sources) != 1 || sources[0].Key != "gen" || sources[0].ID != 1 || len(sources[0].Replicas) != 1 || sources[0].Replicas[0].PID != int32(rs.Pid()) {
		t.Fatalf("GET /sources = %+v", sources)
	}

	orchestrator := "orchestrator owns"
	testkit.CheckCalls(t, base, []testkit.HTTPCall{
		testkit.Call("GET", "/sinks/pg", nil, 200, `"streams":[{"stream":"demo"`),
		testkit.Call("GET", "/sinks/pg", nil, 200, `"replicas":[{"endpoint":"`),
		testkit.Call("GET", "/sinks/pg", nil, 200, `"endpoint":"`+ep2+`"`),
		testkit.Call("GET", "/sinks/pg/configs/active", nil, 200, `"password":"******"`),
		testkit.Call("GET", "/sinks/pg/configs", nil, 200, `"active":true`),
		testkit.Call("GET", "/sinks/pg/configs/plugin?format=json", nil, 200, `"host":"db"`),
		testkit.Call("GET", "/sinks/pg/configs/plugin?format=json", nil, 200, `"password":"******"`),
		testkit.Call("GET", "/sinks/pg/transforms", nil, 200, `[]`),
		testkit.Call("GET", "/sinks/nope", nil, 404, "sink_not_found"),
		testkit.Call("POST", "/sinks/pg/configs", nil, 409, orchestrator),
		testkit.Call("PUT", "/sinks/pg/configs/active", nil, 409, orchestrator),
		testkit.Call("DELETE", "/sinks/pg/configs", nil, 409, orchestrator),
		testkit.Call("POST", "/sinks/pg/stop", nil, 409, orchestrator),
		testkit.Call("POST", "/sinks/pg/start", nil, 409, orchestrator),
		testkit.Call("POST", "/sources/gen/restart", nil, 409, orchestrator),
		testkit.Call("PUT", "/sinks/pg/offsets", nil, 409, orchestrator),
		testkit.Call("DELETE", "/sinks/pg/offsets", nil, 409, orchestrator),
		testkit.Call("POST", "/sinks/pg/preview", nil, 409, "iggy-connectors test CONNECTOR_FILE"),
		testkit.Call("POST", "/sources/gen/preview", nil, 409, orchestrator),
		testkit.Call("GET", "/sinks/pg/offsets", nil, 200, `"consumer_group":"iggy-connect-sink-pg"`),
	})
	for _, path := range []string{"/sinks/pg/configs/active", "/sinks/pg/configs/plugin?format=yaml", "/sinks/pg"} {
		if _, body, _ := testkit.DoHTTP("GET", base+path, nil, ""); strings.Contains(string(body), "hunter2") {
			t.Fatalf("GET %s shows the secret: %s", path, body)
		}
	}

	// Once the sinks consumed some of the source's messages, pause the source through the
	// supervisor: its runner takes it; then the counters settle and /stats shows each sink counter
	// as the sum of the two replicas' own. (Paused before its first batch, the source would leave
	// nothing to sum.)
	key := http.Header{"Api-Key": {fleetRunnerKey}}
	own := func(ep string) uint64 {
		_, body, err := testkit.DoHTTP("GET", ep+"/stats", key, "")
		var st struct {
			MessagesConsumed uint64 `json:"messages_consumed"`
		}
		if err != nil || json.Unmarshal(body, &st) != nil {
			t.Fatalf("runner /stats: %v %s", err, body)
		}
		return st.MessagesConsumed
	}
	waitUntil(t, "the sinks consumed the source's first messages", func() bool { return own(ep1)+own(ep2) > 0 })
	testkit.CheckCalls(t, base, []testkit.HTTPCall{testkit.Call("POST", "/sources/gen/pause", nil, 204, "")})
	waitRunnerStatus(t, eps, "paused")
	var consumed, sum uint64
	waitUntil(t, "/stats pg = sum of its replicas", func() bool {
		var st struct {
			SinksTotal   uint32 `json:"sinks_total"`
			SinksRunning uint32 `json:"sinks_running"`
			MemoryUsage  uint64 `json:"memory_usage"`
			Connectors   []struct {
				Key              string `json:"key"`
				MessagesConsumed uint64 `json:"messages_consumed"`
				MemoryUsage      uint64 `json:"memory_usage"`
			} `json:"connectors"`
		}
		getBody(t, base+"/stats", &st)
		sum = own(ep1) + own(ep2)
		for _, c := range st.Connectors {
			if c.Key == "pg" {
				consumed = c.MessagesConsumed
				if st.SinksTotal != 1 || st.SinksRunning != 1 || c.MemoryUsage == 0 || st.MemoryUsage <= c.MemoryUsage {
					t.Fatalf("/stats = %+v", st)
				}
			}
		}
		return consumed > 0 && consumed == sum
	})

	scrape := func() string {
		_, body, err := testkit.DoHTTP("GET", base+"/metrics", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	metrics := scrape()
	for _, want := range []string{`replica="` + ep1 + `"`, `replica="` + ep2 + `"`, `replica="` + eps + `"`, "iggy_connector_up{", "iggy_connectors_sinks_total"} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %s:\n%s", want, metrics)
		}
	}

	// A replica killed: the connector stays listed, the replica shows unreachable, the answers
	// still come, and a forwarded call names the replica that did not take it.
	r2.Kill9()
	waitUntil(t, "r2 unreachable", func() bool {
		e, ok := sinkEntry(t, base, "pg")
		return ok && len(e.Replicas) == 2 && e.replica(ep2).Status == "unreachable"
	})
	e, _ = sinkEntry(t, base, "pg")
	if e.Status != "running" || e.replica(ep1).Status != "running" || len(e.replica(ep2).LastError) == 0 {
		t.Fatalf("after r2 died: %+v", e)
	}
	testkit.CheckCalls(t, base, []testkit.HTTPCall{
		testkit.Call("POST", "/sinks/pg/pause", nil, 502, ep2),
		testkit.Call("GET", "/stats", nil, 200, `"key":"pg"`),
		testkit.Call("GET", "/sinks/pg", nil, 200, `"status":"unreachable"`),
	})
	waitRunnerStatus(t, ep1, "paused")
	if m := scrape(); strings.Contains(m, `replica="`+ep2+`"`) || !strings.Contains(m, `replica="`+ep1+`"`) {
		t.Fatalf("/metrics after r2 died:\n%s", m)
	}
}

// fleet.dns through the supervisor: an SRV name served by a real DNS server on loopback, whose
// records gain a runner while the supervisor runs.
func TestFleetDNSDiscovery(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	sink := sinkFile("pg", testkit.PluginPath(t, "null_sink"), "demo", "events", "") + "\n[plugin_config]\n"
	_, ep1 := startFleetRunner(t, broker, sink)
	_, ep2 := startFleetRunner(t, broker, sink)
	dnsSrv := testkit.StartDNS(t)
	dnsSrv.SetIPs("runner.test", net.IPv4(127, 0, 0, 1))
	srv := func(endpoints ...string) []*net.SRV {
		var out []*net.SRV
		for _, ep := range endpoints {
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(ep, "http://"))
			n, _ := strconv.Atoi(port)
			out = append(out, &net.SRV{Target: "runner.test", Port: uint16(n)})
		}
		return out
	}
	dnsSrv.SetSRV("_http._tcp.runners.test", srv(ep1))
	base := startAttachedWith(t, broker, config.Fleet{DNS: []string{"_http._tcp.runners.test"}}, dnsSrv.Resolver())
	waitUntil(t, "pg listed with its one replica", func() bool {
		e, ok := sinkEntry(t, base, "pg")
		return ok && len(e.Replicas) == 1 && e.Replicas[0].Endpoint == ep1
	})
	dnsSrv.SetSRV("_http._tcp.runners.test", srv(ep1, ep2))
	waitUntil(t, "the runner added to DNS listed", func() bool {
		e, ok := sinkEntry(t, base, "pg")
		return ok && len(e.Replicas) == 2
	})
}

// A bad [fleet] value stops startup naming the key; attach mode reads no connector provider (no
// config_dir is needed) and spawns nothing.
func TestFleetStartup(t *testing.T) {
	for _, c := range []struct {
		name, file string
		starts     bool
		wantLog    string
	}{
		{"no runner named", "[fleet]\nenabled = true\n", false, "fleet.runners"},
		{"bad dns entry", "[fleet]\nenabled = true\ndns = [\"runners.consul\"]\n", false, "fleet.dns"},
		{"bad refresh", "[fleet]\nenabled = true\nrunners = [\"127.0.0.1:1\"]\nrefresh = \"1ms\"\n", false, "fleet.refresh"},
		{"no provider read", "[fleet]\nenabled = true\nrunners = [\"127.0.0.1:1\"]\n[connectors]\nconfig_type = \"http\"\n", true, "attach mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0"}
			var p *testkit.SupervisorProc
			if c.starts {
				p = testkit.StartSupervisor(t, dir, env, waitLong)
				testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{testkit.Call("GET", "/sinks", nil, 200, "[]")})
			} else {
				p = testkit.StartSupervisorNoWait(t, dir, env)
				if code, err := p.Wait(waitLong); err != nil || code != 1 {
					t.Fatalf("exit code %d, %v; want 1", code, err)
				}
			}
			if !strings.Contains(p.Logs(), c.wantLog) {
				t.Fatalf("output lacks %q:\n%s", c.wantLog, p.Logs())
			}
		})
	}
}
