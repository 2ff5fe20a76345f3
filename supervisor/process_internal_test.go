package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A runner line longer than the relay's limit (a plugin logging a huge payload) is cut, not a
// reason to stop reading: the lines after it are still relayed, and the fatal line still explains
// the exit.
func TestChildOutputSurvivesAnOverlongLine(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-runner")
	body := "#!/bin/sh\n" +
		"head -c 3000000 /dev/zero | tr '\\000' x; echo\n" +
		"echo after-the-long-line\n" +
		"echo '" + runnerFatalPrefix + "boom'\n" +
		"exit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	c, err := startChild(script, nil, filepath.Join(dir, "runner.sock"), func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fake runner did not finish")
	}
	if c.exit.Fatal != "boom" {
		t.Errorf("exit explained as %q, want the runner's fatal line %q", c.exit.Fatal, "boom")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 3 || len(lines[0]) != maxRunnerLine || strings.Trim(lines[0], "x") != "" ||
		lines[1] != "after-the-long-line" || lines[2] != runnerFatalPrefix+"boom" {
		short := make([]string, len(lines))
		for i, l := range lines {
			short[i] = fmt.Sprintf("%d bytes: %.40q", len(l), l)
		}
		t.Fatalf("relayed %d lines %q, want the long line cut to %d bytes and both later lines", len(lines), short, maxRunnerLine)
	}
}
