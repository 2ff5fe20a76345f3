package supervisor_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The REST API drops slow clients, refuses big bodies and caps its connections, over real TCP
// connections, while normal requests still work.
func TestAPIBoundsSlowClients(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"
read_timeout = "2s"
idle_timeout = "3s"
write_timeout = "50ms"
max_connections = 3`)
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	raw := testkit.RawHTTP{Network: "tcp", Addr: p.Addr, Header: withKey()}
	testkit.CheckClientBounds(t, raw, "/sinks/out/configs", "/sinks/out/configs")

	// Restart drains and starts a runner, far longer than the 50 ms write timeout: its own budget
	// lets the answer through.
	resp, body, err := p.Do("POST", "/sinks/out/restart", withKey(), "")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("restart with a 50ms write timeout: %v %v %s", resp, err, body)
	}
}

// attackAnswerWait bounds the wait for answers that must come at once: far beyond any honest
// answer, and far below the 10-minute read timeout these tests configure, so only an answer that
// does not wait on the slow bodies arrives within it.
const attackAnswerWait = 60 * time.Second

// The second review's attack, 300 connections from 5 client addresses (60 each, under the
// per-client cap of 64; together over the cap of 256) each sending a body slowly, against the
// default connection caps and a 10-minute read timeout, so that only the slow-body defences can
// keep the API answering:
//   - POST /health announcing 1,000,000 bytes, a byte a second: no route reads that body, so each
//     is answered 405 without it, and /health answers;
//   - POST .../configs, which reads its body, at 1,100 bytes a second (above the 1 KiB/s floor):
//     the 256 connections within the cap stay open, unanswered, and GET /health answers all the
//     same (the 44 beyond the cap wait on the probe reserve, then get 503 or make way for it);
//   - the same route a byte a second: each body is cut after the first second (408), with a log
//     line naming the floor.
func TestProbesAnswerUnderSlowBodies(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"
read_timeout = "10m"`)
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	raw := testkit.RawHTTP{Network: "tcp", Addr: p.Addr, Header: withKey()}
	sources := testkit.LoopbackSources(5)

	t.Run("POST /health, a byte a second", func(t *testing.T) {
		a := raw.SlowBodies(t, sources, 300, "POST", "/health", 1_000_000, 1, time.Second)
		if status := getWithin(raw, "/health", attackAnswerWait); status != http.StatusOK {
			t.Fatalf("GET /health: %d (-1: no answer within %s)", status, attackAnswerWait)
		}
		statuses, sent := a.Answers(attackAnswerWait)
		for i, s := range statuses {
			if s != http.StatusMethodNotAllowed {
				t.Fatalf("slow POST /health %d: status %d after %d of 1000000 body bytes; want 405 without the body (-1: no answer)", i, s, sent[i])
			}
		}
	})
	t.Run("a route that reads its body, above the floor", func(t *testing.T) {
		a := raw.SlowBodies(t, sources, 300, "POST", "/sinks/slow/configs", 1_000_000, 1100, time.Second)
		status := getWithin(raw, "/health", attackAnswerWait)
		open, ended := a.Snapshot()
		if status != http.StatusOK {
			t.Fatalf("GET /health while 300 slow bodies hold the API: %d (-1: no answer within %s); %d of them open, the others %v", status, attackAnswerWait, open, ended)
		}
		const maxConnections = 256 // the default cap
		if open < maxConnections {
			t.Fatalf("GET /health answered, but only %d slow bodies were still held (the others: %v); want the %d within the cap", open, ended, maxConnections)
		}
		for s := range ended {
			if s != http.StatusServiceUnavailable && s != 0 {
				t.Fatalf("a slow body beyond the cap ended with status %d; want 503 or a close (the others: %v)", s, ended)
			}
		}
	})
	t.Run("a route that reads its body, below the floor", func(t *testing.T) {
		a := raw.SlowBodies(t, sources, 10, "POST", "/sinks/slow/configs", 1_000_000, 1, time.Second)
		statuses, sent := a.Answers(attackAnswerWait)
		for i, s := range statuses {
			if s != http.StatusRequestTimeout {
				t.Fatalf("body %d, a byte a second: status %d after %d bytes; want 408 (cut by the floor)", i, s, sent[i])
			}
		}
		waitFor(t, p, waitLong, "the log line of a cut body", func() bool {
			return strings.Contains(p.Logs(), "request body cut") && strings.Contains(p.Logs(), "http.min_body_rate")
		})
	})
}

// getWithin is RawHTTP.Get bounded by wait: -1 when no answer came in time.
func getWithin(raw testkit.RawHTTP, path string, wait time.Duration) int {
	done := make(chan int, 1)
	go func() { done <- raw.Get(path) }()
	select {
	case s := <-done:
		return s
	case <-time.After(wait):
		return -1
	}
}
