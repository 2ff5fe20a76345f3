package runner_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A sink behind a hostile network: a real TCP proxy between the runner and the dev broker that
// makes the server look hung, or lies about a reply's length. Over both protocols the runner stops
// reporting ready, says why in last_error, and reconnects (a new client in the broker's list); the
// proxy holds new connections off until the test has seen the first two, so nothing depends on
// timing, and then the sink consumes again.

func TestSinkReconnectsFromAServerThatStopsAnswering(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		sinkThroughHostileProxy(t, protocol, "no answer from the iggy server in time", (*testkit.Proxy).StallReplies0)
	})
}

func TestSinkReconnectsFromAReplyLengthItCannotTrust(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		sinkThroughHostileProxy(t, protocol, "reply larger than the request can be answered with", (*testkit.Proxy).LieAboutNextReply)
	})
}

func sinkThroughHostileProxy(t *testing.T, protocol, wantError string, misbehave func(*testkit.Proxy)) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	proxy := testkit.StartProxy(t, srv.Addr(), protocol)
	env := withConfig(append(baseEnvOver(protocol, srv, t.TempDir()),
		"IGGY_CONNECTORS_IGGY_ADDRESS="+proxy.Addr(),
		"IGGY_CONNECTORS_IGGY_REQUEST_TIMEOUT=1s",
	), sinkTOML("guarded", testkit.PluginPath(t, "stdout_sink"), "demo", "events",
		`batch_length = 10
poll_interval = "20ms"`, `print_payload = true`))
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	fillTopic(t, srv, "demo", "events", 5)
	p.WaitUntil(t, waitLong, "the sink to consume the first messages", func() bool {
		return testkit.OrZero(p.Stats(t).MessagesProcessed) >= 5
	})
	waitReady(t, p, true)
	before := clientIDs(srv)

	proxy.Hold()
	misbehave(proxy)
	waitReady(t, p, false)
	p.WaitUntil(t, waitLong, "last_error to say why", func() bool {
		le := p.Stats(t).LastError
		return le != nil && strings.Contains(le.Message, wantError)
	})
	if st := p.Stats(t).Status; st != "running" {
		t.Fatalf("status %q while the client reconnects, want running", st)
	}

	proxy.Release()
	p.WaitUntil(t, waitLong, "a reconnect in the broker's client list", func() bool {
		for _, id := range clientIDs(srv) {
			if !slices.Contains(before, id) {
				return true
			}
		}
		return false
	})
	waitReady(t, p, true)
	fillTopic(t, srv, "demo", "events", 5)
	p.WaitUntil(t, waitLong, "the sink to consume again after the reconnect", func() bool {
		return testkit.OrZero(p.Stats(t).MessagesProcessed) >= 10
	})
	if !strings.Contains(p.Logs(), "iggy connection lost") {
		t.Errorf("no WARN line about the lost connection:\n%s", p.Logs())
	}
}

// waitReady waits for /ready to answer 200 (ready) or 503.
func waitReady(t *testing.T, p *testkit.RunnerProc, ready bool) {
	t.Helper()
	want := http.StatusServiceUnavailable
	if ready {
		want = http.StatusOK
	}
	p.WaitUntil(t, waitLong, "/ready to answer "+http.StatusText(want), func() bool {
		code, _, err := p.Get("/ready", nil)
		return err == nil && code == want
	})
}

func clientIDs(srv *devbroker.Server) []uint32 {
	var ids []uint32
	for _, c := range srv.Clients() {
		ids = append(ids, c.ID)
	}
	return ids
}
