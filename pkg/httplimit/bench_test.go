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

// BenchmarkHealthUnderSlowBodies measures GET /health, each on a fresh connection, while 300
// connections from 5 client addresses hold a route that reads its body at 1,100 bytes a second
// (above the floor, so they stay), with the default caps: 256 held within the cap, the rest on
// the probe reserve. Compare with BenchmarkHealthIdle for what the attack costs a probe.
func BenchmarkHealthUnderSlowBodies(b *testing.B) {
	raw := benchServer(b)
	a := raw.SlowBodies(b, testkit.LoopbackSources(5), 300, "POST", "/read", 1_000_000, 1100, time.Second)
	benchHealth(b, raw)
	if open, _ := a.Snapshot(); open < 256 {
		b.Fatalf("only %d slow bodies held during the run", open)
	}
}

// BenchmarkHealthIdle is GET /health on a fresh connection with nothing else going on.
func BenchmarkHealthIdle(b *testing.B) { benchHealth(b, benchServer(b)) }

func benchServer(b *testing.B) testkit.RawHTTP {
	b.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /read", func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	l := config.DefaultHTTPLimits()
	l.ReadTimeout = 10 * time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := httplimit.NewServer(httplimit.Requests(mux, httplimit.Policy{Limits: l}), l, nil)
	go func() { _ = srv.Serve(httplimit.Listener(srv, ln, l)) }()
	b.Cleanup(func() { srv.Close() })
	return testkit.RawHTTP{Network: "tcp", Addr: ln.Addr().String()}
}

func benchHealth(b *testing.B, raw testkit.RawHTTP) {
	b.ResetTimer()
	for b.Loop() {
		if s := raw.Get("/health"); s != http.StatusOK {
			b.Fatalf("GET /health: %d", s)
		}
	}
}
