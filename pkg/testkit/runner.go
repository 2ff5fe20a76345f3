package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

const runnerPackage = "github.com/iggy-connectors-go/runtime/cmd/iggy-connector-runner"

var (
	runnerBuildOnce sync.Once
	runnerBinPath   string
	runnerBuildErr  error
)

// RunnerBinary builds cmd/iggy-connector-runner once per test process and returns its path. It
// uses `go install` into a per-user cache directory, which relinks only when the sources changed,
// so test processes after the first start in seconds. Test processes of several packages may run
// at once: the install runs under a file lock, and each caller executes a content-addressed copy
// that no later install rewrites.
func RunnerBinary(tb testing.TB) string {
	tb.Helper()
	runnerBuildOnce.Do(func() { runnerBinPath, runnerBuildErr = installFrozen(runnerPackage, "iggy-connector-runner") })
	if runnerBuildErr != nil {
		tb.Fatalf("build runner: %v", runnerBuildErr)
	}
	return runnerBinPath
}

// installFrozen runs `go install pkg` under the cache directory's lock and returns a
// content-addressed copy of the binary name, which no later install (of this or another checkout)
// rewrites.
func installFrozen(pkg, name string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "iggy-connectors-go", "testbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway

	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goTool(), "install", pkg)
	cmd.Dir = root // built in its own module, whichever module's test asks (images/ has its own)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", pkg, err, stderr.String())
	}
	installed := filepath.Join(dir, name)
	data, err := os.ReadFile(installed)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	frozen := filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(frozen); err == nil {
		return frozen, nil
	}
	tmp := frozen + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, frozen); err != nil {
		return "", err
	}
	return frozen, nil
}

// moduleRoot is the directory of the project's root module as the calling test's module sees it
// (in images/, the `replace` target).
func moduleRoot() (string, error) {
	out, err := exec.Command(goTool(), "list", "-m", "-f", "{{.Dir}}", "github.com/iggy-connectors-go/runtime").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/iggy-connectors-go/runtime: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// goTool finds the go command: on PATH, else next to GOROOT.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}

// PackageDeps lists the import paths the package in dir depends on, itself included (`go list
// -deps`), for tests that keep the dependency direction.
func PackageDeps(tb testing.TB, dir string) []string {
	tb.Helper()
	cmd := exec.Command(goTool(), "list", "-deps", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list -deps in %s: %v", dir, err)
	}
	return strings.Fields(string(out))
}

// RunnerProc is one runner process started by a test, with its HTTP endpoint on a Unix socket.
type RunnerProc struct {
	process
	SocketPath string // the endpoint's Unix socket
	Env        []string

	http *http.Client
}

// StartRunner starts the runner binary with env (NAME=value entries) added to a clean environment
// (no inherited IGGY_* variables). Unless env sets IGGY_CONNECTORS_HTTP_ADDRESS, the endpoint is
// a Unix socket in a fresh temp dir. The process is killed at test cleanup if still running.
func StartRunner(tb testing.TB, env []string) *RunnerProc {
	tb.Helper()
	bin := RunnerBinary(tb)
	// Unix socket paths are limited to ~108 bytes, so the dir is short rather than tb.TempDir().
	sockDir, err := os.MkdirTemp("", "rn")
	if err != nil {
		tb.Fatalf("socket dir: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(sockDir) })
	p := &RunnerProc{SocketPath: filepath.Join(sockDir, "runner.sock")}

	full := cleanEnviron()
	if !hasVar(env, "IGGY_CONNECTORS_HTTP_ADDRESS") {
		full = append(full, "IGGY_CONNECTORS_HTTP_ADDRESS=unix:"+p.SocketPath)
	}
	full = append(full, env...)
	p.Env = full
	p.http = &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", p.SocketPath)
		}},
	}
	cmd := exec.Command(bin)
	cmd.Env = full
	p.start(tb, "runner", cmd)
	return p
}

func cleanEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "IGGY_") || strings.HasPrefix(kv, "RUST_LOG=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// endpointListening finds the bound address of the runner's endpoint in its text or JSON log.
var endpointListening = regexp.MustCompile(`msg="http endpoint listening" .*bound=(\S+)|"msg":"http endpoint listening".*"bound":"([^"]+)"`)

// WaitTCPEndpoint waits until the runner's endpoint listens on TCP (IGGY_CONNECTORS_HTTP_ADDRESS
// host:port) and returns the loopback address to reach it (LoopbackAddr).
func (p *RunnerProc) WaitTCPEndpoint(tb testing.TB, timeout time.Duration) string {
	tb.Helper()
	var addr string
	p.WaitUntil(tb, timeout, "the endpoint listening", func() bool {
		if m := endpointListening.FindStringSubmatch(p.Logs()); m != nil {
			addr = LoopbackAddr(m[1] + m[2])
			return true
		}
		return false
	})
	return addr
}

// Get fetches path from the runner's endpoint and returns the status code and body.
func (p *RunnerProc) Get(path string, header http.Header) (int, []byte, error) {
	return p.Do(http.MethodGet, path, header)
}

// Do sends a bodyless request with method to path on the runner's endpoint and returns the status
// code and body.
func (p *RunnerProc) Do(method, path string, header http.Header) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://runner"+path, nil)
	if err != nil {
		return 0, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// RunnerHealth is the runner's /health body.
type RunnerHealth struct {
	Status          string `json:"status"`
	Key             string `json:"key"`
	ConnectorType   string `json:"connector_type"`
	ConnectorStatus string `json:"connector_status"`
	Role            string `json:"role,omitempty"` // "active" or "standby" for a source on the iggy state backend
}

// Health reads /health.
func (p *RunnerProc) Health() (RunnerHealth, error) {
	var h RunnerHealth
	code, body, err := p.Get("/health", nil)
	if err != nil {
		return h, err
	}
	if code != http.StatusOK {
		return h, fmt.Errorf("/health: status %d: %s", code, body)
	}
	return h, json.Unmarshal(body, &h)
}

// Stats reads /stats, failing the test on error.
func (p *RunnerProc) Stats(tb testing.TB) metrics.ConnectorStats {
	tb.Helper()
	var s metrics.ConnectorStats
	code, body, err := p.Get("/stats", nil)
	if err != nil || code != http.StatusOK {
		tb.Fatalf("runner /stats: code %d err %v body %s", code, err, body)
	}
	if err := json.Unmarshal(body, &s); err != nil {
		tb.Fatalf("runner /stats: %v: %s", err, body)
	}
	return s
}

// Metrics reads the metrics endpoint (text exposition), failing the test on error.
func (p *RunnerProc) Metrics(tb testing.TB) string {
	tb.Helper()
	code, body, err := p.Get("/metrics", nil)
	if err != nil || code != http.StatusOK {
		tb.Fatalf("runner /metrics: code %d err %v body %s", code, err, body)
	}
	return string(body)
}

// WaitStatus waits until /health reports the connector's status (e.g. "running"). It fails the
// test when the process exits first or timeout passes.
func (p *RunnerProc) WaitStatus(tb testing.TB, status string, timeout time.Duration) {
	tb.Helper()
	last := ""
	msg := waitCond(timeout, pollMax, func() bool {
		if h, err := p.Health(); err == nil {
			last = h.ConnectorStatus
		}
		return last == status
	}, p.exitedWhy)
	if msg != "" {
		tb.Fatalf("waiting for runner status %q: %s (last seen %q); logs:\n%s", status, msg, last, p.Logs())
	}
}
