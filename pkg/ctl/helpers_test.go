package ctl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const (
	apiKey  = "cli-k3y"
	waitFor = 40 * time.Second
)

// run is one subcommand running in this process, as the binary runs it.
type run struct {
	stdout, stderr testkit.LogBuffer // read while the command runs
	code           chan int
	cancel         context.CancelFunc
}

func start(t *testing.T, name string, environ []string, args ...string) *run {
	t.Helper()
	cmd, ok := ctl.Lookup(name)
	if !ok {
		t.Fatalf("no subcommand %q", name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{code: make(chan int, 1), cancel: cancel}
	go func() {
		r.code <- cmd.Run(ctx, args, ctl.Env{Stdout: &r.stdout, Stderr: &r.stderr, Environ: environ, Dir: t.TempDir()})
	}()
	t.Cleanup(cancel)
	return r
}

// wait returns the exit code, failing the test when the command does not end in time.
func (r *run) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.code:
		return code
	case <-time.After(waitFor):
		t.Fatalf("the command did not end; stdout:\n%s\nstderr:\n%s", r.stdout.String(), r.stderr.String())
		return -1
	}
}

// until waits until cond holds on the command's output.
func (r *run) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testkit.Within(waitFor, cond) {
		t.Fatalf("%s: not reached; stdout:\n%s\nstderr:\n%s", what, r.stdout.String(), r.stderr.String())
	}
}

func lines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// sink is a stdout sink's connector file on demo/events with an add_fields transform.
func sink(key, plugin string) string {
	return fmt.Sprintf(`type = "sink"
key = %q
enabled = true
version = 0
name = "sink %s"
path = %q

[[streams]]
stream = "demo"
topics = ["events"]
schema = "json"
batch_length = 50
poll_interval = "5ms"

[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "stage"
value.static = "cli"

[plugin_config]
print_payload = false
`, key, key, plugin)
}

// server starts a broker and a supervisor running sink "out", guarded by apiKey; fill sends n
// more messages to the sink's topic.
func server(t *testing.T) (p *testkit.SupervisorProc, fill func(n int)) {
	t.Helper()
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	dir := testkit.SupervisorDir(t, broker, `api_key = "`+apiKey+`"`, map[string]string{"out": sink("out", testkit.PluginPath(t, "stdout_sink"))})
	p = testkit.StartSupervisor(t, dir, testkit.SupervisorEnv(), waitFor)
	return p, func(n int) { testkit.FillTopic(t, broker, "demo", "events", n) }
}

// tapping waits until the command says its stream is open (the server answered it, so the tap
// is subscribed).
func (r *run) tapping(t *testing.T) {
	t.Helper()
	r.until(t, "the stream open", func() bool { return strings.Contains(r.stderr.String(), "; Ctrl-C to stop") })
}
