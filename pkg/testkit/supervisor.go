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
	process
	Addr string // host:port of the REST API
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
	msg := waitCond(startTimeout, pollMax, func() bool {
		if m := apiListening.FindStringSubmatch(p.Logs()); m != nil {
			p.Addr = LoopbackAddr(m[1] + m[2])
			return true
		}
		return false
	}, p.exitedWhy)
	if msg != "" {
		tb.Fatalf("supervisor API not listening: %s; logs:\n%s", msg, p.Logs())
	}
	return p
}

// StartSupervisorNoWait starts iggy-connectors like StartSupervisor without waiting for its API.
func StartSupervisorNoWait(tb testing.TB, dir string, env []string) *SupervisorProc {
	tb.Helper()
	full := cleanEnviron()
	full = append(full, "IGGY_SUPERVISOR_RUNNER_PATH="+RunnerBinary(tb))
	if !hasVar(env, "IGGY_CONNECTORS_HTTP_ADDRESS") {
		full = append(full, "IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0")
	}
	if !hasVar(env, "TMPDIR") {
		// The supervisor's runtime directory (sockets, stats pages, handover files) goes in a
		// temporary directory of the test's: a process killed at cleanup cannot remove its own,
		// and this cleanup, registered before the process starts, runs after that kill.
		tmp, err := os.MkdirTemp("", "ict-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = os.RemoveAll(tmp) })
		full = append(full, "TMPDIR="+tmp)
	}
	full = append(full, env...)
	p := &SupervisorProc{}
	cmd := exec.Command(SupervisorBinary(tb))
	cmd.Dir = dir
	cmd.Env = full
	p.start(tb, "supervisor", cmd)
	return p
}

// URL is the REST API's base URL plus path.
func (p *SupervisorProc) URL(path string) string { return "http://" + p.Addr + path }

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
