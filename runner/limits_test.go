package runner_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A runner's endpoint, on its Unix socket, drops slow clients, refuses big bodies and caps its
// connections, from the same IGGY_CONNECTORS_HTTP_* variables as the supervisor.
func TestEndpointBoundsSlowClients(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("bounded", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "a = 1")),
		testkit.ClientBoundsEnv...)
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	// No route takes a body: a POST is answered 405 at once without it (413 when declared too large).
	testkit.CheckClientBounds(t, testkit.RawHTTP{Network: "unix", Addr: p.SocketPath}, "/health", "/health")
}

// The second review's attack on a runner's TCP endpoint: 300 connections from 5 client addresses
// (60 each, under the per-client cap of 64; together over the cap of 256) each POST /health
// announcing 1,000,000 bytes and sending one byte a second, with a 10-minute read timeout. No
// route of a runner reads a body, so each is answered 405 without its body, and GET /health and
// GET /ready keep answering. Answers are awaited at most a minute: far beyond what an answer takes,
// far below the read timeout, so only an answer that does not wait on the bodies comes in time.
func TestProbesAnswerUnderSlowBodies(t *testing.T) {
	const wait = time.Minute
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("slow", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "a = 1")),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_READ_TIMEOUT=10m")
	p := testkit.StartRunner(t, env)
	raw := testkit.RawHTTP{Network: "tcp", Addr: p.WaitTCPEndpoint(t, waitLong)}
	p.WaitUntil(t, waitLong, "the sink ready", func() bool { return raw.Get("/ready") == http.StatusOK })

	a := raw.SlowBodies(t, testkit.LoopbackSources(5), 300, "POST", "/health", 1_000_000, 1, time.Second)
	for _, path := range []string{"/health", "/ready"} {
		got := make(chan int, 1)
		go func() { got <- raw.Get(path) }()
		select {
		case s := <-got:
			if s != http.StatusOK {
				t.Fatalf("GET %s under the attack: %d", path, s)
			}
		case <-time.After(wait):
			t.Fatalf("GET %s did not answer within %s under the attack", path, wait)
		}
	}
	statuses, sent := a.Answers(wait)
	for i, s := range statuses {
		if s != http.StatusMethodNotAllowed {
			t.Fatalf("slow POST /health %d: status %d after %d of 1000000 body bytes; want 405 without the body (-1: no answer)", i, s, sent[i])
		}
	}
}
