package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The idle cases: N null sinks on empty topics under a real supervisor, every runner at
// upstream's default poll_interval of 5 ms, measured interleaved A B A B. A keeps upstream's fixed
// interval (idle_poll_max = "0"), B backs off to the default idle_poll_max. Each measurement
// reads the CPU time of every runner, the broker and the supervisor over a fixed window, then
// times GET /stats and GET /metrics on the supervisor, then the first message after an idle
// spell: one message to one sink's topic, timed until the broker holds the group's offset of it.

// idleCase is one row pair of the idle table.
type idleCase struct {
	name     string
	sinks    int
	protocol string
}

func idleCases() []idleCase {
	return []idleCase{
		{"idle-sinks-1", 1, "0.8"},
		{"idle-sinks-10", 10, "0.8"},
		{"idle-sinks-50", 50, "0.8"},
		{"idle-sinks-10-0.9", 10, "0.9"},
	}
}

const (
	idleStream = "idle"
	// idleSpellMin and idleSpellSpread: the quiet before each first-message sample, long enough
	// for the back-off to reach the default idle_poll_max (5+5+10+...+160 ms) and spread so the
	// message lands anywhere in the poll cycle.
	idleSpellMin    = 600 * time.Millisecond
	idleSpellSpread = 250 * time.Millisecond
	idleWarmUp      = 2 * time.Second
	deliveryProbe   = time.Millisecond
)

// idleSide is A or B.
type idleSide struct {
	label       string
	idlePollMax string // the stream key's value; "" leaves it out (the default)
}

var idleSides = [2]idleSide{{"A fixed", "0"}, {"B adaptive", ""}}

// idleSample is one measurement of one side.
type idleSample struct {
	runnerCPU     float64 // % of a core per runner, the mean over the runners
	brokerCPU     float64 // % of a core per sink
	supervisorCPU float64 // % of a core
	firstMessage  []time.Duration
	stats         []time.Duration
	metrics       []time.Duration
}

// idleResult is one case's samples, per side, one per round.
type idleResult struct {
	c     idleCase
	sides [2][]idleSample
}

// newIdleEnv starts the case's broker with one empty topic per sink; the caller stops the broker.
func newIdleEnv(o options, work string, c idleCase) (*idleEnv, error) {
	dir, b, err := caseBroker(o, work, c.name)
	if err != nil {
		return nil, err
	}
	if _, err := b.cli.CreateStream(idleStream); err != nil {
		b.stop()
		return nil, fmt.Errorf("create stream: %w", err)
	}
	for i := range c.sinks {
		if err := b.createTopic(idleStream, idleTopic(i)); err != nil {
			b.stop()
			return nil, err
		}
	}
	m, err := iggcon.NewIggyMessage([]byte(`{"idle":"over"}`))
	if err != nil {
		b.stop()
		return nil, err
	}
	return &idleEnv{opts: o, dir: dir, broker: b, c: c, sent: make([]uint64, c.sinks), msg: []iggcon.IggyMessage{m},
		rng: rand.New(rand.NewPCG(3, 4))}, nil
}

// idleEnv runs one idle case's measurements on its broker.
type idleEnv struct {
	opts   options
	dir    string
	broker *broker
	c      idleCase
	sent   []uint64 // messages sent to each sink's topic so far
	msg    []iggcon.IggyMessage
	rng    *rand.Rand
}

func runIdleCase(o options, work string, c idleCase) (idleResult, error) {
	res := idleResult{c: c}
	e, err := newIdleEnv(o, work, c)
	if err != nil {
		return res, err
	}
	defer e.broker.stop()
	for round := 1; round <= o.rounds; round++ {
		for i, side := range idleSides {
			s, err := e.measure(round, side)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round, side.label, err)
			}
			res.sides[i] = append(res.sides[i], s)
			if o.verbose {
				fmt.Printf("  %s round %d %s: runner %.3f%%, broker/sink %.3f%%, supervisor %.3f%%, first message median %s\n", c.name, round,
					side.label, s.runnerCPU, s.brokerCPU, s.supervisorCPU, percentile(s.firstMessage, 50))
			}
		}
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }

