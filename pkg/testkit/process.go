package testkit

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// ErrRunnerStillRunning is returned by Wait when the process outlived the timeout (a runner's,
// the supervisor's or any other process a test started).
var ErrRunnerStillRunning = errors.New("process still running")

// process is what RunnerProc, SupervisorProc and PrometheusProc share: one child process started
// by a test, its output collected into a LogBuffer, its exit awaited in the background, killed at
// test cleanup when still running (and its output logged when the test failed).
type process struct {
	Cmd  *exec.Cmd
	name string // "runner", "supervisor", ...: in failure messages
	logs LogBuffer
	done chan struct{} // closed once the process ended and code is set
	code int           // exit code, -1 when killed by a signal
}

// start starts cmd with its stdout and stderr going to the process's logs.
func (p *process) start(tb testing.TB, name string, cmd *exec.Cmd) {
	tb.Helper()
	p.Cmd, p.name, p.done = cmd, name, make(chan struct{})
	cmd.Stdout, cmd.Stderr = &p.logs, &p.logs
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	tb.Cleanup(func() {
		if !p.Exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
		if tb.Failed() {
			tb.Logf("%s pid %d logs:\n%s", name, cmd.Process.Pid, p.Logs())
		}
	})
}

// Pid is the process id.
func (p *process) Pid() int { return p.Cmd.Process.Pid }

// Logs returns everything the process wrote to stdout and stderr so far.
func (p *process) Logs() string { return p.logs.String() }

// Exited reports whether the process has ended.
func (p *process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed once the process has ended.
func (p *process) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process.
func (p *process) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill9 kills the process with SIGKILL and waits for it to be gone.
func (p *process) Kill9() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Wait waits up to timeout for the process to exit and returns its exit code (-1 when killed by
// a signal), or ErrRunnerStillRunning.
func (p *process) Wait(timeout time.Duration) (int, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return p.code, nil
	case <-t.C:
		return 0, ErrRunnerStillRunning
	}
}

// WaitUntil waits until cond holds (as Eventually), failing the test with the process's logs when
// timeout passes or the process exits first.
func (p *process) WaitUntil(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if msg := waitCond(timeout, pollMax, cond, p.exitedWhy); msg != "" {
		tb.Fatalf("waiting for %s: %s; %s logs:\n%s", what, msg, p.name, p.Logs())
	}
}

// exitedWhy is "" while the process runs, else says that it exited and with which code.
func (p *process) exitedWhy() string {
	if !p.Exited() {
		return ""
	}
	return p.name + " exited with code " + strconv.Itoa(p.code)
}
