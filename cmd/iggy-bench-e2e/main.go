// Command iggy-bench-e2e measures the connector runner end to end: for each case it runs a bare
// official Go SDK v0.8.0 loop doing the same Iggy work (A) and the real iggy-connector-runner
// binary with a real C plugin (B), interleaved A B A B for several rounds against one dev broker
// process per case, and prints the runner/bare throughput ratio (min, median, max over rounds).
// The cases ending in -0.9 compare a runner speaking Iggy 0.9 with a bare loop of our own 0.9
// client; those ending in -0.9v0.8 compare the runner over 0.9 (B) with itself over 0.8 (A).
// The idle cases (idle-sinks-N) measure N idle sinks under a real supervisor, upstream's fixed
// poll interval (A) against the idle back-off (B), in a table of their own. The tap cases
// (sink-null-json-tap*) measure the runner with no tap open (A) against the same runner with a
// live-tap client (B): one reading every event, one at the highest rate, one that never reads;
// their table gives each tapped figure as a ratio of the no-tap one. The console case
// (console-50) measures the supervisor's CPU with its console open in a real headless Chromium
// on 50 idle sinks.
//
// Files: main.go (flags, rounds, tables), cases.go (the cases: payloads, connector files, bare
// SDK loops), bare09.go (the bare 0.9 client loops), procs.go (the broker and runner processes and
// the broker-side progress probes), idle.go (the idle cases), tap.go (the tap cases' clients),
// console.go (the console case), latency.go (the latency cases).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

const usage = `iggy-bench-e2e: the connector runner against a bare Go SDK loop, end to end.

For each case: one dev broker process (iggy-dev-server); then, for every round, a bare
official Go SDK v0.8.0 loop doing the same Iggy work (A: consumer-group poll + offset store for
sinks, a send loop for sources) and the real iggy-connector-runner process with the real C plugin
(B), interleaved A B A B; the -0.9 cases use a bare loop of our 0.9 client as A, the -0.9v0.8
cases the runner over 0.8. Prints msg/s of each (median over rounds) and the runner/bare ratio
(min / median / max over rounds). ~100 B JSON records (proto and avro cases encode the same
records), batches of 1,000. A sink reads messages sent over its own protocol (the dev broker
converts a batch sent over the other one on every poll, which no real server does).

The tap cases (sink-null-json-tap, -tap-all, -tap-stalled) compare the runner with no tap open
(A) and the same runner with a live-tap client on GET /tap (B), both started paused and measured
from their resume: a client reading every event at the default rate, one reading every message at
polled and delivered, one that never reads (its buffer fills; the rest is dropped and counted).

The idle cases (idle-sinks-N) start N null sinks on empty topics under a real supervisor, at
poll_interval 5ms, A with idle_poll_max = "0" (upstream's fixed interval) and B with the default
back-off, interleaved; they print the CPU per runner, per sink in the broker and of the
supervisor over -idle-window, the latency of a first message after an idle spell (sent to the
topic, until the group's offset is stored) and the supervisor's GET /stats and /metrics latency.

The latency cases (latency-stdout-20, -0.9) feed one stdout sink at poll_interval 5ms a steady
20 msg/s, then single messages after idle spells of 2.5-3 s, and time each until the broker holds
the group's offset of it: A is the runner before idle_after (with -before, that tree's runner;
else idle_after = "0"), B this one with the defaults.

With -before DIR, every case of the main table also measures the runner (and plugins) of DIR,
interleaved in each round, and a second table shows both ratios, CPU per message and peak RSS.

The console case (console-50) runs 50 idle sinks under a supervisor and measures its CPU over
-console-window with no page open (A), the console's overview open in headless Chromium (B) and
one connector's page open (C), interleaved A B C per round; it prints what the page adds.

Usage: iggy-bench-e2e [flags]
`

type options struct {
	binDir         string
	rounds         int
	sinkMessages   int
	sourceMessages int
	only           *regexp.Regexp
	verbose        bool
	profileDir     string
	runnerEnv      []string // extra NAME=value entries for runner processes only
	idleWindow     time.Duration
	idleSamples    int
	idleGets       int
	consoleWindow  time.Duration
	before         string // the bin directory of the tree before a change: measured beside -bin

	latencyMessages, latencyIdle int // latency cases: steady messages and idle-spell samples per measurement
}

