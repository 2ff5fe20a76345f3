package httplimit_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
)

// serve runs handler behind NewServer and Listener with limits l on a loopback port.
func serve(t *testing.T, l config.HTTPLimits, handler http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httplimit.NewServer(httplimit.Requests(handler, httplimit.Policy{Limits: l}), l, nil)
	go func() { _ = srv.Serve(httplimit.Listener(srv, ln, l)) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// A handler slower than the write timeout has its answer cut, unless it extended its own budget.
func TestExtendWriteLetsSlowHandlersAnswer(t *testing.T) {
	l := config.HTTPLimits{WriteTimeout: 100 * time.Millisecond}
	slow := func(extend bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if extend {
				httplimit.ExtendWrite(w, l.WriteTimeout, 2*time.Second)
			}
			time.Sleep(400 * time.Millisecond) // a handler slower than the write timeout: the subject
			_, _ = io.WriteString(w, "done")
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/plain", slow(false))
	mux.Handle("/extended", slow(true))
	base := serve(t, l, mux)
	client := &http.Client{Timeout: 10 * time.Second}
	if resp, err := client.Get(base + "/plain"); err == nil {
		resp.Body.Close()
		t.Fatalf("a handler past the write timeout answered %d; want the answer cut", resp.StatusCode)
	}
	resp, err := client.Get(base + "/extended")
	if err != nil {
		t.Fatalf("a handler with an extended budget: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "done" {
		t.Fatalf("extended: %d %q", resp.StatusCode, body)
	}
}

// A chunked body (no Content-Length) over the limit fails the handler's read with the error
// IsTooLarge recognises; one within the limit reads whole.
func TestBodyLimitsChunkedBodies(t *testing.T) {
	l := config.HTTPLimits{MaxBodyBytes: 1000}
	base := serve(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if httplimit.IsTooLarge(err) {
			httplimit.WriteTooLarge(w)
			return
		}
		_, _ = io.WriteString(w, strings.ToUpper(string(data[:3])))
	}))
	for _, c := range []struct {
		size   int
		status int
	}{{1000, http.StatusOK}, {1001, http.StatusRequestEntityTooLarge}} {
		// A reader of unknown length makes the client send the body chunked.
		body := io.MultiReader(strings.NewReader(strings.Repeat("a", c.size)))
		resp, err := http.Post(base, "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("chunked body of %d bytes: %d %q; want %d", c.size, resp.StatusCode, text, c.status)
		}
		if c.status == http.StatusRequestEntityTooLarge && string(text) != httplimit.TooLargeText {
			t.Fatalf("413 body %q", text)
		}
	}
	if httplimit.IsTooLarge(errors.New("other")) {
		t.Fatal("IsTooLarge of an unrelated error")
	}
}
