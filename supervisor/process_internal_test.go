package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// A runner line longer than the relay's limit (a plugin logging a huge payload) is cut, not a
// reason to stop reading: the lines after it are still relayed, and the fatal line still explains
// the exit.
func TestChildOutputSurvivesAnOverlongLine(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	c := runScript(t, "head -c 3000000 /dev/zero | tr '\\000' x; echo\n"+
		"echo after-the-long-line\n"+
		"echo '"+runnerproc.FatalPrefix+"boom'\n"+
		"exit 1\n", func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	})
	if c.exit.Fatal != "boom" {
		t.Errorf("exit explained as %q, want the runner's fatal line %q", c.exit.Fatal, "boom")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 3 || len(lines[0]) != maxRunnerLine || strings.Trim(lines[0], "x") != "" ||
		lines[1] != "after-the-long-line" || lines[2] != runnerproc.FatalPrefix+"boom" {
		short := make([]string, len(lines))
		for i, l := range lines {
			short[i] = fmt.Sprintf("%d bytes: %.40q", len(l), l)
		}
		t.Fatalf("relayed %d lines %q, want the long line cut to %d bytes and both later lines", len(lines), short, maxRunnerLine)
	}
}

// How a runner ended decides whether it is restarted: only an exit with status 2 after the
// runner's configuration-error line, with no crash report after it, is a configuration error. A Go
// crash exits 2 as well; neither it nor a look-alike line logged by a plugin may pass for one.
func TestExitIsAConfigErrorOnlyWhenAnnounced(t *testing.T) {
	configLine := runnerproc.ConfigErrorLine(`transform "unwrap_envelope": invalid transform config: "field" must not be empty`)
	tests := []struct {
		name   string
		output []string
		status int
		want   bool
	}{
		{"announced configuration error", []string{"starting", configLine}, 2, true},
		{"Go panic", []string{"panic: type mismatch: cannot convert nil to map key", "", "goroutine 27 [running]:"}, 2, false},
		{"fatal signal in a plugin", []string{"SIGSEGV: segmentation violation", "PC=0x7f3a m=3 sigcode=1 addr=0x0"}, 2, false},
		{"Go runtime fatal error", []string{"fatal error: concurrent map writes"}, 2, false},
		{"panic after the announcement", []string{configLine, "panic: telemetry shutdown"}, 2, false},
		{"status 2 without a word", nil, 2, false},
		{"announcement with another status", []string{configLine}, 1, false},
		{"a plugin logging the old message", []string{`{"level":"ERROR","msg":"invalid configuration"}`, `time=x level=ERROR msg="invalid configuration"`}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body strings.Builder
			for _, l := range tt.output {
				fmt.Fprintf(&body, "printf '%%s\\n' '%s' >&2\n", strings.ReplaceAll(l, "'", `'\''`))
			}
			fmt.Fprintf(&body, "exit %d\n", tt.status)
			c := runScript(t, body.String(), func(string) {})
			if c.exit.Code != tt.status || c.exit.ConfigError != tt.want {
				t.Fatalf("exit %+v; want code %d, ConfigError %v", c.exit, tt.status, tt.want)
			}
		})
	}
}

// runScript runs a shell script in place of the runner binary until it exits, its output lines
// going to onLine.
func runScript(t *testing.T, script string, onLine lineFunc) *child {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "fake-runner")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := startChild(path, nil, filepath.Join(dir, "runner.sock"), onLine)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fake runner did not finish")
	}
	return c
}
