package logging_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// childEnv makes the test binary act as a runner writing its log (see
// TestMain): its value is the log format.
const childEnv = "LOGGING_TEST_RUNNER_FORMAT"

func TestMain(m *testing.M) {
	if format := os.Getenv(childEnv); format != "" {
		runAsRunner(format)
		return
	}
	os.Exit(m.Run())
}

// runAsRunner writes what a runner writes: its own log lines, a plugin's raw
// stdout line, a line longer than the relay's read buffer, and finally a Go
// panic on stderr.
func runAsRunner(format string) {
	log, err := logging.New(os.Stdout, format, "debug", slog.String("connector_key", "runner-own-key"), slog.String("connector_type", "sink"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	log.Info("sink running", "n", 5, "ok", true, "ratio", 0.5, "path", "/tmp/a b", slog.Group("g", "a", "b"))
	log.Debug("per-message detail")
	log.Warn("consume failed; retrying", "attempt", 1)
	fmt.Println("plugin says hi")
	log.Info("long", "blob", strings.Repeat("y", 100_000))
	panic("boom")
}

func TestRelayRunnerOutput(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			supervisorLog, err := logging.New(&out, "json", "info")
			if err != nil {
				t.Fatal(err)
			}
			runRelayedChild(t, format, supervisorLog, "pg-sink")

			lines := jsonLines(t, out.String())
			byMsg := map[string]map[string]any{}
			for i, raw := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if n := strings.Count(raw, `"connector_key"`); n != 1 {
					t.Errorf("line %d has connector_key %d times: %s", i+1, n, raw)
				}
				if lines[i]["connector_key"] != "pg-sink" {
					t.Errorf("line %d connector_key = %v, want pg-sink", i+1, lines[i]["connector_key"])
				}
				byMsg[fmt.Sprint(lines[i]["msg"])] = lines[i]
			}

			running := byMsg["sink running"]
			if running == nil {
				t.Fatalf("no 'sink running' line in:\n%s", out.String())
			}
			if running["level"] != "INFO" || running["n"] != 5.0 || running["ok"] != true || running["ratio"] != 0.5 ||
				running["path"] != "/tmp/a b" || running["connector_type"] != "sink" {
				t.Errorf("structured line lost its attributes: %v", running)
			}
			if format == "json" {
				if g, _ := running["g"].(map[string]any); g["a"] != "b" {
					t.Errorf("group attribute = %v, want {a: b}", running["g"])
				}
			}
			if ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(running["time"])); err != nil || time.Since(ts) > time.Minute {
				t.Errorf("time = %v (%v), want the runner's recent timestamp", running["time"], err)
			}
			if _, ok := byMsg["per-message detail"]; ok {
				t.Errorf("a debug line passed the supervisor's info filter")
			}
			if w := byMsg["consume failed; retrying"]; w["level"] != "WARN" || w["attempt"] != 1.0 {
				t.Errorf("warn line = %v", w)
			}
			if p := byMsg["plugin says hi"]; p["level"] != "INFO" {
				t.Errorf("plain line = %v, want an INFO line with the text as message", p)
			}
			if l := byMsg["long"]; len(fmt.Sprint(l["blob"])) != 100_000 {
				t.Errorf("the long line was not relayed whole (blob of %d bytes)", len(fmt.Sprint(l["blob"])))
			}
			if p := byMsg["panic: boom"]; p["level"] != "ERROR" {
				t.Errorf("panic line = %v, want ERROR", p)
			}
			if g := byMsg["goroutine 1 [running]:"]; g["level"] != "ERROR" {
				t.Errorf("stack trace line = %v, want ERROR after a panic", g)
			}
		})
	}
}

// runRelayedChild runs the test binary as a runner with stdout and stderr on
// one pipe, as the supervisor does, and relays it until the child exits.
func runRelayedChild(t *testing.T, format string, log *slog.Logger, key string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+format)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		logging.Relay(r, log, key)
	}()
	err = cmd.Wait()
	<-done
	r.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("child exit = %v, want the exit code 2 of a Go panic", err)
	}
}

