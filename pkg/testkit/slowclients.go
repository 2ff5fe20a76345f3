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
