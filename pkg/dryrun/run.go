package dryrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// Request is one dry run in the runner binary.
type Request struct {
	Runner string // the iggy-connector-runner binary (runnerproc.FindRunner)
	// Env is the runner's whole environment: the connector as a start takes it (one of
	// runnerproc.EnvConfigPath, EnvConfig, EnvType + EnvKey), and the runtime settings that
	// matter ([http] secret_keys and reveal_secrets mask payloads as the tap does).
	Env     []string
	Dir     string    // its working directory; "" is this process's
	Samples io.Reader // JSON lines, on its standard input
}

// Result is a dry run's answer: its output, one pkg/tap.Event JSON line per outcome (each ending
// in a newline), or the problems that stopped it.
type Result struct {
	Output   []byte
	Problems []*Problem
}

// ErrRunner: the runner did not finish the dry run (it crashed, was killed, is not a runner).
var ErrRunner = errors.New("the runner's dry run failed")

// Run runs `runner --dry-run` and reads its answer. A runner that exits with neither an output nor
// problems is an error wrapping ErrRunner, with the end of what it wrote on stderr.
func Run(ctx context.Context, req Request) (Result, error) {
	cmd := exec.CommandContext(ctx, req.Runner, runnerproc.ArgDryRun)
	cmd.Env, cmd.Dir, cmd.Stdin = req.Env, req.Dir, req.Samples
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return Result{Output: stdout.Bytes()}, nil
	case errors.As(err, &exit) && exit.ExitCode() == runnerproc.ExitConfig && stdout.Len() > 0:
		if problems, ok := parseProblems(stdout.Bytes()); ok {
			return Result{Problems: problems}, nil
		}
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("%w: %s %s: %w", ErrRunner, req.Runner, runnerproc.ArgDryRun, ctx.Err())
	}
	return Result{}, fmt.Errorf("%w: %s %s: %v: %s", ErrRunner, req.Runner, runnerproc.ArgDryRun, err, lastLines(stderr.String(), 2048))
}

// parseProblems reads problem lines; false when a line is not one.
func parseProblems(out []byte) ([]*Problem, bool) {
	var problems []*Problem
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var p Problem
		if json.Unmarshal(sc.Bytes(), &p) != nil || (p.Input != InputConfig && p.Input != InputSamples) {
			return nil, false
		}
		problems = append(problems, &p)
	}
	return problems, sc.Err() == nil && len(problems) > 0
}

// lastLines is the end of s, at most n bytes, trimmed.
func lastLines(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
