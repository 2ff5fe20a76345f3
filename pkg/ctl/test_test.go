package ctl_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// -update rewrites the golden files (expected.jsonl, expected.txt) from the output; review the diff.
var update = flag.Bool("update", false, "rewrite the golden files of the test subcommand")

// runTest runs `iggy-connectors test` with args in dir, the runner binary built from this tree.
func runTest(t *testing.T, dir string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd, ok := ctl.Lookup("test")
	if !ok {
		t.Fatal("no test subcommand")
	}
	code = cmd.Run(context.Background(), args, ctl.Env{
		Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin), Dir: dir,
		Environ: []string{"IGGY_SUPERVISOR_RUNNER_PATH=" + testkit.RunnerBinary(t), "PATH=" + os.Getenv("PATH")},
	})
	return code, out.String(), errOut.String()
}

// caseDirs are the golden cases: testdata/test/<case>/ with connector.toml (or .json),
// samples.jsonl and expected.jsonl, the output the test subcommand must print.
func caseDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "test", "*", "samples.jsonl"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

func connectorFile(t *testing.T, dir string) string {
	t.Helper()
	for _, name := range []string{"connector.toml", "connector.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return name
		}
	}
	t.Fatalf("%s: no connector.toml or connector.json", dir)
	return ""
}

// Every golden case's output matches its expected.jsonl (exit 0), and its --format text output
// matches expected.txt. Together the cases run every schema and every transform.
func TestGoldenFiles(t *testing.T) {
	for _, dir := range caseDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			args := []string{connectorFile(t, dir), "--input", "samples.jsonl", "--expect", "expected.jsonl"}
			if *update {
				args = append(args, "--update")
			}
			if code, stdout, stderr := runTest(t, dir, "", args...); code != ctl.ExitOK {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			code, text, stderr := runTest(t, dir, "", connectorFile(t, dir), "--input", "samples.jsonl", "--format", "text")
			if code != ctl.ExitOK {
				t.Fatalf("--format text: exit %d\n%s", code, stderr)
			}
			golden := filepath.Join(dir, "expected.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if text != string(want) {
				t.Fatalf("--format text output\n%s\nwant (%s)\n%s", text, golden, want)
			}
		})
	}
}

// writeCase writes a sink connector file and samples into a fresh directory.
func writeCase(t *testing.T, connector, samples string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"connector.toml": connector, "samples.jsonl": samples} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const plainSink = `type = "sink"
key = "plain"
enabled = true
version = 0
name = "plain"
path = "/opt/plugins/libsink.so"
[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
`

