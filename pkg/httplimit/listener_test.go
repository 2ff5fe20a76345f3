package httplimit_test

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// probeWait bounds the wait for an answer that must come: far beyond any honest answer, so only a
// starved server fails it.
const probeWait = 10 * time.Second

// capServer serves /health and, blocking until release is closed, /busy, with the connection caps
// of l and no idle timeout (so only the cap can close an idle connection).
func capServer(t *testing.T, max, perClient uint32) (testkit.RawHTTP, chan struct{}, <-chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, _ *http.Request) { <-release })
	mux.HandleFunc("GET /other", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	l := config.HTTPLimits{MaxConnections: max, MaxConnectionsPerClient: perClient}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httplimit.NewServer(httplimit.Requests(mux, httplimit.Policy{Limits: l}), l, nil)
	capped := httplimit.Listener(srv, ln, l)
	// The server marks a connection idle only after its answer went out, so a client can read the
	// answer first: idleConns waits for the server's own word.
	idle := make(chan struct{}, 64)
	track := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		track(c, s)
		if s == http.StateIdle {
			select {
			case idle <- struct{}{}:
			default: // more idle moments than a test waits for
			}
		}
	}
	go func() { _ = srv.Serve(capped) }()
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return testkit.RawHTTP{Network: "tcp", Addr: ln.Addr().String()}, release, idle
}

// idleConns opens n keep-alive connections that each got one answer and that the server has
// marked idle.
func idleConns(t *testing.T, raw testkit.RawHTTP, idle <-chan struct{}, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c := raw.Dial(t)
		raw.SendGet(t, c, "/health")
		if status := testkit.Answer(t, c, probeWait); status != http.StatusOK {
			t.Fatalf("idle connection %d: status %d", i, status)
		}
		select {
		case <-idle:
		case <-time.After(probeWait):
			t.Fatalf("the server never marked connection %d idle", i)
		}
		conns = append(conns, c)
	}
	return conns
}

// probeMakesRoom asks path on a new connection while the cap is full of what connections, and
// wants it answered and oldest closed to make room.
func probeMakesRoom(t *testing.T, raw testkit.RawHTTP, path string, oldest net.Conn, what string) {
	t.Helper()
	probe := raw.Dial(t)
	raw.SendGet(t, probe, path)
	if status := testkit.Answer(t, probe, probeWait); status != http.StatusOK {
		t.Fatalf("%s with the cap full of %s connections: status %d (0: no answer)", path, what, status)
	}
	if _, closed := testkit.WaitClosed(oldest, probeWait); !closed {
		t.Fatalf("the oldest %s connection was not closed to make room", what)
	}
}

// At the cap, idle keep-alive connections make room: /health answers, and the longest idle
// connection is the one closed.
func TestIdleConnectionsMakeRoomAtTheCap(t *testing.T) {
	raw, _, idleSeen := capServer(t, 8, 0)
	idle := idleConns(t, raw, idleSeen, 8)
	probeMakesRoom(t, raw, "/health", idle[0], "idle")
	// The others are still served.
	raw.SendGet(t, idle[7], "/health")
	if status := testkit.Answer(t, idle[7], probeWait); status != http.StatusOK {
		t.Fatalf("a younger idle connection after the probe: status %d", status)
	}
}

// Busy connections are never closed to make room: a probe over the cap is answered at once on
// the probe reserve, while they go on; another request over the cap waits a grace for room, then
// is answered 503 with Retry-After.
func TestBusyConnectionsAreNotClosed(t *testing.T) {
	raw, release, _ := capServer(t, 2, 0)
	busy := []net.Conn{raw.Dial(t), raw.Dial(t)}
	for _, c := range busy {
		raw.SendGet(t, c, "/busy")
	}
	waiting := raw.Dial(t)
	raw.SendGet(t, waiting, "/other")
	for range 2 * httplimit.ProbeReserve { // the reserve frees itself: each probe's connection closes
		probe := raw.Dial(t)
		raw.SendGet(t, probe, "/health")
		if status := testkit.Answer(t, probe, probeWait); status != http.StatusOK {
			t.Fatalf("a probe while both connections are busy: status %d (0: no answer)", status)
		}
		if _, closed := testkit.WaitClosed(probe, probeWait); !closed {
			t.Fatal("a probe's connection on the reserve stayed open after its answer")
		}
	}
	if status := testkit.Answer(t, waiting, probeWait); status != http.StatusServiceUnavailable {
		t.Fatalf("a request that is no probe over the cap, both connections busy: status %d; want 503", status)
	}
	close(release)
	for i, c := range busy {
		if status := testkit.Answer(t, c, probeWait); status != http.StatusOK {
			t.Fatalf("busy connection %d: status %d; it must finish, not be closed", i, status)
		}
		c.Close()
	}
	again := raw.Dial(t)
	raw.SendGet(t, again, "/other")
	if status := testkit.Answer(t, again, probeWait); status != http.StatusOK {
		t.Fatalf("a request once the busy ones ended: status %d", status)
	}
}

// A connection that sends no request is closed to make room once it had its grace, for a request
// that is no probe; a probe is answered at once on the reserve, closing none of them.
func TestSilentConnectionsMakeRoomAfterTheirGrace(t *testing.T) {
	raw, _, _ := capServer(t, 2, 0)
	silent := []net.Conn{raw.Dial(t), raw.Dial(t)}
	probe := raw.Dial(t)
	raw.SendGet(t, probe, "/health")
	if status := testkit.Answer(t, probe, probeWait); status != http.StatusOK {
		t.Fatalf("/health with the cap full of silent connections: status %d (0: no answer)", status)
	}
	probeMakesRoom(t, raw, "/other", silent[0], "silent")
}

// One client address holds at most the per-client cap: its own idle connections are closed first,
// a connection over the cap with none idle is closed at once, and other addresses are served.
func TestPerClientCap(t *testing.T) {
	raw, _, idleSeen := capServer(t, 0, 2)
	idle := idleConns(t, raw, idleSeen, 2)
	third := raw.Dial(t)
	raw.SendGet(t, third, "/busy")
	if _, closed := testkit.WaitClosed(idle[0], probeWait); !closed {
		t.Fatal("the client's longest idle connection was not closed for its third")
	}
	// Now one idle and one busy: the idle one goes for a fourth, which then waits on /busy too.
	fourth := raw.Dial(t)
	raw.SendGet(t, fourth, "/busy")
	if _, closed := testkit.WaitClosed(idle[1], probeWait); !closed {
		t.Fatal("the client's other idle connection was not closed for its fourth")
	}
	// Two busy: a fifth from this address is closed without an answer.
	fifth := raw.Dial(t)
	raw.SendGet(t, fifth, "/health")
	if _, closed := testkit.WaitClosed(fifth, probeWait); !closed {
		t.Fatal("a connection over the per-client cap with nothing idle was not closed")
	}
	// Another loopback address is another client.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: probeWait}
	other, err := d.Dial("tcp", raw.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	raw.SendGet(t, other, "/health")
	if status := testkit.Answer(t, other, probeWait); status != http.StatusOK {
		t.Fatalf("a second client while the first is at its cap: status %d", status)
	}
}
