package httplimit_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func bodyServer(t *testing.T) (testkit.RawHTTP, *testkit.LogBuffer) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /read", func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		switch {
		case httplimit.IsTooSlow(err):
			httplimit.WriteTooSlow(w, err)
		case httplimit.IsTooLarge(err):
			httplimit.WriteTooLarge(w)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		default:
			_, _ = io.WriteString(w, strings.Repeat("n", len(data)/1000))
		}
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, _ *http.Request) {
		for range 30 {
			_, _ = io.WriteString(w, "data: tick\n\n")
			_ = http.NewResponseController(w).Flush()
			time.Sleep(100 * time.Millisecond) // a stream that takes its time: the pace is the subject
		}
	})
	l := config.HTTPLimits{ReadTimeout: 10 * time.Minute, MaxBodyBytes: 1 << 20, MinBodyRate: 1024, MaxConnections: 64}
	logs := &testkit.LogBuffer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httplimit.NewServer(httplimit.Requests(mux, httplimit.Policy{Limits: l, Log: slog.New(slog.NewTextHandler(logs, nil))}), l, nil)
	go func() { _ = srv.Serve(httplimit.Listener(srv, ln, l)) }()
	t.Cleanup(func() { srv.Close() })
	return testkit.RawHTTP{Network: "tcp", Addr: ln.Addr().String()}, logs
}

// A request whose route takes no body (a probe, a 404, a 405, a GET carrying one) is answered at
// once without its body, however slowly that would come, and its connection closes after the
// answer instead of waiting for the rest.
func TestUnreadBodiesAreNotWaitedFor(t *testing.T) {
	raw, _ := bodyServer(t)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/health", http.StatusMethodNotAllowed},
		{"GET", "/health", http.StatusOK},
		{"POST", "/nowhere", http.StatusNotFound},
		{"PUT", "/read", http.StatusMethodNotAllowed},
	} {
		a := raw.SlowBodies(t, testkit.LoopbackSources(1), 1, c.method, c.path, 1_000_000, 1, time.Second)
		statuses, sent := a.Answers(probeWait)
		if statuses[0] != c.status {
			t.Fatalf("%s %s with a body a byte a second: status %d after %d bytes; want %d at once (-1: none)", c.method, c.path, statuses[0], sent[0], c.status)
		}
	}
}

// A body slower than http.min_body_rate after its first second is cut: the handler's read fails
// (408), a WARN line names the floor and the request. A body that keeps to the floor, and a long
// answer to a request without a body, are never cut.
func TestBodyRateFloor(t *testing.T) {
	raw, logs := bodyServer(t)
	a := raw.SlowBodies(t, testkit.LoopbackSources(1), 1, "POST", "/read", 1_000_000, 1, time.Second)
	statuses, sent := a.Answers(probeWait)
	if statuses[0] != http.StatusRequestTimeout {
		t.Fatalf("a body a byte a second: status %d after %d bytes; want 408", statuses[0], sent[0])
	}
	for _, want := range []string{"request body cut", "http.min_body_rate", "min_body_rate=1024", "path=/read", "client=127.0.0.2"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, logs)
		}
	}

	// 2,000 bytes every second for 3 seconds: above the floor, read whole.
	c := raw.Dial(t)
	if _, err := io.WriteString(c, "POST /read HTTP/1.1\r\nHost: test\r\nContent-Length: 6000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if i > 0 {
			time.Sleep(time.Second) // the client's pace (2,000 bytes a second) is the subject
		}
		if _, err := io.WriteString(c, strings.Repeat("b", 2000)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(probeWait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "nnnnnn" {
		t.Fatalf("a body at 2,000 bytes a second: %d %q; want it read whole", resp.StatusCode, body)
	}

	// A 3-second answer to a GET: every event arrives.
	s := raw.Dial(t)
	raw.SendGet(t, s, "/stream")
	_ = s.SetReadDeadline(time.Now().Add(probeWait))
	resp, err = http.ReadResponse(bufio.NewReader(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := io.ReadAll(resp.Body)
	if n := strings.Count(string(events), "data: tick"); n != 30 {
		t.Fatalf("a long answer got %d of its 30 events", n)
	}
}