// Exit 1 with a diff on a difference; --update records the output so the next run matches.
func TestExpectAndUpdate(t *testing.T) {
	dir := writeCase(t, plainSink, `{"payload":{"a":1}}`+"\n"+`{"payload":{"b":2}}`+"\n")
	wrong := `{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":0,"id":"0","timestamp":0,"headers":[],"schema":"json","size":7,"payload":{"a":1}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "expected.jsonl"), []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runTest(t, dir, "", "connector.toml", "--input", "samples.jsonl", "--expect", "expected.jsonl")
	if code != ctl.ExitMismatch || !strings.Contains(stdout, "--- expected.jsonl") || !strings.Contains(stdout, "+++ output") ||
		!strings.Contains(stdout, `+{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":1,`) || !strings.Contains(stderr, "--update") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr = runTest(t, dir, "", "--update", "connector.toml", "--expect", "expected.jsonl", "--input", "samples.jsonl"); code != ctl.ExitOK {
		t.Fatalf("--update: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runTest(t, dir, "", "connector.toml", "--input", "samples.jsonl", "--expect", "expected.jsonl")
	if code != ctl.ExitOK || stdout != "" || !strings.Contains(stderr, "2 lines match expected.jsonl") {
		t.Fatalf("after --update: exit %d\n%s%s", code, stdout, stderr)
	}
	// Samples from standard input; the output is the same.
	code, stdout, _ = runTest(t, dir, `{"payload":{"a":1}}`, "connector.toml", "--input", "-")
	if code != ctl.ExitOK || stdout != wrong {
		t.Fatalf("stdin: exit %d: %s", code, stdout)
	}
}

// Exit 2 for bad flags, files, config and samples, each named.
func TestBadInputExits2(t *testing.T) {
	dir := writeCase(t, strings.Replace(plainSink, `schema = "json"`, `schema = "xml"`, 1), `{"payload":1}`+"\n"+`{"payload":1,"offset":"x"}`+"\n")
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		want    []string
	}{
		{"bad config and sample", nil, []string{"connector.toml", "--input", "samples.jsonl"},
			[]string{`connector.toml: streams[0].schema: `, `"xml"`, `samples.jsonl:2: offset: expected an unsigned 64-bit integer, got "x"`}},
		{"no such connector file", nil, []string{"nope.toml", "--input", "samples.jsonl"}, []string{"nope.toml: no such file or directory"}},
		{"no such samples file", nil, []string{"connector.toml", "--input", "nope.jsonl"}, []string{"nope.jsonl: no such file or directory"}},
		{"no --input", nil, []string{"connector.toml"}, []string{"--input SAMPLES.jsonl is required"}},
		{"two files", nil, []string{"a.toml", "b.toml", "--input", "x"}, []string{"want one CONNECTOR_FILE, got 2"}},
		{"--update without --expect", nil, []string{"connector.toml", "--input", "samples.jsonl", "--update"}, []string{"--update needs --expect"}},
		{"bad format", nil, []string{"connector.toml", "--input", "samples.jsonl", "--format", "yaml"}, []string{`--format "yaml": json or text`}},
		{"unknown flag", nil, []string{"connector.toml", "--inptu", "x"}, []string{"flag provided but not defined: -inptu"}},
		{"no runner", []string{"IGGY_SUPERVISOR_RUNNER_PATH=/nonexistent/runner"}, []string{"connector.toml", "--input", "samples.jsonl"},
			[]string{"IGGY_SUPERVISOR_RUNNER_PATH", "binary not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd, _ := ctl.Lookup("test")
			environ := append([]string{"IGGY_SUPERVISOR_RUNNER_PATH=" + testkit.RunnerBinary(t)}, tc.environ...)
			code := cmd.Run(context.Background(), tc.args, ctl.Env{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""), Dir: dir, Environ: environ})
			if code != ctl.ExitUsage || out.Len() > 0 {
				t.Fatalf("exit %d, stdout %q; want %d and nothing", code, out.String(), ctl.ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q lacks %q", errOut.String(), w)
				}
			}
		})
	}
	code, _, stderr := runTest(t, dir, "", "--help")
	if code != ctl.ExitOK || !strings.Contains(stderr, "usage: iggy-connectors test CONNECTOR_FILE") {
		t.Fatalf("--help: exit %d: %s", code, stderr)
	}
}

// The connector's environment overrides apply, as they would to a runner started here, and the
// command says which.
func TestEnvironmentOverridesApply(t *testing.T) {
	dir := writeCase(t, plainSink, `{"payload":{"a":1}}`)
	var out, errOut bytes.Buffer
	cmd, _ := ctl.Lookup("test")
	code := cmd.Run(context.Background(), []string{"connector.toml", "--input", "samples.jsonl"}, ctl.Env{
		Stdout: &out, Stderr: &errOut, Dir: dir,
		Environ: []string{"IGGY_SUPERVISOR_RUNNER_PATH=" + testkit.RunnerBinary(t), "IGGY_CONNECTORS_SINK_PLAIN_STREAMS_0_SCHEMA=raw",
			"IGGY_CONNECTORS_SINK_PLAIN_STREAMS_0_STREAM=s2", "IGGY_CONNECTORS_SINK_PLAIN_STREAMS_0_TOPICS=[t2]"},
	})
	if code != ctl.ExitOK || !strings.Contains(out.String(), `"stream":"s2","topic":"t2",`) || !strings.Contains(out.String(), `"schema":"raw"`) ||
		!strings.Contains(errOut.String(), "connector.toml: applying IGGY_CONNECTORS_SINK_PLAIN_STREAMS_0_SCHEMA from the environment") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
