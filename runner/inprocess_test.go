package runner_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/runner"
)

// A source and a sink run in this test process through runner.Main (so `go test -race` sees the
// pumps, the plugin callbacks and the endpoint together) while their endpoints are read
// continuously; when their context ends both stop cleanly with exit code 0.
func TestMainInProcessUnderLoadStopsCleanly(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 2}))
	env := baseEnv(srv, t.TempDir())
	dir := t.TempDir()
	sockets := []string{dir + "/source.sock", dir + "/sink.sock"}
	configs := [][]string{
		append(withConfig(env, sourceTOML("gen", testkit.PluginPath(t, "random_source"), "demo", "events", "", `interval = "2ms"`)),
			"IGGY_CONNECTORS_HTTP_ADDRESS=unix:"+sockets[0]),
		append(withConfig(env, sinkTOML("out", testkit.PluginPath(t, "stdout_sink"), "demo", "events", "batch_length = 20", "")),
			"IGGY_CONNECTORS_HTTP_ADDRESS=unix:"+sockets[1]),
	}
	var wg sync.WaitGroup
	for _, e := range configs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out testkit.LogBuffer
			code := runner.Main(e, &out, &out, func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 3*time.Second)
			})
			if code != runnerproc.ExitOK {
				t.Errorf("exit %d; output:\n%s", code, out.String())
			}
		}()
	}

	stop := make(chan struct{})
	var processed atomic.Uint64
	var readers sync.WaitGroup
	for _, sock := range sockets {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			}}}
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				for _, path := range []string{"/stats", "/metrics", "/health"} {
					resp, err := c.Get("http://runner" + path)
					if err != nil {
						continue // not listening yet, or already stopped
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					var s metrics.ConnectorStats
					if path == "/stats" && json.Unmarshal(body, &s) == nil && s.MessagesProcessed != nil {
						processed.Store(max(processed.Load(), *s.MessagesProcessed))
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if processed.Load() == 0 {
		t.Fatal("the sink never reported a processed message while running")
	}
}
