package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

const (
	username = "iggy"
	password = "iggy"
	// probeEvery is how often the end of a runner measurement is checked on the broker; it bounds
	// the timing error (a few ms on runs of a few hundred ms and more).
	probeEvery = 2 * time.Millisecond
	startLimit = 30 * time.Second
	runLimit   = 120 * time.Second
)

// process is a child process whose output goes to a log file.
type process struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func startProcess(bin, logPath string, env []string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits; a process still there after 15 s is killed.
func (p *process) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within 15 s after SIGTERM", filepath.Base(p.cmd.Path))
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(p.cmd.Path), p.err, p.logTail())
	}
	return nil
}

// logTail is the end of the process's output, for error messages.
func (p *process) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// cleanEnv is this process's environment without IGGY_* variables, so only what a case sets
// reaches the children (GOGC and the like pass through).
func cleanEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// broker is one iggy-dev-server process and an SDK client for setup and probes.
type broker struct {
	proc *process
	addr string
	cli  iggcon.Client
}

func startBroker(binDir, dir string) (*broker, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	proc, err := startProcess(filepath.Join(binDir, "iggy-dev-server"), filepath.Join(dir, "broker.log"),
		cleanEnv("IGGY_TCP_ADDRESS="+addr, "IGGY_DEV_LOG_LEVEL=warn"))
	if err != nil {
		return nil, err
	}
	b := &broker{proc: proc, addr: addr}
	deadline := time.Now().Add(startLimit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if proc.exited() || time.Now().After(deadline) {
			_ = proc.stop()
			return nil, fmt.Errorf("dev broker on %s did not start: %v\n%s", addr, err, proc.logTail())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b.cli, err = b.client(); err != nil {
		_ = proc.stop()
		return nil, err
	}
	return b, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// client is a fresh logged-in SDK client: every bare loop gets its own connection, as a runner does.
func (b *broker) client() (iggcon.Client, error) {
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(b.addr)))
	if err != nil {
		return nil, fmt.Errorf("connect SDK client to %s: %w", b.addr, err)
	}
	if _, err := cli.LoginUser(username, password); err != nil {
		cli.Close()
		return nil, fmt.Errorf("log in to %s: %w", b.addr, err)
	}
	return cli, nil
}

func (b *broker) stop() {
	if b.cli != nil {
		_ = b.cli.Close()
	}
	_ = b.proc.stop()
}

func ident(name string) iggcon.Identifier {
	id, err := iggcon.NewIdentifier(name)
	if err != nil {
		panic(fmt.Sprintf("identifier %q: %v", name, err))
	}
	return id
}

func (b *broker) createTopic(stream, topic string) error {
	_, err := b.cli.CreateTopic(ident(stream), topic, 1, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryNeverExpire, 0, nil)
	if err != nil {
		return fmt.Errorf("create topic %s/%s: %w", stream, topic, err)
	}
	return nil
}

func (b *broker) deleteTopic(stream, topic string) error {
	if err := b.cli.DeleteTopic(ident(stream), ident(topic)); err != nil {
		return fmt.Errorf("delete topic %s/%s: %w", stream, topic, err)
	}
	return nil
}

// storedOffset is the group's stored offset on partition 0; ok is false while none is stored.
func (b *broker) storedOffset(stream, topic, group string) (offset uint64, ok bool, err error) {
	partition := uint32(0)
	info, err := b.cli.GetConsumerOffset(iggcon.NewGroupConsumer(ident(group)), ident(stream), ident(topic), &partition)
	if err != nil {
		return 0, false, err
	}
	if info == nil {
		return 0, false, nil
	}
	return info.StoredOffset, true, nil
}

// messageCount is how many messages the topic holds.
func (b *broker) messageCount(stream, topic string) (uint64, error) {
	d, err := b.cli.GetTopic(ident(stream), ident(topic))
	if err != nil {
		return 0, err
	}
	return d.MessagesCount, nil
}

// runner is one iggy-connector-runner process with its HTTP endpoint on a Unix socket.
type runnerProc struct {
	*process
	http   *http.Client
	socket string // the endpoint's Unix socket
}

func startRunner(binDir, dir string, env []string) (*runnerProc, error) {
	sock := filepath.Join(dir, "runner.sock")
	_ = os.Remove(sock)
	proc, err := startProcess(filepath.Join(binDir, "iggy-connector-runner"), filepath.Join(dir, "runner.log"),
		cleanEnv(append(env, "IGGY_CONNECTORS_HTTP_ADDRESS=unix:"+sock)...))
	if err != nil {
		return nil, err
	}
	r := &runnerProc{process: proc, socket: sock, http: &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}},
	}}
	return r, nil
}

// sample is one measurement.
type sample struct {
	rate      float64       // messages per second
	cpuPerMsg time.Duration // CPU time (user + system) of the measured process per message
	peakRSS   uint64        // runners only: VmHWM, bytes
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpu is the process's CPU time so far (clock-tick resolution), 0 when unreadable.
func (r *runnerProc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are the 14th and 15th.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseUint(f[11], 10, 64)
	stime, _ := strconv.ParseUint(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// peakRSS is the process's VmHWM (the most it was resident), 0 when unreadable.
func (r *runnerProc) peakRSS() uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// waitRunning polls /health until the connector is running.
func (r *runnerProc) waitRunning() error { return r.waitStatus("running") }

// waitStatus polls /health until the connector has status want.
func (r *runnerProc) waitStatus(want string) error {
	deadline := time.Now().Add(startLimit)
	for {
		status, err := r.connectorStatus()
		if err == nil && status == want {
			return nil
		}
		if r.exited() {
			return fmt.Errorf("runner exited before %s: %v\n%s", want, r.err, r.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runner not %s after %s (status %q, %v)\n%s", want, startLimit, status, err, r.logTail())
		}
		time.Sleep(time.Millisecond)
	}
}

// resume sends POST /resume and expects 204 (the connector runs again).
func (r *runnerProc) resume() error {
	resp, err := r.http.Post("http://runner/resume", "", nil)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("resume: status %d", resp.StatusCode)
	}
	return nil
}

func (r *runnerProc) connectorStatus() (string, error) {
	resp, err := r.http.Get("http://runner/health")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var h struct {
		ConnectorStatus string `json:"connector_status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return "", err
	}
	return h.ConnectorStatus, nil
}

// waitUntil probes done every probeEvery until it reports true, the runner exits or runLimit passes.
func (r *runnerProc) waitUntil(what string, done func() (bool, error)) error {
	deadline := time.Now().Add(runLimit)
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if r.exited() {
			return fmt.Errorf("runner exited before %s: %v\n%s", what, r.err, r.logTail())
		}
		if time.Now().After(deadline) {
			return errors.New("timed out waiting until " + what + "\n" + r.logTail())
		}
		time.Sleep(probeEvery)
	}
}