func idleTopic(i int) string { return fmt.Sprintf("idle-%d", i) }
func idleKey(i int) string   { return fmt.Sprintf("idle-%d", i) }

// measure starts the supervisor with the case's sinks on side's setting and measures them.
func (e *idleEnv) measure(round int, side idleSide) (idleSample, error) {
	dir := filepath.Join(e.dir, fmt.Sprintf("round-%d-%c", round, side.label[0]))
	sup, api, err := e.startSupervisor(dir, side)
	if err != nil {
		return idleSample{}, err
	}
	defer sup.stop()
	pids, err := waitSinksRunning(sup, api, e.c.sinks)
	if err != nil {
		return idleSample{}, err
	}
	time.Sleep(idleWarmUp)

	var s idleSample
	procs := append([]int{e.broker.proc.cmd.Process.Pid, sup.cmd.Process.Pid}, pids...)
	before := make([]time.Duration, len(procs))
	for i, pid := range procs {
		before[i] = processCPU(pid)
	}
	start := time.Now()
	time.Sleep(e.opts.idleWindow)
	wall := time.Since(start)
	share := func(i int) float64 { return 100 * float64(processCPU(procs[i])-before[i]) / float64(wall) }
	s.brokerCPU = share(0) / float64(e.c.sinks)
	s.supervisorCPU = share(1)
	for i := range pids {
		s.runnerCPU += share(2+i) / float64(len(pids))
	}

	client := &http.Client{Timeout: 30 * time.Second}
	for range e.opts.idleGets {
		for _, route := range []string{"/stats", "/metrics"} {
			d, err := timedGet(client, "http://"+api+route)
			if err != nil {
				return s, err
			}
			if route == "/stats" {
				s.stats = append(s.stats, d)
			} else {
				s.metrics = append(s.metrics, d)
			}
		}
	}

	for i := range e.opts.idleSamples {
		time.Sleep(idleSpellMin + time.Duration(e.rng.Int64N(int64(idleSpellSpread))))
		d, err := e.firstMessage(i % e.c.sinks)
		if err != nil {
			return s, err
		}
		s.firstMessage = append(s.firstMessage, d)
	}
	return s, nil
}

// startSupervisor writes the runtime config and one connector file per sink and starts
// iggy-connectors on them; it returns the API's address.
func (e *idleEnv) startSupervisor(dir string, side idleSide) (*process, string, error) {
	connectors := filepath.Join(dir, "connectors")
	if err := os.MkdirAll(connectors, 0o755); err != nil {
		return nil, "", err
	}
	api, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	runtimeTOML := fmt.Sprintf(`[http]
enabled = true
address = %q

[http.metrics]
enabled = true
endpoint = "/metrics"

[iggy]
address = %q
username = %q
password = %q
protocol = %q

[state]
path = %q

[connectors]
config_type = "local"
config_dir = %q
`, api, e.broker.addr, username, password, e.c.protocol, filepath.Join(dir, "state"), connectors)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(runtimeTOML), 0o644); err != nil {
		return nil, "", err
	}
	for i := range e.c.sinks {
		sink := config.Connector{Kind: config.KindSink, Key: idleKey(i), Enabled: true, Version: 1, Name: "idle sink " + idleKey(i),
			Path: filepath.Join(e.opts.binDir, "plugins", "libiggy_connector_null_sink.so"), PluginConfig: map[string]any{},
			Streams: []config.StreamEntry{{Stream: idleStream, Topics: []string{idleTopic(i)}, Schema: "json",
				Declared: config.StreamDeclared{PollInterval: ptr("5ms")}}}}
		if side.idlePollMax != "" {
			sink.Streams[0].Declared.IdlePollMax = ptr(side.idlePollMax)
		}
		file, err := sink.MarshalTOML()
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(connectors, idleKey(i)+".toml"), file, 0o644); err != nil {
			return nil, "", err
		}
	}
	env := append([]string{"IGGY_CONNECTORS_CONFIG_PATH=" + filepath.Join(dir, "config.toml")}, e.opts.runnerEnv...)
	sup, err := startProcess(filepath.Join(e.opts.binDir, "iggy-connectors"), filepath.Join(dir, "supervisor.log"), cleanEnv(env...))
	if err != nil {
		return nil, "", err
	}
	return sup, api, nil
}