// envList collects repeated -runner-env flags.
type envList []string

func (l *envList) String() string { return strings.Join(*l, " ") }
func (l *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is not NAME=value", v)
	}
	*l = append(*l, v)
	return nil
}

func main() {
	var o options
	var only string
	exe, _ := os.Executable()
	flag.StringVar(&o.binDir, "bin", filepath.Dir(exe), "directory holding iggy-dev-server, iggy-connector-runner and plugins/")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds per case (>= 1)")
	flag.IntVar(&o.sinkMessages, "sink-messages", 300_000, "messages drained per sink measurement")
	flag.IntVar(&o.sourceMessages, "source-messages", 200_000, "messages produced per source measurement")
	flag.StringVar(&only, "cases", "", "run only the cases whose name matches this regular expression")
	flag.BoolVar(&o.verbose, "v", false, "print every measurement")
	var runnerEnv envList
	flag.Var(&runnerEnv, "runner-env", "NAME=value for runner processes only, e.g. GOGC=400 (repeatable)")
	flag.DurationVar(&o.idleWindow, "idle-window", 5*time.Second, "idle cases: the CPU measurement window")
	flag.IntVar(&o.idleSamples, "idle-samples", 30, "idle cases: first-message samples per measurement")
	flag.IntVar(&o.idleGets, "idle-gets", 100, "idle cases: GET /stats and GET /metrics each, per measurement")
	flag.DurationVar(&o.consoleWindow, "console-window", 30*time.Second, "console case: the CPU measurement window per view")
	flag.StringVar(&o.profileDir, "profile", "", "write each runner's CPU profile to this directory as <case>-<round>.pprof")
	flag.IntVar(&o.latencyMessages, "latency-messages", 300, "latency cases: messages of the steady 20 msg/s stream per measurement")
	flag.IntVar(&o.latencyIdle, "latency-idle", 4, "latency cases: messages after a long idle spell per measurement")
	flag.StringVar(&o.before, "before", "", "the bin directory of the tree before a change (its runner and plugins): every round measures its runner too, interleaved, and the tables show both")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
		fmt.Fprintln(flag.CommandLine.Output(), "\nCases:")
		for _, c := range allCases() {
			fmt.Fprintf(flag.CommandLine.Output(), "  %-22s %s\n", c.name, c.about)
		}
		for _, c := range idleCases() {
			fmt.Fprintf(flag.CommandLine.Output(), "  %-22s %d idle null sinks over %s, fixed interval against the idle back-off\n", c.name, c.sinks, c.protocol)
		}
		for _, c := range latencyCases() {
			fmt.Fprintf(flag.CommandLine.Output(), "  %-22s a stdout sink over %s fed 20 msg/s, then after idle spells: latency before idle_after (A) and with it (B)\n", c.name, c.protocol)
		}
		fmt.Fprintf(flag.CommandLine.Output(), "  %-22s the supervisor's CPU with the console open in Chromium on 50 idle sinks: no page, the overview, a connector page\n", consoleCaseName)
	}
	flag.Parse()
	o.runnerEnv = runnerEnv
	if flag.NArg() > 0 || o.rounds < 1 || o.sinkMessages < 1000 || o.sourceMessages < 1000 || o.idleWindow <= 0 || o.idleSamples < 1 || o.idleGets < 1 || o.consoleWindow <= 0 || o.latencyMessages < 1 || o.latencyIdle < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			fmt.Fprintf(os.Stderr, "iggy-bench-e2e: -cases %q: %v\n", only, err)
			os.Exit(2)
		}
		o.only = re
	}
	log.SetOutput(io.Discard) // the SDK logs every connection's cluster discovery through package log
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "iggy-bench-e2e:", err)
		os.Exit(1)
	}
}

// result is one case's measurements, one entry per round.
type result struct {
	name         string
	bare, runner []sample
	tapped       bool // a tap case: bare is the runner with no tap open
	// With -before: the same round's measurements with the runner of the tree before (a bare
	// loop is measured once and serves both).
	oldBare, oldRunner []sample
}

