package supervisor_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// silentIggy accepts TCP connections and never answers, so whatever logs in to it waits for its
// own timeout; it counts the connections.
func silentIggy(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted.Add(1)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), accepted
}

// POST .../configs/validate (a process each) and the offsets routes (an Iggy login each) run a
// few at a time: with every place taken by a request waiting on Iggy, one more is answered 429
// with Retry-After at once.
func TestValidateAndOffsetsRunAFewAtATime(t *testing.T) {
	broker := testkit.StartBroker(t)
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	iggy, accepted := silentIggy(t)
	runtimeFile := filepath.Join(f.dir, "config.toml")
	data, err := os.ReadFile(runtimeFile)
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "config.toml", strings.Replace(string(data), broker.Addr(), iggy, 1))
	f.write(t, "connectors/idle.toml", disabled(sinkFile("idle", f.plugin("null_sink"), "demo", "events", "")))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	jsonCT := http.Header{"Content-Type": {"application/json"}}
	body := fmt.Sprintf(`{"enabled":true,"name":"n","path":%q,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":{}}`, f.plugin("null_sink"))
	for _, c := range []struct {
		name, method, path, body string
		places                   int
	}{
		{"validate", http.MethodPost, "/sinks/idle/configs/validate", body, 2},
		{"offsets", http.MethodGet, "/sinks/idle/offsets", "", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := accepted.Load()
			var wg sync.WaitGroup
			for range c.places {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, _ = p.Do(c.method, c.path, jsonCT, c.body)
				}()
			}
			waitFor(t, p, waitLong, "every place to wait on Iggy", func() bool { return accepted.Load() >= before+int32(c.places) })
			resp, answer, err := p.Do(c.method, c.path, jsonCT, c.body)
			if err != nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
				!strings.Contains(string(answer), `"code":"too_many_requests"`) {
				t.Fatalf("one request more: %v %v %s, want 429 with Retry-After: 1", resp, err, answer)
			}
			wg.Wait()
		})
	}
}