func TestRelayTruncatesOverlongLines(t *testing.T) {
	var out bytes.Buffer
	log, err := logging.New(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("z", logging.MaxRelayLine+100_000)
	logging.Relay(strings.NewReader(huge+"\nnext line\n"), log, "k")

	lines := jsonLines(t, out.String())
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	if n := len(fmt.Sprint(lines[0]["msg"])); n > logging.MaxRelayLine || n < logging.MaxRelayLine-(64<<10) {
		t.Errorf("overlong line relayed as %d bytes, want about MaxRelayLine (%d)", n, logging.MaxRelayLine)
	}
	if lines[1]["msg"] != "next line" {
		t.Errorf("line after the overlong one = %v", lines[1])
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		ok    bool
		level slog.Level
		msg   string
		attrs string // attributes as slog renders them
	}{
		{"slog json", `{"time":"2026-01-02T03:04:05.5Z","level":"WARN","msg":"m","a":1,"b":"x"}`, true, slog.LevelWarn, "m", "[a=1 b=x]"},
		{"json trace", `{"level":"TRACE","msg":"t"}`, true, logging.LevelTrace, "t", "[]"},
		{"json in-between level", `{"level":"INFO+2","msg":"t"}`, true, slog.LevelInfo + 2, "t", "[]"},
		{"json nested", `{"msg":"m","g":{"h":{"i":[1,"two",null]}}}`, true, slog.LevelInfo, "m", "[g=[h=[i=[1 two <nil>]]]]"},
		{"json without msg", `{"level":"INFO"}`, false, 0, "", ""},
		{"json with trailing text", `{"msg":"m"} and more`, false, 0, "", ""},
		{"json array", `[1,2]`, false, 0, "", ""},
		{"slog text", `time=2026-01-02T03:04:05.000Z level=ERROR msg="a b" n=3 f=1.5 ok=false s=x`, true, slog.LevelError, "a b", "[n=3 f=1.5 ok=false s=x]"},
		{"text quoted with escapes", `level=DEBUG msg="line\nbreak" q="say \"hi\""`, true, slog.LevelDebug, "line\nbreak", `[q=say "hi"]`},
		{"text bad quote", `level=INFO msg="open`, false, 0, "", ""},
		{"plain", `goroutine 1 [running]:`, false, 0, "", ""},
		{"plain starting like text", `time is up`, false, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := logging.ParseLine([]byte(tt.line))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, l)
			}
			if !ok {
				return
			}
			if l.Level != tt.level || l.Message != tt.msg || fmt.Sprint(l.Attrs) != tt.attrs {
				t.Fatalf("got level %v msg %q attrs %v, want %v %q %s", l.Level, l.Message, l.Attrs, tt.level, tt.msg, tt.attrs)
			}
		})
	}
}

func TestRelayerLineByLine(t *testing.T) {
	var out bytes.Buffer
	log, err := logging.New(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	rl := logging.NewRelayer(log, "stdout-sink")
	steps := []struct {
		line  string
		level string // "" when nothing must be written
		msg   string
	}{
		{`{"level":"INFO","msg":"sink running","connector_key":"other"}` + "\n", "INFO", "sink running"},
		{`{"level":"DEBUG","msg":"hidden"}`, "", ""},
		{"", "", ""},
		{"plain text\r\n", "INFO", "plain text"},
		{"fatal error: unexpected signal", "ERROR", "fatal error: unexpected signal"},
		{"goroutine 7 [syscall]:", "ERROR", "goroutine 7 [syscall]:"},
		{`{"level":"INFO","msg":"structured lines keep their level"}`, "INFO", "structured lines keep their level"},
	}
	for i, s := range steps {
		out.Reset()
		rl.Line(s.line)
		if s.level == "" {
			if out.Len() != 0 {
				t.Errorf("step %d (%q): wrote %s, want nothing", i, s.line, out.String())
			}
			continue
		}
		objs := jsonLines(t, out.String())
		if len(objs) != 1 || objs[0]["level"] != s.level || objs[0]["msg"] != s.msg || objs[0]["connector_key"] != "stdout-sink" {
			t.Errorf("step %d (%q): wrote %v, want level %s msg %q connector_key stdout-sink", i, s.line, objs, s.level, s.msg)
		}
	}
}
