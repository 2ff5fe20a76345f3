package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Given a stats page (as the supervisor creates one), the runner counts into it, publishes its
// status and plugin version there and beats; what a reader of the page sees is what the runner's
// own /stats says.
func TestRunnerCountsIntoItsStatsPage(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 25)
	page, err := metrics.CreatePage(filepath.Join(t.TempDir(), "sink.stats"), "paged", metrics.KindSink)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("paged", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
		runnerproc.EnvStatsPage+"="+page.Path())
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "25 messages processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) == 25 })

	own := p.Stats(t)
	st := page.Stats(false)
	if st.PID != int32(p.Pid()) || st.Status != "running" || st.Version != own.Version || st.Version == "unknown" {
		t.Errorf("page: pid %d, status %q, version %q; runner: pid %d, version %q", st.PID, st.Status, st.Version, p.Pid(), own.Version)
	}
	if *st.MessagesConsumed != 25 || *st.MessagesProcessed != 25 {
		t.Errorf("page counts %d consumed, %d processed; want 25, 25", *st.MessagesConsumed, *st.MessagesProcessed)
	}
	// The runner beats on: three times over, a beat newer than the moment the wait began.
	for range 3 {
		since := time.Now()
		p.WaitUntil(t, waitLong, "a heartbeat", func() bool { return page.HeartbeatAge() < time.Since(since) })
	}
}

// A stats page that is not one, or is another connector's, is refused at start with an
// invalid-configuration exit naming the variable and the file.
func TestRunnerRefusesAForeignStatsPage(t *testing.T) {
	dir := t.TempDir()
	other, err := metrics.CreatePage(filepath.Join(dir, "other.stats"), "someone_else", metrics.KindSink)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	garbage := filepath.Join(dir, "garbage.stats")
	info, err := os.Stat(other.Path())
	if err != nil {
		t.Fatal(err)
	}
	// As large as a page, so the header is what is wrong.
	if err := os.WriteFile(garbage, make([]byte, info.Size()), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	for _, tt := range []struct{ path, want string }{
		{other.Path(), "belongs to sink/someone_else, not sink/paged"},
		{garbage, "no stats page header"},
	} {
		env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("paged", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
			runnerproc.EnvStatsPage+"="+tt.path)
		p := testkit.StartRunner(t, env)
		code, err := p.Wait(waitLong)
		if err != nil || code != 2 {
			t.Fatalf("%s: exit %d, %v; want 2", tt.path, code, err)
		}
		if logs := p.Logs(); !strings.Contains(logs, runnerproc.EnvStatsPage) || !strings.Contains(logs, tt.path) || !strings.Contains(logs, tt.want) {
			t.Errorf("%s: output does not name the variable, the file and %q:\n%s", tt.path, tt.want, logs)
		}
	}
}