// waitSinksRunning waits until the supervisor's /stats shows every sink running and returns the
// runners' pids.
func waitSinksRunning(sup *process, api string, n int) ([]int, error) {
	deadline := time.Now().Add(2 * startLimit)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		var st struct {
			SinksRunning int `json:"sinks_running"`
			Connectors   []struct {
				Status string `json:"status"`
				PID    int    `json:"pid"`
			} `json:"connectors"`
		}
		err := getJSON(client, "http://"+api+"/stats", &st)
		if err == nil && st.SinksRunning == n {
			var pids []int
			for _, c := range st.Connectors {
				if c.Status == "running" && c.PID > 0 {
					pids = append(pids, c.PID)
				}
			}
			if len(pids) == n {
				return pids, nil
			}
		}
		if sup.exited() {
			return nil, fmt.Errorf("supervisor exited: %v\n%s", sup.err, sup.logTail())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d sinks not running after %s (last: %d running, %v)\n%s", n, 2*startLimit, st.SinksRunning, err, sup.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getJSON(client *http.Client, url string, v any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// timedGet is the time from sending GET url to its body read.
func timedGet(client *http.Client, url string) (time.Duration, error) {
	start := time.Now()
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return d, err
}

// firstMessage sends one message to sink i's topic and times it until the broker holds the
// group's stored offset of it (the sink stores it right after its plugin took it).
func (e *idleEnv) firstMessage(i int) (time.Duration, error) {
	topic, group := idleTopic(i), config.DefaultConsumerGroup(idleKey(i))
	want := e.sent[i]
	start := time.Now()
	if err := e.broker.cli.SendMessages(ident(idleStream), ident(topic), iggcon.PartitionId(0), e.msg); err != nil {
		return 0, fmt.Errorf("send to %s: %w", topic, err)
	}
	e.sent[i]++
	deadline := start.Add(runLimit)
	for {
		off, ok, err := e.broker.storedOffset(idleStream, topic, group)
		if err != nil {
			return 0, err
		}
		if ok && off >= want {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("sink %s did not store offset %d within %s", idleKey(i), want, runLimit)
		}
		time.Sleep(deliveryProbe)
	}
}

// processCPU is the CPU time of every thread of pid so far, from schedstat (nanoseconds, unlike
// the clock ticks of /proc/pid/stat), 0 when unreadable.
func processCPU(pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// percentile is the p-th percentile (nearest rank) of v, 0 when empty.
func percentile(v []time.Duration, p float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// printIdleTable prints two rows per idle case: CPU per runner (min / median / max over rounds),
// the broker's per sink and the supervisor's (medians), the first message after an idle spell and
// the supervisor's GET latencies (median / p99 over every round's samples).
func printIdleTable(results []idleResult) {
	if len(results) == 0 {
		return
	}
	fmt.Printf("\n%-18s %-10s %-24s %-11s %-10s %-20s %-18s %s\n", "idle case", "side", "runner %core min/med/max",
		"broker/sink", "supervisor", "first msg med/p99", "/stats med/p99", "/metrics med/p99")
	fmt.Println(strings.Repeat("-", 140))
	for _, r := range results {
		for i, side := range idleSides {
			var runner, broker, sup []float64
			var first, stats, metrics []time.Duration
			for _, s := range r.sides[i] {
				runner, broker, sup = append(runner, s.runnerCPU), append(broker, s.brokerCPU), append(sup, s.supervisorCPU)
				first, stats, metrics = append(first, s.firstMessage...), append(stats, s.stats...), append(metrics, s.metrics...)
			}
			lo, mid, hi := spread(runner)
			name := r.c.name
			if i > 0 {
				name = ""
			}
			fmt.Printf("%-18s %-10s %-24s %-11s %-10s %-20s %-18s %s\n", name, side.label,
				fmt.Sprintf("%.3f / %.3f / %.3f", lo, mid, hi), fmt.Sprintf("%.3f%%", median(broker)), fmt.Sprintf("%.3f%%", median(sup)),
				medP99(first), medP99(stats), medP99(metrics))
		}
	}
}

func medP99(v []time.Duration) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s", ms(percentile(v, 50)), ms(percentile(v, 99)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
