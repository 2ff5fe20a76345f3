package ctl_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The logs command prints the connector's records as JSON lines (or text), filters by level and
// tail, and --follow goes on until Ctrl-C, which exits 0.
func TestLogsCommand(t *testing.T) {
	p, _ := server(t)
	env := []string{"IGGY_CONNECTORS_URL=" + p.URL(""), "IGGY_CONNECTORS_HTTP_API_KEY=" + apiKey}
	r := start(t, "logs", env, "sinks/out", "--tail", "3")
	if code := r.wait(t); code != ctl.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, r.stderr.String())
	}
	got := lines(r.stdout.String())
	if len(got) != 3 {
		t.Fatalf("--tail 3 printed %d lines:\n%s", len(got), r.stdout.String())
	}
	for _, l := range got {
		var rec logging.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Time == "" || rec.Origin == "" {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	text := start(t, "logs", env, "sinks/out", "--format", "text")
	if code := text.wait(t); code != ctl.ExitOK || !strings.Contains(text.stdout.String(), "INFO  [supervisor] iggy_connectors: runner started connector") &&
		!strings.Contains(text.stdout.String(), "[supervisor] iggy_connectors: runner started") {
		t.Fatalf("text: exit %d:\n%s", code, text.stdout.String())
	}
	warn := start(t, "logs", env, "sinks/out", "--level", "warn")
	if code := warn.wait(t); code != ctl.ExitOK || len(lines(warn.stdout.String())) != 0 {
		t.Fatalf("--level warn on a healthy connector: exit %d:\n%s", code, warn.stdout.String())
	}

	follow := start(t, "logs", env, "sinks/out", "--follow", "--tail", "1")
	follow.until(t, "the first record", func() bool { return len(lines(follow.stdout.String())) >= 1 })
	// New records while following: the runner's crash and the supervisor's restart of it.
	killRunner(t, p, "sink/out")
	follow.until(t, "the restart's records", func() bool { return strings.Contains(follow.stdout.String(), "restarting runner") })
	follow.cancel()
	if code := follow.wait(t); code != ctl.ExitOK {
		t.Fatalf("--follow after Ctrl-C: exit %d; stderr:\n%s", code, follow.stderr.String())
	}
}

// killRunner kills the runner of connector (kind/key) with SIGKILL, its pid read from /stats.
func killRunner(t *testing.T, p *testkit.SupervisorProc, connector string) {
	t.Helper()
	_, body, err := p.Do("GET", "/stats", http.Header{"Api-Key": {apiKey}}, "")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Connectors []struct {
			Key  string `json:"key"`
			Type string `json:"connector_type"`
			PID  int    `json:"pid"`
		} `json:"connectors"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Connectors {
		if c.Type+"/"+c.Key == connector && c.PID > 0 {
			if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no running %s in /stats: %s", connector, body)
}
