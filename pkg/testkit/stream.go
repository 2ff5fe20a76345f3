package testkit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// EventStream is a Server-Sent Events stream (a tap, a followed log) a test reads event by event.
type EventStream struct {
	Resp   *http.Response
	events chan streamItem
	cancel context.CancelFunc
}

type streamItem struct {
	msg tap.Message
	err error
}

// OpenStream GETs url with client (no timeout of its own: the stream lasts) and header, and fails
// the test unless the answer is 200 text/event-stream. The stream is closed at test cleanup.
func OpenStream(tb testing.TB, client *http.Client, url string, header http.Header) *EventStream {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tap.ContentType {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		cancel()
		tb.Fatalf("GET %s: status %d, content type %q: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return newEventStream(tb, resp, cancel)
}

func newEventStream(tb testing.TB, resp *http.Response, cancel context.CancelFunc) *EventStream {
	s := &EventStream{Resp: resp, events: make(chan streamItem, 1024), cancel: cancel}
	go func() {
		r := tap.NewReader(resp.Body)
		for {
			m, err := r.Next()
			s.events <- streamItem{m, err}
			if err != nil {
				close(s.events)
				return
			}
		}
	}()
	tb.Cleanup(s.Close)
	return s
}

// Next is the next event, failing the test when none comes within timeout or the stream ends.
func (s *EventStream) Next(tb testing.TB, timeout time.Duration) tap.Message {
	tb.Helper()
	m, err := s.NextOrEnd(timeout)
	if err != nil {
		tb.Fatalf("next event: %v", err)
	}
	return m
}

// NextOrEnd is the next event, or the error that ended the stream (io.EOF when the server closed
// it), or a timeout error.
func (s *EventStream) NextOrEnd(timeout time.Duration) (tap.Message, error) {
	select {
	case it, ok := <-s.events:
		if !ok {
			return tap.Message{}, io.EOF
		}
		return it.msg, it.err
	case <-time.After(timeout):
		return tap.Message{}, fmt.Errorf("no event within %s", timeout)
	}
}

// Close ends the stream from the client's side.
func (s *EventStream) Close() {
	s.cancel()
	s.Resp.Body.Close()
}

// StalledStream is a stream whose body is not read until Resume: the server's writes fill the
// connection's buffers and then block, as with a client that stopped reading.
type StalledStream struct {
	conn net.Conn
	resp *http.Response
}

// OpenStalled dials network/address, sends GET path with header, waits for the answer's headers
// (a 200 event stream: the server has opened the stream) and then reads nothing more.
func OpenStalled(tb testing.TB, network, address, path string, header http.Header) *StalledStream {
	tb.Helper()
	conn, err := net.Dial(network, address)
	if err != nil {
		tb.Fatalf("dial %s %s: %v", network, address, err)
	}
	tb.Cleanup(func() { conn.Close() })
	if uc, ok := conn.(*net.UnixConn); ok {
		_ = uc.SetReadBuffer(4096) // small: the server blocks sooner
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://stalled"+path, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if err := req.Write(conn); err != nil {
		tb.Fatalf("send GET %s: %v", path, err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), req)
	if err != nil {
		tb.Fatalf("GET %s: read the answer's headers: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tap.ContentType {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		tb.Fatalf("GET %s: status %d, content type %q: %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return &StalledStream{conn: conn, resp: resp}
}

// Resume starts reading the stream.
func (s *StalledStream) Resume(tb testing.TB) *EventStream {
	tb.Helper()
	return newEventStream(tb, s.resp, func() { s.conn.Close() })
}

// StreamClient is an HTTP client for streams on the runner's endpoint: its Unix socket, no
// overall timeout.
func (p *RunnerProc) StreamClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", p.SocketPath)
	}}}
}

// OpenStream opens a stream on the runner's endpoint (GET path over its Unix socket).
func (p *RunnerProc) OpenStream(tb testing.TB, path string, header http.Header) *EventStream {
	tb.Helper()
	return OpenStream(tb, p.StreamClient(), "http://runner"+path, header)
}

// HeadThen sends HEAD path and then GET then on one keep-alive connection, and returns the HEAD's
// answer (no body: it is a HEAD's) and the status of the second answer, 0 when it did not come
// within wait. A stream route that answers HEAD by streaming never lets the second request be
// served on that connection, so a second answer shows the HEAD was answered with headers alone.
func (e RawHTTP) HeadThen(tb testing.TB, path, then string, wait time.Duration) (*http.Response, int) {
	tb.Helper()
	c := e.Dial(tb)
	if _, err := io.WriteString(c, e.head(http.MethodHead, path, -1)+e.head(http.MethodGet, then, -1)); err != nil {
		tb.Fatalf("write: %v", err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(wait))
	head, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	if err != nil {
		tb.Fatalf("HEAD %s: %v", path, err)
	}
	head.Body.Close()
	next, err := http.ReadResponse(br, nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return head, 0
	}
	if err != nil {
		tb.Fatalf("GET %s after HEAD %s: %v", then, path, err)
	}
	_, _ = io.Copy(io.Discard, next.Body)
	next.Body.Close()
	return head, next.StatusCode
}
