package ctl_test

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// The tap command prints one tap.Event JSON line per sampled message (what `test --input` reads),
// ends at --limit with exit 0, and reads the URL and key from the environment; --format text
// prints a line for people.
func TestTapCommand(t *testing.T) {
	p, fill := server(t)
	env := []string{"IGGY_CONNECTORS_URL=http://" + p.Addr, "IGGY_CONNECTORS_HTTP_API_KEY=" + apiKey}
	r := start(t, "tap", env, "sinks/out", "--point", "polled", "--point=delivered", "--limit", "40", "--rate", "100000")
	r.tapping(t)
	fill(20)
	if code := r.wait(t); code != ctl.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, r.stderr.String())
	}
	got := lines(r.stdout.String())
	if len(got) != 40 {
		t.Fatalf("%d lines, want 40 (20 polled, 20 delivered):\n%s", len(got), r.stdout.String())
	}
	points := map[string]int{}
	for _, l := range got {
		var e tap.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Stream != "demo" || e.Schema != "json" {
			t.Fatalf("line %q: %v", l, err)
		}
		points[e.Point]++
		if e.Point == tap.PointDelivered && !strings.Contains(string(e.Payload), `"stage":"cli"`) {
			t.Fatalf("delivered %s lacks the transform's field", e.Payload)
		}
	}
	if points[tap.PointPolled] != 20 || points[tap.PointDelivered] != 20 {
		t.Fatalf("points %v", points)
	}

	text := start(t, "tap", nil, "--url", p.Addr, "--api-key", apiKey, "--format", "text", "sinks/out", "--point", "delivered", "--limit", "1")
	text.tapping(t)
	fill(1)
	if code := text.wait(t); code != ctl.ExitOK {
		t.Fatalf("text: exit %d; stderr:\n%s", code, text.stderr.String())
	}
	if out := text.stdout.String(); !strings.Contains(out, "delivered") || !strings.Contains(out, "demo/events p0 @20") || !strings.Contains(out, `"stage":"cli"`) {
		t.Fatalf("text line %q", out)
	}
}

// Errors an operator can act on: a missing or wrong key names the flag and the variable, an
// unreachable server names its URL, a bad target or flag is a usage error (exit 2).
func TestServerCommandErrors(t *testing.T) {
	p, _ := server(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name string
		cmd  string
		env  []string
		args []string
		code int
		says string
	}{
		{"no key", "tap", nil, []string{"--url", p.Addr, "sinks/out"}, ctl.ExitMismatch, "the server needs an API key: --api-key or IGGY_CONNECTORS_HTTP_API_KEY"},
		{"wrong key", "logs", []string{"IGGY_CONNECTORS_HTTP_API_KEY=nope"}, []string{"--url", p.Addr, "sinks/out"}, ctl.ExitMismatch, "the key given was refused"},
		{"unreachable", "logs", []string{"IGGY_CONNECTORS_URL=" + deadURL}, []string{"sinks/out"}, ctl.ExitMismatch, "cannot reach the server at " + deadURL},
		{"unknown connector", "tap", nil, []string{"--url", p.Addr, "--api-key", apiKey, "sinks/nope"}, ctl.ExitMismatch, "Sink not found with key: nope"},
		{"bad point", "tap", nil, []string{"--url", p.Addr, "--api-key", apiKey, "--point", "sent", "sinks/out"}, ctl.ExitMismatch, "point"},
		{"bad target", "tap", nil, []string{"out"}, ctl.ExitUsage, "want sinks/KEY or sources/KEY"},
		{"two targets", "logs", nil, []string{"sinks/a", "sinks/b"}, ctl.ExitUsage, "want one connector"},
		{"bad format", "logs", nil, []string{"--format", "yaml", "sinks/out"}, ctl.ExitUsage, "--format"},
		{"bad level", "logs", nil, []string{"--level", "loud", "sinks/out"}, ctl.ExitUsage, "level"},
		{"bad flag", "tap", nil, []string{"--nope", "sinks/out"}, ctl.ExitUsage, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, tc.cmd, tc.env, tc.args...)
			code := r.wait(t)
			if code != tc.code || !strings.Contains(r.stderr.String(), tc.says) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q", code, r.stderr.String(), tc.code, tc.says)
			}
		})
	}
}
