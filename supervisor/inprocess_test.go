package supervisor_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// The supervisor used as a library: Start, concurrent API traffic (listing, /stats, /metrics,
// restarts) while runners crash and restart, then Shutdown. Run with -race, this is where the
// process manager's shared state is exercised by many goroutines at once.
func TestInProcessConcurrentTraffic(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nmessages_per_batch = 5\ninterval_ms = 10\n")
	f.write(t, "connectors/crashy.toml", sinkFile("crashy", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\ncrash_on_batch = 2\n")
	f.write(t, "connectors/steady.toml", sinkFile("steady", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")

	rt := config.DefaultRuntime()
	rt.HTTP.Address = "127.0.0.1:0"
	rt.HTTP.Metrics.Enabled = true
	rt.Iggy.Address = broker.Addr()
	rt.State.Path = f.dir + "/state"
	rt.Connectors.ConfigDir = f.dir + "/connectors"
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	prov, err := provider.New(rt, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s, err := supervisor.New(supervisor.Options{Runtime: rt, Provider: prov, Logger: log,
		Environ: append(f.env(), "IGGY_SUPERVISOR_RUNNER_PATH="+testkit.RunnerBinary(t))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.APIAddr()
	var wg sync.WaitGroup
	for _, path := range []string{"/sinks", "/sources", "/stats", "/metrics", "/sinks/steady"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Errorf("GET %s: %v", path, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("GET %s: %d", path, resp.StatusCode)
				}
			}
		}()
	}
	for range 3 {
		resp, err := http.Post(base+"/sources/gen/restart", "", nil)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Errorf("restart: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
	}
	wg.Wait()
	s.Shutdown()
	st := s.Stats(context.Background())
	for _, c := range st.Connectors {
		if c.Status != "stopped" {
			t.Errorf("after Shutdown %s/%s is %s, want stopped", c.ConnectorType, c.Key, c.Status)
		}
	}
}

// A shutdown that lands while a restart request is stopping the old runner wins: the restart is
// refused and no new runner is started behind the drained supervisor's back.
func TestInProcessShutdownDuringRestartStartsNothing(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	// close_hang makes stopping the old runner take the runner's whole shutdown timeout (1 s):
	// the window in which Shutdown arrives.
	f.write(t, "connectors/slow.toml", sinkFile("slow", f.plugin("fault"), "demo", "events", "")+"\n[plugin_config]\nclose_hang = true\n")

	rt := config.DefaultRuntime()
	rt.HTTP.Address = "127.0.0.1:0"
	rt.Iggy.Address = broker.Addr()
	rt.State.Path = f.dir + "/state"
	rt.Connectors.ConfigDir = f.dir + "/connectors"
	var logs testkit.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	prov, err := provider.New(rt, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s, err := supervisor.New(supervisor.Options{Runtime: rt, Provider: prov, Logger: log,
		Environ: append(f.env(), "IGGY_SUPERVISOR_RUNNER_PATH="+testkit.RunnerBinary(t), "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=1s")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+s.APIAddr()+"/sinks/slow/restart", "", nil)
		if err != nil {
			restarted <- 0
			return
		}
		resp.Body.Close()
		restarted <- resp.StatusCode
	}()
	// The restart logs this line, then stops the old runner, which takes its whole shutdown
	// timeout (close_hang): Shutdown lands in that window.
	testkit.Eventually(t, waitLong, "the restart to begin stopping the old runner", func() bool {
		return strings.Contains(logs.String(), "restarting connector on request")
	})
	s.Shutdown()
	// The restart answers only once its start attempt, if it made one, has ended: a runner
	// wrongly started behind the drained supervisor's back is in Stats by now.
	code := <-restarted
	st := s.Stats(context.Background())
	if len(st.Connectors) != 1 || st.Connectors[0].Status != "stopped" || code == http.StatusNoContent {
		t.Fatalf("after Shutdown during a restart: restart answered %d, connectors %+v; want a refused restart and status stopped", code, st.Connectors)
	}
}
