package runner_test

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// runCheck runs `iggy-connector-runner --check` with env and returns its stdout lines and exit code.
func runCheck(t *testing.T, env []string) ([]string, int) {
	t.Helper()
	cmd := exec.Command(testkit.RunnerBinary(t), "--check")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("--check wrote to stderr: %s", stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, code
}

// --check makes the checks of a start and says per problem which field is at fault: exit 0 and
// nothing printed for a sink that would start; exit 2 and one "field: message" line per problem
// otherwise, several problems at once where they are independent.
func TestCheckReportsEveryProblemByField(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := baseEnv(srv, t.TempDir())
	sink := testkit.PluginPath(t, "null_sink")
	stripped := testkit.CompileC(t, testkit.SinkWithoutConsumeC, "libstripped_sink")
	allowed := "IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS=" + filepath.Dir(sink) + "," + filepath.Dir(stripped)
	examplesOnly := "IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS=" + filepath.Dir(sink)

	lines, code := runCheck(t, withConfig(env, sinkTOML("ok", sink, "demo", "events", "", "")))
	if code != 0 || len(lines) != 0 {
		t.Fatalf("valid sink: exit %d, lines %q; want 0 and none", code, lines)
	}
	lines, code = runCheck(t, withConfig(env, sourceTOML("gen", testkit.PluginPath(t, "random_source"), "anywhere", "new", "", "")))
	if code != 0 || len(lines) != 0 {
		t.Fatalf("valid source (its topic is created at start): exit %d, lines %q; want 0 and none", code, lines)
	}

	for _, tc := range []struct {
		name  string
		env   []string
		lines []string // prefixes, in order
	}{
		{"bad batch_length", withConfig(env, sinkTOML("k", sink, "demo", "events", "batch_length = -1", "")),
			[]string{"streams[0].batch_length: expected an unsigned integer"}},
		{"missing library and missing topic", withConfig(env, sinkTOML("k", "/nowhere/libnothing.so", "demo", "absent", "", "")),
			[]string{"path: Failed to resolve plugin path", `streams[0].topics[0]: topic "absent" does not exist in stream "demo"`}},
		{"missing stream", withConfig(env, sinkTOML("k", sink, "nostream", "events", "", "")),
			[]string{`streams[0].stream: stream "nostream" does not exist`}},
		{"library missing symbols", append(withConfig(env, sinkTOML("k", stripped, "demo", "events", "", "")), allowed),
			[]string{"path: load sink plugin"}},
		{"library outside the allowed directories", append(withConfig(env, sinkTOML("k", stripped, "demo", "events", "", "")), examplesOnly),
			[]string{"path: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, code := runCheck(t, tc.env)
			if code != 2 || len(lines) != len(tc.lines) {
				t.Fatalf("exit %d, lines %q; want 2 and %d lines starting %q", code, lines, len(tc.lines), tc.lines)
			}
			for i, want := range tc.lines {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
				}
			}
		})
	}
	// The symbol problem names the missing symbol; the allow-list problem says so.
	if lines, _ := runCheck(t, append(withConfig(env, sinkTOML("k", stripped, "demo", "events", "", "")), allowed)); !strings.Contains(lines[0], "iggy_sink_consume") {
		t.Errorf("missing-symbol line %q does not name iggy_sink_consume", lines[0])
	}
	if lines, _ := runCheck(t, append(withConfig(env, sinkTOML("k", stripped, "demo", "events", "", "")), examplesOnly)); !strings.Contains(lines[0], "allowed") {
		t.Errorf("allow-list line %q does not say the directory is not allowed", lines[0])
	}
}
