package fleet_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// startRunner starts a real runner process of a null sink with key on a loopback TCP port and
// returns it with its host and port.
func startRunner(t *testing.T, broker *devbroker.Server, key string) (*testkit.RunnerProc, string, uint16) {
	t.Helper()
	cfg := fmt.Sprintf("type = \"sink\"\nkey = %q\nenabled = true\nversion = 1\nname = \"sink %s\"\npath = %q\n\n[[streams]]\nstream = \"demo\"\ntopics = [\"events\"]\nschema = \"json\"\n\n[plugin_config]\n",
		key, key, testkit.PluginPath(t, "null_sink"))
	p := testkit.StartRunner(t, []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=runner-key",
		"IGGY_CONNECTOR_CONFIG=" + cfg,
	})
	host, port, err := net.SplitHostPort(p.WaitTCPEndpoint(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return p, host, uint16(n)
}

func endpoints(s *fleet.Snapshot) map[string]fleet.Replica {
	out := map[string]fleet.Replica{}
	for _, r := range s.Replicas {
		out[r.Endpoint] = r
	}
	return out
}

// waitSnapshot refreshes until cond holds of the snapshot.
func waitSnapshot(t *testing.T, f *fleet.Fleet, what string, cond func(*fleet.Snapshot) bool) *fleet.Snapshot {
	t.Helper()
	var s *fleet.Snapshot
	if !testkit.Within(30*time.Second, func() bool {
		f.Refresh(context.Background())
		s = f.Snapshot()
		return cond(s)
	}) {
		t.Fatalf("%s: not reached; last snapshot %+v", what, s)
	}
	return s
}

// Discovery through a real DNS server on loopback: an SRV name whose records change (a runner
// added, one removed) and an A name with a port; a runner killed with SIGKILL stays listed as
// unreachable and is dropped a grace period after it also left discovery.
func TestDNSDiscoveryFollowsChanges(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	r1, _, p1 := startRunner(t, broker, "pg")
	_, _, p2 := startRunner(t, broker, "pg")
	_, _, p3 := startRunner(t, broker, "es")
	dnsSrv := testkit.StartDNS(t)
	for _, n := range []string{"r1.runners.test", "r2.runners.test", "r3.runners.test", "es.test"} {
		dnsSrv.SetIPs(n, net.IPv4(127, 0, 0, 1))
	}
	srvName := "_http._tcp.runners.test"
	dnsSrv.SetSRV(srvName, []*net.SRV{{Target: "r1.runners.test", Port: p1}})
	ep := func(port uint16) string { return "http://127.0.0.1:" + strconv.Itoa(int(port)) }

	refresh := 100 * time.Millisecond
	f, err := fleet.New(fleet.Options{DNS: []string{srvName, "es.test:" + strconv.Itoa(int(p3))}, Refresh: refresh,
		RunnerAPIKey: "runner-key", Resolver: dnsSrv.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	s := waitSnapshot(t, f, "r1 and the A name found", func(s *fleet.Snapshot) bool { return len(s.Replicas) == 2 })
	got := endpoints(s)
	if r := got[ep(p1)]; r.Key != "pg" || r.Kind != "sink" || r.PID != int32(r1.Pid()) || !r.Discovered {
		t.Fatalf("replica of r1 = %+v", r)
	}
	if r := got[ep(p3)]; r.Key != "es" || len(r.Config) == 0 || len(r.Families) == 0 {
		t.Fatalf("replica of the A name = %+v", r)
	}

	// A runner added to the SRV name.
	dnsSrv.SetSRV(srvName, []*net.SRV{{Target: "r1.runners.test", Port: p1}, {Target: "r2.runners.test", Port: p2}})
	waitSnapshot(t, f, "r2 added", func(s *fleet.Snapshot) bool { _, ok := endpoints(s)[ep(p2)]; return ok })

	// r1 killed: listed as unreachable, its counters kept, while discovery still has it.
	r1.Kill9()
	s = waitSnapshot(t, f, "r1 unreachable", func(s *fleet.Snapshot) bool { return !endpoints(s)[ep(p1)].Reachable() })
	if r := endpoints(s)[ep(p1)]; r.Status != fleet.StatusUnreachable || r.LastError == nil || r.LastSeen.IsZero() || r.Stats.Key != "pg" || r.Families != nil {
		t.Fatalf("killed replica = %+v", r)
	}
	pg, ok := s.Connector("sink", "pg")
	if !ok || len(pg.Replicas) != 2 {
		t.Fatalf("connector pg = %+v, %v; want both replicas", pg, ok)
	}

	// r1 removed from DNS: dropped once the grace period (3 refreshes) passed; r2 stays.
	dnsSrv.SetSRV(srvName, []*net.SRV{{Target: "r2.runners.test", Port: p2}})
	// First it stays listed (gone from discovery, within the grace period), then it goes.
	waitSnapshot(t, f, "r1 left discovery", func(s *fleet.Snapshot) bool { r, ok := endpoints(s)[ep(p1)]; return ok && !r.Discovered })
	s = waitSnapshot(t, f, "r1 dropped", func(s *fleet.Snapshot) bool { _, ok := endpoints(s)[ep(p1)]; return !ok })
	if r := endpoints(s)[ep(p2)]; !r.Reachable() || r.Key != "pg" {
		t.Fatalf("r2 = %+v", r)
	}

	// A failing lookup keeps the name's previous answer.
	dnsSrv.SetIPs("es.test")
	s = waitSnapshot(t, f, "es still there", func(s *fleet.Snapshot) bool { return true })
	if _, ok := endpoints(s)[ep(p3)]; !ok {
		t.Fatalf("the A name's runner vanished when its name stopped resolving: %+v", s.Replicas)
	}
}

// The runners' key is sent: with a wrong one every runner answers 401 and none is listed.
func TestWrongRunnerKeyListsNothing(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	_, host, port := startRunner(t, broker, "pg")
	f, err := fleet.New(fleet.Options{Runners: []string{net.JoinHostPort(host, strconv.Itoa(int(port)))}, Refresh: time.Second, RunnerAPIKey: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	f.Refresh(context.Background())
	if s := f.Snapshot(); len(s.Replicas) != 0 || s.Pending != 1 {
		t.Fatalf("snapshot with a wrong key = %+v", s)
	}
}