func run(o options) error {
	for _, f := range []string{"iggy-dev-server", "iggy-connector-runner", "iggy-connectors"} {
		if _, err := os.Stat(filepath.Join(o.binDir, f)); err != nil {
			return fmt.Errorf("%w (run `make build` first, or pass -bin)", err)
		}
	}
	work, err := os.MkdirTemp("", "iggy-bench-e2e")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	started := time.Now()
	fmt.Printf("iggy-bench-e2e: %d rounds (bare, runner interleaved), sink %d msgs, source %d msgs, batches of %d, GOMAXPROCS %d%s\n",
		o.rounds, o.sinkMessages, o.sourceMessages, batchSize, runtime.GOMAXPROCS(0), strings.Join(append([]string{""}, o.runnerEnv...), ", runner "))
	results, err := runMatching(o, allCases(), func(c benchCase) string { return c.name }, func(c benchCase) (result, error) {
		res, err := runCase(o, work, c)
		if err == nil && o.verbose {
			fmt.Printf("  %s: bare %s, runner %s msg/s\n", c.name, rates(res.bare), rates(res.runner))
		}
		return res, err
	})
	if err != nil {
		return err
	}
	idle, err := runMatching(o, idleCases(), func(c idleCase) string { return c.name }, func(c idleCase) (idleResult, error) {
		return runIdleCase(o, work, c)
	})
	if err != nil {
		return err
	}
	latency, err := runMatching(o, latencyCases(), func(c latencyCase) string { return c.name }, func(c latencyCase) (latencyResult, error) {
		return runLatencyCase(o, work, c)
	})
	if err != nil {
		return err
	}
	console, err := runMatching(o, []string{consoleCaseName}, func(name string) string { return name }, func(string) ([]consoleSample, error) {
		return runConsoleCase(o, work)
	})
	if err != nil {
		return err
	}
	var plain, tapped []result
	for _, r := range results {
		if r.tapped {
			tapped = append(tapped, r)
		} else {
			plain = append(plain, r)
		}
	}
	if len(plain) > 0 {
		printTable(plain, "bare msg/s", "runner", "bare:runner")
	}
	if len(tapped) > 0 {
		printTable(tapped, "no tap", "tapped", "none:tapped")
	}
	printIdleTable(idle)
	printLatencyTable(latency)
	for _, c := range console {
		printConsoleTable(c, o.consoleWindow)
	}
	fmt.Printf("total %s\n", time.Since(started).Round(time.Second))
	return nil
}

// runMatching runs the cases -cases selects, in order, stopping at the first error.
func runMatching[C, R any](o options, cases []C, name func(C) string, run func(C) (R, error)) ([]R, error) {
	var out []R
	for _, c := range cases {
		if o.only != nil && !o.only.MatchString(name(c)) {
			continue
		}
		res, err := run(c)
		if err != nil {
			return out, fmt.Errorf("case %s: %w", name(c), err)
		}
		out = append(out, res)
	}
	return out, nil
}

// caseBroker makes the case's directory under work and starts its broker there.
func caseBroker(o options, work, name string) (dir string, b *broker, err error) {
	dir = filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	b, err = startBroker(o.binDir, dir)
	return dir, b, err
}

// runCase starts a broker for the case and measures bare and runner alternately.
func runCase(o options, work string, c benchCase) (result, error) {
	res := result{name: c.name, tapped: c.baseline == runnerNoTap}
	dir, broker, err := caseBroker(o, work, c.name)
	if err != nil {
		return res, err
	}
	defer broker.stop()
	env := &caseEnv{opts: o, dir: dir, broker: broker, c: c, bin: o.binDir}
	if err := env.prepare(); err != nil {
		return res, err
	}
	defer env.close()
	old := *env
	old.bin, old.prefix = o.before, "old-"
	for round := 1; round <= o.rounds; round++ {
		bare, err := env.measureBare(round)
		if err != nil {
			return res, fmt.Errorf("round %d, bare SDK: %w", round, err)
		}
		rn, err := env.measureRunner(round)
		if err != nil {
			return res, fmt.Errorf("round %d, runner: %w", round, err)
		}
		res.bare = append(res.bare, bare)
		res.runner = append(res.runner, rn)
		if o.before == "" {
			continue
		}
		oldBare := bare
		if c.baseline == runner08 || c.baseline == runnerNoTap { // A is a runner too: the old one
			if oldBare, err = old.measureBare(round); err != nil {
				return res, fmt.Errorf("round %d, runner before (A): %w", round, err)
			}
		}
		oldRunner, err := old.measureRunner(round)
		if err != nil {
			return res, fmt.Errorf("round %d, runner before: %w", round, err)
		}
		res.oldBare, res.oldRunner = append(res.oldBare, oldBare), append(res.oldRunner, oldRunner)
	}
	return res, nil
}

