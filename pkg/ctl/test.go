package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

const testUsage = `usage: iggy-connectors test CONNECTOR_FILE --input SAMPLES.jsonl [--expect EXPECTED.jsonl] [--update] [--format json|text]

Runs the sample messages through the connector's own decode, transforms and encode (the runner's
code, run as iggy-connector-runner --dry-run), with no Iggy and no plugin, and prints one JSON
line per message: what the sink plugin would receive ("delivered"), what a source would send
("sent", one per stream entry), "filtered", or "failed" with the stage and error.

  CONNECTOR_FILE   a connector file (TOML, or JSON when it ends in .json), as a runner reads it:
                   the IGGY_CONNECTORS_SINK_<KEY>_* / _SOURCE_<KEY>_* overrides of this
                   environment apply, as they would to a runner started here
  --input FILE     sample messages, one JSON object per line in the tap's event shape ("-": stdin)
  --expect FILE    compare the output with FILE: print a diff and exit 1 when they differ
  --update         with --expect: write the output to FILE instead of comparing
  --format F       json (default) or text (one line per message for people; diffs stay JSON)

Exit status: 0 done (or matched), 1 the output differs from --expect, 2 bad flags, connector
file or samples (named with the file, line and field). See docs/dry-runs.md.
`

// testFlags are the flags of `test`.
type testFlags struct {
	connector, input, expect, format string
	update                           bool
}

// parseTestFlags reads the connector file argument and the flags, in any order.
func parseTestFlags(args []string, stderr io.Writer) (testFlags, error) {
	var f testFlags
	fs := flag.NewFlagSet("iggy-connectors test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.input, "input", "", "")
	fs.StringVar(&f.expect, "expect", "", "")
	fs.BoolVar(&f.update, "update", false, "")
	fs.StringVar(&f.format, "format", "json", "")
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stderr, testUsage)
			}
			return f, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(positional) != 1:
		return f, fmt.Errorf("want one CONNECTOR_FILE, got %d arguments", len(positional))
	case f.input == "":
		return f, errors.New("--input SAMPLES.jsonl is required")
	case f.update && f.expect == "":
		return f, errors.New("--update needs --expect FILE (the file to write)")
	case f.format != "json" && f.format != "text":
		return f, fmt.Errorf("--format %q: json or text", f.format)
	}
	f.connector = positional[0]
	return f, nil
}

// runTest is `iggy-connectors test`: a dry run of a connector file over sample messages, in the
// runner binary (found as the supervisor finds it: IGGY_SUPERVISOR_RUNNER_PATH, next to this
// executable, PATH).
func runTest(ctx context.Context, args []string, env Env) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "iggy-connectors test: "+format+"\n", a...)
		return ExitUsage
	}
	f, err := parseTestFlags(args, env.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		return fail("%v (see iggy-connectors test --help)", err)
	}
	path := func(p string) string {
		if filepath.IsAbs(p) || env.Dir == "" {
			return p
		}
		return filepath.Join(env.Dir, p)
	}
	if _, err := os.Stat(path(f.connector)); err != nil {
		return fail("%s: %v", f.connector, errors.Unwrap(err))
	}
	samples := env.Stdin
	if f.input != "-" {
		file, err := os.Open(path(f.input))
		if err != nil {
			return fail("%s: %v", f.input, errors.Unwrap(err))
		}
		defer file.Close()
		samples = file
	}
	vars := config.EnvMap(env.Environ)
	bin, err := runnerproc.FindRunner(vars[runnerproc.EnvRunnerPath])
	if err != nil {
		return fail("%v", err)
	}
	for _, v := range appliedOverrides(path(f.connector), env.Environ) {
		fmt.Fprintf(env.Stderr, "iggy-connectors test: %s: applying %s from the environment\n", f.connector, v)
	}
	res, err := dryrun.Run(ctx, dryrun.Request{Runner: bin, Env: testEnv(env.Environ, f.connector), Dir: env.Dir, Samples: samples})
	if err != nil {
		return fail("%v", err)
	}
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			fmt.Fprintf(env.Stderr, "iggy-connectors test: %s\n", p.Where(f.connector, f.input))
		}
		return ExitUsage
	}
	switch {
	case f.update:
		if err := os.WriteFile(path(f.expect), res.Output, 0o644); err != nil {
			return fail("--update: %v", err)
		}
		fmt.Fprintf(env.Stderr, "iggy-connectors test: wrote %d lines to %s\n", bytes.Count(res.Output, []byte{'\n'}), f.expect)
		return ExitOK
	case f.expect != "":
		want, err := os.ReadFile(path(f.expect))
		if err != nil {
			return fail("--expect %s: %v", f.expect, errors.Unwrap(err))
		}
		got, expected := normalizeLines(res.Output), normalizeLines(want)
		if got == expected {
			fmt.Fprintf(env.Stderr, "iggy-connectors test: %s: %d lines match %s\n", f.connector, strings.Count(got, "\n"), f.expect)
			return ExitOK
		}
		fmt.Fprint(env.Stdout, udiff.Unified(f.expect, "output", expected, got))
		fmt.Fprintf(env.Stderr, "iggy-connectors test: %s: the output differs from %s (- expected, + output); run with --update to accept it\n", f.connector, f.expect)
		return ExitMismatch
	}
	return writeOutput(env.Stdout, res.Output, f.format)
}

// testEnv is the runner's environment: this one without the variables that choose a connector,
// and the connector file.
func testEnv(environ []string, connector string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(runnerproc.SupervisorVars, name) {
			out = append(out, kv)
		}
	}
	return append(out, runnerproc.EnvConfigPath+"="+connector)
}

// appliedOverrides names the connector override variables of environ that apply to the connector
// file (none when it does not parse: the runner reports that).
func appliedOverrides(path string, environ []string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	format := "toml"
	if strings.EqualFold(filepath.Ext(path), ".json") {
		format = "json"
	}
	c, err := config.ParseConnector(path, data, format)
	if err != nil {
		return nil
	}
	prefix := config.ConnectorEnvPrefix(c.Kind, c.Key)
	var names []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// normalizeLines is text as lines, each ending in a newline, without carriage returns or blank
// lines, for comparing an output with an expectation written on another system.
func normalizeLines(b []byte) string {
	var out strings.Builder
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) != "" {
			out.WriteString(line + "\n")
		}
	}
	return out.String()
}

// writeOutput prints the dry run's lines as they are (json) or one text line per event.
func writeOutput(w io.Writer, out []byte, format string) int {
	if format == "json" {
		_, _ = w.Write(out)
		return ExitOK
	}
	for line := range strings.Lines(string(out)) {
		var e tap.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			fmt.Fprint(w, line)
			continue
		}
		fmt.Fprintln(w, e.Text())
	}
	return ExitOK
}
