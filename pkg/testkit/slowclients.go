package testkit

// Slow and greedy HTTP clients over real connections, for the tests of the servers' client bounds
// (read, idle and write timeouts, body limit, connection cap).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closeWait is how long a probe waits for the server to drop a slow client: far beyond the
// timeouts CheckClientBounds expects, so only a missing bound fails it.
const closeWait = 15 * time.Second

// RawHTTP is an HTTP endpoint reached over raw connections: Network "tcp" with Addr host:port, or
// "unix" with Addr the socket path. Header is sent with every request (an api-key, say).
type RawHTTP struct {
	Network, Addr string
	Header        http.Header
}

// Dial opens one connection.
func (e RawHTTP) Dial(tb testing.TB) net.Conn {
	tb.Helper()
	c, err := net.DialTimeout(e.Network, e.Addr, 5*time.Second)
	if err != nil {
		tb.Fatalf("dial %s %s: %v", e.Network, e.Addr, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// head renders a request's head with Content-Length length (none when negative). The Host is
// "test" unless Header names one.
func (e RawHTTP) head(method, path string, length int) string {
	var b strings.Builder
	host := "test"
	if h := e.Header.Get("Host"); h != "" {
		host = h
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, host)
	for k, vs := range e.Header {
		if http.CanonicalHeaderKey(k) == "Host" {
			continue
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", length)
	}
	b.WriteString("\r\n")
	return b.String()
}

// WaitClosed reads from c until the server closes it, at most wait long, and returns how long
// that took and whether it was closed. Whatever the server answers first is read and dropped.
func WaitClosed(c net.Conn, wait time.Duration) (time.Duration, bool) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return time.Since(start), false
	}
	return time.Since(start), true
}

// StallMidBody sends the head of a POST to path announcing a 1000-byte body, then 10 bytes of it,
// and stalls. It returns how long the server took to close the connection (within wait).
func (e RawHTTP) StallMidBody(tb testing.TB, path string, wait time.Duration) (time.Duration, bool) {
	tb.Helper()
	c := e.Dial(tb)
	if _, err := io.WriteString(c, e.head("POST", path, 1000)+`{"a":"1234`); err != nil {
		tb.Fatalf("write: %v", err)
	}
	return WaitClosed(c, wait)
}

// IdleAfterRequest sends one GET of path, reads its answer, then leaves the keep-alive connection
// idle. It returns the answer's status and how long the server took to close the connection.
func (e RawHTTP) IdleAfterRequest(tb testing.TB, path string, wait time.Duration) (int, time.Duration, bool) {
	tb.Helper()
	c := e.Dial(tb)
	if _, err := io.WriteString(c, e.head("GET", path, -1)); err != nil {
		tb.Fatalf("write: %v", err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		tb.Fatalf("GET %s: the server closed the connection right away (Connection: close)", path)
	}
	d, closed := WaitClosed(&bufferedConn{Conn: c, r: br}, wait)
	return resp.StatusCode, d, closed
}

// Post sends a POST of body to path on a fresh connection and returns the status and body of the
// answer.
func (e RawHTTP) Post(tb testing.TB, path string, body io.Reader, length int) (int, string) {
	tb.Helper()
	c := e.Dial(tb)
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	go func() {
		// The server may answer (and close) before the whole body is sent.
		_, _ = io.WriteString(c, e.head("POST", path, length))
		_, _ = io.Copy(c, body)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// SendGet writes a GET of path on c.
func (e RawHTTP) SendGet(tb testing.TB, c net.Conn, path string) {
	tb.Helper()
	if _, err := io.WriteString(c, e.head("GET", path, -1)); err != nil {
		tb.Fatalf("write: %v", err)
	}
}

// Answer waits up to wait for the status of the answer to the request sent on c; 0 when none
// came in time (the connection stays usable: nothing of it was read).
func Answer(tb testing.TB, c net.Conn, wait time.Duration) int {
	tb.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0
		}
		tb.Fatalf("read answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// bufferedConn reads through the bufio.Reader that may hold bytes already read from Conn.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// ClientBoundsEnv configures the bounds CheckClientBounds expects, as runtime variables.
var ClientBoundsEnv = []string{"IGGY_CONNECTORS_HTTP_READ_TIMEOUT=2s", "IGGY_CONNECTORS_HTTP_IDLE_TIMEOUT=3s", "IGGY_CONNECTORS_HTTP_MAX_CONNECTIONS=3"}

// CheckClientBounds runs the probes shared by the supervisor's and the runner's endpoints, each
// configured with a read timeout of 2s, an idle timeout of 3s (longer than the cap probe), the
// default 1 MiB body limit and at most 3 connections (ClientBoundsEnv), idle ones closed to make room. postPath takes a POST body,
// getPath answers a GET.
func CheckClientBounds(t *testing.T, raw RawHTTP, postPath, getPath string) {
	t.Helper()
	t.Run("stalled mid-body", func(t *testing.T) {
		if d, closed := raw.StallMidBody(t, postPath, closeWait); !closed {
			t.Fatalf("a client stalled mid-body still connected after %s (read timeout 2s)", d)
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		status, d, closed := raw.IdleAfterRequest(t, getPath, closeWait)
		if status != http.StatusOK {
			t.Fatalf("GET %s: status %d", getPath, status)
		}
		if !closed {
			t.Fatalf("an idle keep-alive connection still open after %s (idle timeout 3s)", d)
		}
	})
	t.Run("2 MiB body", func(t *testing.T) {
		const size = 2 << 20
		body := `{"a":"` + strings.Repeat("x", size-8) + `"}`
		status, text := raw.Post(t, postPath, strings.NewReader(body), len(body))
		if status != http.StatusRequestEntityTooLarge || text != "Failed to buffer the request body: length limit exceeded" {
			t.Fatalf("POST of 2 MiB: %d %q; want 413 with the length-limit text", status, text)
		}
	})
	t.Run("idle connections make room at the cap", func(t *testing.T) {
		held := make([]net.Conn, 0, 3)
		for range 3 {
			c := raw.Dial(t)
			raw.SendGet(t, c, getPath)
			if status := Answer(t, c, 10*time.Second); status != http.StatusOK {
				t.Fatalf("connection %d of 3: status %d", len(held)+1, status)
			}
			held = append(held, c)
		}
		extra := raw.Dial(t)
		raw.SendGet(t, extra, getPath)
		if status := Answer(t, extra, 10*time.Second); status != http.StatusOK {
			t.Fatalf("a 4th connection while 3 idle ones fill the cap: status %d (0: no answer)", status)
		}
		if _, closed := WaitClosed(held[0], 10*time.Second); !closed {
			t.Fatal("the longest idle connection was not closed to make room")
		}
		for _, c := range held[1:] {
			c.Close()
		}
	})
	t.Run("normal requests", func(t *testing.T) {
		for i := range 5 {
			c := raw.Dial(t)
			raw.SendGet(t, c, getPath)
			if status := Answer(t, c, 10*time.Second); status != http.StatusOK {
				t.Fatalf("request %d: status %d", i, status)
			}
			c.Close()
		}
	})
}

// SlowBodyAttack is many connections, each bound to one of a few local source addresses, that
// each send a request head announcing a body and then trickle the body, as a client holding a
// server's connections would. Every connection reads what the server answers.
type SlowBodyAttack struct {
	conns   []*slowBodyConn
	stop    chan struct{}
	ended   chan struct{} // closed when the first connection got an answer or was closed
	endOnce sync.Once
}

type slowBodyConn struct {
	net.Conn
	done   chan struct{} // closed once the answer came or the server closed the connection
	status atomic.Int64  // then: the answer's status, or 0 when the server closed without one
	sent   atomic.Int64
}

// SlowBodies opens n connections to the endpoint (TCP only), the i-th bound to sources[i %
// len(sources)] (Linux routes all of 127.0.0.0/8 to loopback, so 127.0.0.2, 127.0.0.3, ... are
// distinct clients), sends on each the head of method path announcing a body of length bytes,
// then chunk bytes of it every interval until the server answers or closes, or the test ends.
// It returns once every connection has sent its head and first chunk.
func (e RawHTTP) SlowBodies(tb testing.TB, sources []net.IP, n int, method, path string, length, chunk int, interval time.Duration) *SlowBodyAttack {
	tb.Helper()
	a := &SlowBodyAttack{stop: make(chan struct{}), ended: make(chan struct{})}
	tb.Cleanup(func() { close(a.stop) })
	head := e.head(method, path, length)
	for i := range n {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: sources[i%len(sources)]}}
		c, err := d.Dial("tcp", e.Addr)
		if err != nil {
			tb.Fatalf("slow body connection %d from %s: %v", i, sources[i%len(sources)], err)
		}
		tb.Cleanup(func() { c.Close() })
		sc := &slowBodyConn{Conn: c, done: make(chan struct{})}
		if _, err := io.WriteString(c, head+strings.Repeat("x", min(chunk, length))); err != nil {
			tb.Fatalf("slow body connection %d: %v", i, err)
		}
		sc.sent.Store(int64(min(chunk, length)))
		a.conns = append(a.conns, sc)
		go a.read(sc)
		go a.trickle(sc, length, chunk, interval)
	}
	return a
}

func (a *SlowBodyAttack) read(sc *slowBodyConn) {
	resp, err := http.ReadResponse(bufio.NewReader(sc.Conn), nil)
	status := 0
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	sc.status.Store(int64(status))
	close(sc.done)
	a.endOnce.Do(func() { close(a.ended) })
}

func (a *SlowBodyAttack) trickle(sc *slowBodyConn, length, chunk int, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for sc.sent.Load() < int64(length) {
		select {
		case <-a.stop:
			return
		case <-sc.done:
			return
		case <-t.C:
		}
		n := min(int64(chunk), int64(length)-sc.sent.Load())
		if _, err := io.WriteString(sc.Conn, strings.Repeat("x", int(n))); err != nil {
			return
		}
		sc.sent.Add(n)
	}
}

// Snapshot counts the connections still open and unanswered, and the others by their answer's
// status (0: closed by the server without an answer).
func (a *SlowBodyAttack) Snapshot() (open int, ended map[int]int) {
	ended = map[int]int{}
	for _, sc := range a.conns {
		select {
		case <-sc.done:
			ended[int(sc.status.Load())]++
		default:
			open++
		}
	}
	return open, ended
}

// Ended is closed when the first connection of the attack got an answer or was closed by the
// server: until then, the server holds every one of them open, unanswered.
func (a *SlowBodyAttack) Ended() <-chan struct{} { return a.ended }

// Answers waits, at most wait in all, for every connection's answer and returns each status (0:
// closed without an answer, -1: none yet) with the number of body bytes it had sent by then.
func (a *SlowBodyAttack) Answers(wait time.Duration) (statuses []int, sent []int64) {
	deadline := time.After(wait)
	expired := false
	for _, sc := range a.conns {
		if !expired {
			select {
			case <-sc.done:
			case <-deadline:
				expired = true
			}
		}
		s := -1
		select {
		case <-sc.done:
			s = int(sc.status.Load())
		default:
		}
		statuses = append(statuses, s)
		sent = append(sent, sc.sent.Load())
	}
	return statuses, sent
}

// Get asks path on a fresh connection from the default loopback address and returns the answer's
// status, or 0 when the connection failed; it waits as long as the answer takes.
func (e RawHTTP) Get(path string) int {
	c, err := net.Dial(e.Network, e.Addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	if _, err := io.WriteString(c, e.head("GET", path, -1)); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// LoopbackSources are n distinct client addresses on loopback: 127.0.0.2, 127.0.0.3, ...
func LoopbackSources(n int) []net.IP {
	out := make([]net.IP, n)
	for i := range out {
		out[i] = net.IPv4(127, 0, 0, byte(2+i))
	}
	return out
}
