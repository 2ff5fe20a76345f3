package testkit

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const supervisorPackage = "github.com/iggy-connectors-go/runtime/cmd/iggy-connectors"

var (
	supervisorBuildOnce sync.Once
	supervisorBinPath   string
	supervisorBuildErr  error
)

// SupervisorBinary builds cmd/iggy-connectors once per test process (go install into a per-user
// cache directory, relinked only when sources changed) and returns the path of a
// content-addressed copy, as RunnerBinary does.
func SupervisorBinary(tb testing.TB) string {
	tb.Helper()
	supervisorBuildOnce.Do(func() {
		supervisorBinPath, supervisorBuildErr = installFrozen(supervisorPackage, "iggy-connectors")
	})
	if supervisorBuildErr != nil {
		tb.Fatalf("build supervisor: %v", supervisorBuildErr)
	}
	return supervisorBinPath
}

// SupervisorProc is one iggy-connectors process started by a test.
type SupervisorProc struct {
	Cmd  *exec.Cmd
	Addr string // host:port of the REST API
	logs *syncBuffer
	done chan struct{}
	code int
}

// apiListening finds the bound address in the supervisor's text or JSON log.
var apiListening = regexp.MustCompile(`msg="REST API listening" address=(\S+)|"msg":"REST API listening","address":"([^"]+)"`)

// LoopbackAddr is the address to reach a server bound to addr from this machine: a wildcard host
// (0.0.0.0, ::) becomes 127.0.0.1, so a test's traffic stays on loopback.
func LoopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// StartSupervisor starts iggy-connectors in dir with env added to a clean environment (no
// inherited IGGY_* variables). The runner binary is passed with IGGY_SUPERVISOR_RUNNER_PATH and
// the API binds an ephemeral loopback port unless env says otherwise. It waits until the API
// answers (the supervisor binds it only after every connector settled) and kills the process at
// test cleanup if it is still running.
func StartSupervisor(tb testing.TB, dir string, env []string, startTimeout time.Duration) *SupervisorProc {
	tb.Helper()
	p := StartSupervisorNoWait(tb, dir, env)
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if m := apiListening.FindStringSubmatch(p.Logs()); m != nil {
			p.Addr = LoopbackAddr(m[1] + m[2])
			return p
		}
		if p.Exited() {
			tb.Fatalf("supervisor exited with code %d before its API listened; logs:\n%s", p.code, p.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("supervisor API not listening after %s; logs:\n%s", startTimeout, p.Logs())
	return nil
}

// StartSupervisorNoWait starts iggy-connectors like StartSupervisor without waiting for its API.
func StartSupervisorNoWait(tb testing.TB, dir string, env []string) *SupervisorProc {
	tb.Helper()
	full := cleanEnviron()
	full = append(full, "IGGY_SUPERVISOR_RUNNER_PATH="+RunnerBinary(tb))
	if !hasVar(env, "IGGY_CONNECTORS_HTTP_ADDRESS") {
		full = append(full, "IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0")
	}
	full = append(full, env...)
	p := &SupervisorProc{logs: &syncBuffer{}, done: make(chan struct{})}
	p.Cmd = exec.Command(SupervisorBinary(tb))
	p.Cmd.Dir = dir
	p.Cmd.Env = full
	p.Cmd.Stdout = p.logs
	p.Cmd.Stderr = p.logs
	if err := p.Cmd.Start(); err != nil {
		tb.Fatalf("start supervisor: %v", err)
	}
	go func() {
		_ = p.Cmd.Wait()
		p.code = p.Cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	tb.Cleanup(func() {
		if !p.Exited() {
			_ = p.Cmd.Process.Kill()
			<-p.done
		}
		if tb.Failed() {
			tb.Logf("supervisor pid %d logs:\n%s", p.Cmd.Process.Pid, p.Logs())
		}
	})
	return p
}

// URL is the REST API's base URL plus path.
func (p *SupervisorProc) URL(path string) string { return "http://" + p.Addr + path }

// Logs returns the supervisor's output so far (its own log and every runner's lines).
func (p *SupervisorProc) Logs() string { return p.logs.String() }

// Pid is the supervisor's process id.
func (p *SupervisorProc) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *SupervisorProc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the supervisor.
func (p *SupervisorProc) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill9 kills the supervisor with SIGKILL and waits for it.
func (p *SupervisorProc) Kill9() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Wait waits up to timeout for the process to exit and returns its exit code.
func (p *SupervisorProc) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.code, nil
	case <-time.After(timeout):
		return 0, ErrRunnerStillRunning
	}
}

// Do sends one request to the API and returns the response with its body read.
func (p *SupervisorProc) Do(method, path string, header http.Header, body string) (*http.Response, []byte, error) {
	return DoHTTP(method, p.URL(path), header, body)
}

// DoHTTP sends one request to url and returns the response with its body read. A "Host" entry of
// header replaces the request's Host (as a browser led by DNS rebinding would send it).
func DoHTTP(method, url string, header http.Header, body string) (*http.Response, []byte, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if host := header.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}
