package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"golang.org/x/sys/unix"
)

// Runner processes are forked from one goroutine locked to its OS thread for the life of the
// program. Pdeathsig fires when the *thread* that forked a child exits, not the process; Go may
// retire an unlocked thread at any time, which would kill healthy runners. A thread that never
// exits makes the signal mean "the supervisor died".
var (
	spawnOnce sync.Once
	spawnReqs chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func startOnSpawnThread(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for req := range spawnReqs {
				req.done <- req.cmd.Start()
			}
		}()
	})
	req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawnReqs <- req
	return <-req.done
}

// waitExited returns once process pid (a child not yet waited for) has exited, without holding an
// OS thread meanwhile: it waits on a pidfd through the runtime's poller, where cmd.Wait would block
// a thread per runner in wait4. Where pidfds are unavailable it returns at once, and cmd.Wait
// blocks as usual.
func waitExited(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(uintptr) bool {
		var info unix.Siginfo // zero unless a child has exited
		err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		return err != nil || info.Signo != 0
	})
}

// exitInfo describes how a runner process ended.
type exitInfo struct {
	Code   int    // exit code; -1 when killed by a signal
	Signal string // the signal's name when killed by one
	// Fatal is the runner's last fatal or error log line, the best explanation of the exit.
	Fatal string
	// ConfigError: the runner refused its configuration (it will refuse it again): it exited
	// runnerproc.ExitConfig after announcing a configuration error, with no crash report after.
	ConfigError bool
}

func (e exitInfo) String() string {
	var s string
	if e.Signal != "" {
		s = "runner killed by signal " + e.Signal
	} else {
		s = fmt.Sprintf("runner exited with code %d", e.Code)
	}
	if e.Fatal != "" {
		s += ": " + e.Fatal
	}
	return s
}

// child is one running runner process with its HTTP endpoint on a Unix socket.
type child struct {
	cmd    *exec.Cmd
	pid    int
	socket string
	http   *http.Client

	done   chan struct{} // closed when the process has been reaped
	exit   exitInfo
	logsMu sync.Mutex
	fatal  string // last fatal/error line seen in the output
	// crashed: the Go runtime reported a fatal signal or panic (it exits with code 2 too, which
	// is otherwise the runner's invalid-configuration code).
	crashed bool
	// configError: the runner announced a configuration error (runnerproc.ConfigErrorPrefix).
	configError bool
	copied      chan struct{}
}

// lineFunc receives each output line of a runner.
type lineFunc func(line string)

// startChild starts the runner binary with exactly env, its stdout and stderr forwarded line by
// line to onLine. The runner is in its own process group (so a terminal's Ctrl-C reaches only the
// supervisor, which then drains in order) and receives SIGKILL if the supervisor dies.
func startChild(binary string, env []string, socket string, onLine lineFunc) (*child, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("runner output pipe: %w", err)
	}
	cmd := exec.Command(binary)
	cmd.Env = env
	cmd.Stdout = w // an *os.File is handed to the child as is: no copying goroutine in this process
	cmd.Stderr = w
	cmd.SysProcAttr = runnerProcAttr()
	err = startOnSpawnThread(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start runner %s: %w", binary, err)
	}
	cmd.Env = nil // the runner has its copy; the supervisor need not keep one per runner
	c := &child{
		cmd: cmd, pid: cmd.Process.Pid, socket: socket,
		http:   unixClient(socket),
		done:   make(chan struct{}),
		copied: make(chan struct{}),
	}
	go c.forward(r, onLine)
	go func() {
		waitExited(c.pid)
		err := cmd.Wait()
		// What the plugin forked dies with its runner (the group is the runner's, see
		// runnerProcAttr; the kernel does not reuse its id while a member lives).
		_ = unix.Kill(-c.pid, unix.SIGKILL)
		// The last lines explain the exit. A grandchild that inherited the pipe could keep it
		// open forever, so the wait for them is bounded.
		select {
		case <-c.copied:
		case <-time.After(2 * time.Second):
		}
		info := exitInfo{Code: cmd.ProcessState.ExitCode()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				info.Signal = ws.Signal().String()
			}
		}
		c.logsMu.Lock()
		info.Fatal = c.fatal
		info.ConfigError = info.Code == runnerproc.ExitConfig && c.configError && !c.crashed
		c.logsMu.Unlock()
		c.exit = info
		c.http.CloseIdleConnections()
		close(c.done)
	}()
	return c, nil
}

// maxRunnerLine bounds one relayed runner output line; the rest of a longer line is dropped.
const maxRunnerLine = 1 << 20

func (c *child) forward(r io.ReadCloser, onLine lineFunc) {
	defer close(c.copied)
	defer r.Close()
	// A small buffer (lines longer than it are read in pieces): one per runner adds up.
	br := bufio.NewReaderSize(r, 4<<10)
	var line []byte
	cut := false // the current line outgrew maxRunnerLine; its rest is dropped
	for {
		frag, err := br.ReadSlice('\n')
		if room := maxRunnerLine - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		} else if len(frag) > 0 {
			cut = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the same line goes on
		}
		if len(line) > 0 || cut {
			text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
			c.note(text)
			onLine(text)
		}
		line, cut = line[:0], false
		if err != nil {
			return // EOF: the runner and anything sharing its output are gone
		}
	}
}

// note keeps the line that best explains an exit: a Go runtime crash report wins over the
// runner's own fatal or configuration-error line, which wins over any other error line. Once a
// crash report began, nothing after it counts: not even a line that looks like a configuration
// error can make a crash look like one.
func (c *child) note(line string) {
	c.logsMu.Lock()
	defer c.logsMu.Unlock()
	switch {
	case strings.HasPrefix(line, "fatal error: "), strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "SIGSEGV: "), strings.HasPrefix(line, "SIGABRT: "):
		if !c.crashed {
			c.crashed, c.fatal = true, line
		}
	case strings.HasPrefix(line, "[signal ") && c.crashed:
		c.fatal += " " + line
	case c.crashed:
	case strings.HasPrefix(line, runnerproc.FatalPrefix):
		c.fatal = strings.TrimPrefix(line, runnerproc.FatalPrefix)
	case strings.HasPrefix(line, runnerproc.ConfigErrorPrefix):
		c.configError, c.fatal = true, line
	case strings.Contains(line, "level=ERROR"), strings.Contains(line, `"level":"ERROR"`):
		c.fatal = line
	}
}

// alive reports whether c is a runner process that has not exited (false for no process).
func (c *child) alive() bool { return c != nil && !c.exited() }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop asks the runner and what its plugin forked to stop (SIGTERM to its process group), waits
// up to grace, then kills the group. It returns once the runner is gone; the rest of the group is
// killed when the runner has been reaped.
func (c *child) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	_ = unix.Kill(-c.pid, unix.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = unix.Kill(-c.pid, unix.SIGKILL)
		<-c.done
	}
}

// exitedError: the runner exited before its endpoint answered (a configuration error does that).
type exitedError struct{ exit exitInfo }

func (e *exitedError) Error() string { return e.exit.String() }

// waitReady polls /health until the endpoint answers, the process exits (an *exitedError) or
// timeout passes.
func (c *child) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c.exited() {
			return &exitedError{c.exit}
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.health(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runner endpoint did not answer within %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// unixClient is an HTTP client whose every request goes to the Unix socket path.
func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}}
}