// printTable prints one row per case: median rates, the runner/bare rate ratio over the rounds,
// the CPU time per message of each side (bare: this process; runner: the runner process; the
// broker's is in neither) and the runner's peak RSS.
func printTable(results []result, aName, bName, cpuNames string) {
	fmt.Printf("\n%-26s %11s %11s  %-20s %-18s %s\n", "case", aName, bName, "ratio min/med/max", "CPU/msg "+cpuNames, bName+" RSS")
	fmt.Println(strings.Repeat("-", 104))
	defer printBeforeTable(results)
	for _, r := range results {
		ratios := make([]float64, len(r.bare))
		var bareRates, runnerRates, bareCPU, runnerCPU []float64
		var rss uint64
		for i := range r.bare {
			ratios[i] = r.runner[i].rate / r.bare[i].rate
			bareRates, runnerRates = append(bareRates, r.bare[i].rate), append(runnerRates, r.runner[i].rate)
			bareCPU = append(bareCPU, float64(r.bare[i].cpuPerMsg.Nanoseconds()))
			runnerCPU = append(runnerCPU, float64(r.runner[i].cpuPerMsg.Nanoseconds()))
			rss = max(rss, r.runner[i].peakRSS)
		}
		lo, mid, hi := spread(ratios)
		fmt.Printf("%-26s %11s %11s  %-20s %-18s %.1f MiB\n", r.name, thousands(median(bareRates)), thousands(median(runnerRates)),
			fmt.Sprintf("%.2f / %.2f / %.2f", lo, mid, hi), fmt.Sprintf("%.0f : %.0f ns", median(bareCPU), median(runnerCPU)), float64(rss)/(1<<20))
	}
}

func spread(v []float64) (lo, mid, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[0], median(s), s[len(s)-1]
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func rates(v []sample) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = thousands(x.rate)
	}
	return strings.Join(parts, " ")
}

// thousands prints a rate as 1,234,567.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// printBeforeTable prints, for the cases measured with -before, the ratio of the tree before
// beside this one's, the runners' CPU per message and peak RSS, before and after.
func printBeforeTable(results []result) {
	var with []result
	for _, r := range results {
		if len(r.oldRunner) > 0 {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Printf("\n%-26s %-20s %-20s %-22s %s\n", "case (before -> after)", "ratio before", "ratio after", "runner CPU/msg", "runner peak RSS")
	fmt.Println(strings.Repeat("-", 110))
	for _, r := range with {
		ratios := func(bare, runner []sample) string {
			v := make([]float64, len(runner))
			for i := range runner {
				v[i] = runner[i].rate / bare[i].rate
			}
			lo, mid, hi := spread(v)
			return fmt.Sprintf("%.2f / %.2f / %.2f", lo, mid, hi)
		}
		cpu := func(v []sample) float64 {
			var ns []float64
			for _, s := range v {
				ns = append(ns, float64(s.cpuPerMsg.Nanoseconds()))
			}
			return median(ns)
		}
		rss := func(v []sample) float64 {
			var m uint64
			for _, s := range v {
				m = max(m, s.peakRSS)
			}
			return float64(m) / (1 << 20)
		}
		fmt.Printf("%-26s %-20s %-20s %-22s %.1f -> %.1f MiB\n", r.name, ratios(r.oldBare, r.oldRunner), ratios(r.bare, r.runner),
			fmt.Sprintf("%.0f -> %.0f ns", cpu(r.oldRunner), cpu(r.runner)), rss(r.oldRunner), rss(r.runner))
	}
}
