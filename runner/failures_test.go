package runner_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// expectExit waits for the runner to exit and checks its code and that its logs give the reason.
func expectExit(t *testing.T, p *testkit.RunnerProc, wantCode int, reason string) {
	t.Helper()
	code, err := p.Wait(waitLong)
	if err != nil {
		t.Fatalf("runner did not exit: %v; logs:\n%s", err, p.Logs())
	}
	if code != wantCode {
		t.Fatalf("exit code %d, want %d; logs:\n%s", code, wantCode, p.Logs())
	}
	if !strings.Contains(p.Logs(), reason) {
		t.Fatalf("logs do not give the reason %q:\n%s", reason, p.Logs())
	}
}

// Fatal connector errors stop the runner with exit code 1 and the reason logged, so a supervisor
// restarts it; nothing busy-loops.
func TestFatalErrorsExitNonZero(t *testing.T) {
	fault := testkit.PluginPath(t, "fault")
	cases := []struct {
		name   string
		toml   func(addr string) string
		extra  []string
		reason string
	}{
		{
			name:   "sink stream missing",
			toml:   func(string) string { return sinkTOML("s1", fault, "nowhere", "events", "", "") },
			reason: "stream or topic not found",
		},
		{
			name:   "sink topic missing",
			toml:   func(string) string { return sinkTOML("s2", fault, "demo", "nothing", "", "") },
			reason: "stream or topic not found",
		},
		{
			name:   "sink plugin open fails",
			toml:   func(string) string { return sinkTOML("s3", fault, "demo", "events", "", "open_code = 1") },
			reason: "plugin initialization failed",
		},
		{
			name:   "sink plugin library missing",
			toml:   func(string) string { return sinkTOML("s4", "/nonexistent/libnothing.so", "demo", "events", "", "") },
			reason: "libnothing",
		},
		{
			name:   "sink consume keeps failing",
			toml:   func(string) string { return sinkTOML("s5", fault, "demo", "events", "", "consume_code = 1") },
			extra:  []string{"IGGY_CONNECTOR_CONSUME_RETRIES=2", "IGGY_CONNECTOR_RETRY_BACKOFF_MIN=5ms", "IGGY_CONNECTOR_RETRY_BACKOFF_MAX=20ms"},
			reason: "consume failed after 3 attempts",
		},
		{
			name:   "sink consume hangs",
			toml:   func(string) string { return sinkTOML("s6", fault, "demo", "events", "", "hang_on_batch = 1") },
			extra:  []string{"IGGY_CONNECTOR_PLUGIN_TIMEOUT=300ms", "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=300ms"},
			reason: "plugin call timed out",
		},
		{
			name:   "source handle fails",
			toml:   func(string) string { return sourceTOML("p1", fault, "demo", "events", "", "handle_code = 3") },
			reason: "source stalled",
		},
		{
			name:   "source batch-result hook fails",
			toml:   func(string) string { return sourceTOML("p2", fault, "demo", "events", "", "fail_batch_result = true") },
			reason: "source stalled",
		},
		{
			name:   "source batch result hangs",
			toml:   func(string) string { return sourceTOML("p5", fault, "demo", "events", "", "hang_batch_result = true") },
			extra:  []string{"IGGY_CONNECTOR_PLUGIN_TIMEOUT=300ms", "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=300ms"},
			reason: "plugin call timed out",
		},
		{
			name: "source batches keep being rejected",
			// The fault source produces JSON; a raw stream cannot encode it, so every batch is NACKed.
			toml: func(string) string {
				return strings.Replace(sourceTOML("p4", fault, "demo", "events", "", ""), `schema = "json"`, `schema = "raw"`, 1)
			},
			reason: "5 consecutive NACKs",
		},
		{
			name:   "source target id missing",
			toml:   func(string) string { return sourceTOML("p3", fault, "4242", "events", "", "") },
			reason: "stream or topic not found",
		},
	}
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 20)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append(withConfig(baseEnv(srv, t.TempDir()), c.toml(srv.Addr())), c.extra...)
			p := testkit.StartRunner(t, env)
			expectExit(t, p, 1, c.reason)
		})
	}
}

// A consume that fails a few times is retried; the batch is delivered once it succeeds and every
// failed attempt counts as an error.
func TestSinkRetriesFailedConsume(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", 30)
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("retry", testkit.PluginPath(t, "fault"), "demo", "events", "",
		"consume_code = 1\nconsume_fail_count = 2")), "IGGY_CONNECTOR_RETRY_BACKOFF_MIN=5ms")
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "all 30 messages processed", func() bool { return testkit.OrZero(p.Stats(t).MessagesProcessed) == 30 })
	if s := p.Stats(t); s.Errors != 2 || testkit.OrZero(s.MessagesConsumed) != 30 {
		t.Fatalf("errors %d consumed %d; want 2 failed attempts and 30 consumed", s.Errors, testkit.OrZero(s.MessagesConsumed))
	}
}

// With the default offset_commit (after_consuming) a batch the plugin refused is not committed: a
// healthy runner in the same consumer group starts again from offset 0. With after_polling
// (upstream's at-most-once) the same refusal loses the batch.
func TestOffsetCommitModes(t *testing.T) {
	for _, c := range []struct {
		mode        string
		wantOffset0 bool
	}{
		{"after_consuming", true},
		{"after_polling", false},
	} {
		t.Run(c.mode, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
			fillTopic(t, srv, "demo", "events", 50)
			env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTOR_CONSUME_RETRIES=0")
			extra := fmt.Sprintf("offset_commit = %q\nconsumer_group = \"shared\"", c.mode)
			failing := testkit.StartRunner(t, withConfig(env, sinkTOML("k", testkit.PluginPath(t, "fault"), "demo", "events", extra, "consume_code = 1")))
			expectExit(t, failing, 1, "consume failed")

			healthy := testkit.StartRunner(t, withConfig(env, sinkTOML("k", testkit.PluginPath(t, "stdout_sink"), "demo", "events", extra, "print_payload = true")))
			healthy.WaitStatus(t, "running", waitLong)
			if c.wantOffset0 {
				healthy.WaitUntil(t, waitLong, "all 50 messages", func() bool { return len(offsetsSeen(healthy.Logs())) == 50 })
				return
			}
			// after_polling: the refused batch (the whole topic) was committed when polled. A
			// message sent now is the next the healthy runner gets; a redelivery would come first.
			fillTopic(t, srv, "demo", "events", 1)
			healthy.WaitUntil(t, waitLong, "the message sent after the refusal (offset 50)", func() bool { return offsetsSeen(healthy.Logs())[50] > 0 })
			if seen := offsetsSeen(healthy.Logs()); len(seen) != 1 {
				t.Fatalf("after_polling redelivered %d messages; upstream's mode commits at poll time", len(seen)-1)
			}
		})
	}
}

// A source plugin built against the older ABI (iggy_source_handle, no acks) runs too (docs/architecture.md, decision 8).
func TestLegacySourceABI(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	lib := testkit.BuildPlugins(t) + "/" + testkit.LegacyFaultPlugin
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sourceTOML("old", lib, "demo", "events", "",
		"messages_per_batch = 5\nmax_messages = 40\ninterval_ms = 2")))
	p.WaitStatus(t, "running", waitLong)
	p.WaitUntil(t, waitLong, "40 messages sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) >= 40 })
	p.WaitUntil(t, waitLong, "the runner to log that the plugin runs without acks", func() bool { return strings.Contains(p.Logs(), "acks=false") })
	if got := len(readTopic(t, srv, "demo", "events")); got != 40 {
		t.Fatalf("topic holds %d messages, want 40", got)
	}
}

// The endpoint checks the api-key header as upstream does: / and /health are open, the rest need it;
// /ready (ours) is open like /health, since probes carry no key.
func TestEndpointAPIKey(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("keyed", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
		"IGGY_CONNECTORS_HTTP_API_KEY=s3cret")
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	for _, c := range []struct {
		path, key string
		want      int
	}{
		{"/health", "", http.StatusOK},
		{"/", "", http.StatusOK},
		{"/ready", "", http.StatusOK},
		{"/stats", "", http.StatusUnauthorized},
		{"/stats", "wrong", http.StatusUnauthorized},
		{"/stats", "s3cret", http.StatusOK},
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "s3cret", http.StatusOK},
	} {
		h := http.Header{}
		if c.key != "" {
			h.Set("api-key", c.key)
		}
		code, _, err := p.Get(c.path, h)
		if err != nil || code != c.want {
			t.Errorf("GET %s with key %q: %d, %v; want %d", c.path, c.key, code, err, c.want)
		}
	}
}

// A header that is not visible ASCII never authenticates (docs/http-api.md §1.4), even when it equals
// the configured key byte for byte: upstream cannot read such a header as text.
func TestEndpointAPIKeyMustBeVisibleASCII(t *testing.T) {
	const key = "s3cr\u00e9t" // "é" is two bytes outside visible ASCII
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("keyed", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
		"IGGY_CONNECTORS_HTTP_API_KEY="+key)
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	h := http.Header{}
	h.Set("api-key", key)
	for _, c := range []struct {
		path string
		want int
	}{
		{"/health", http.StatusOK},
		{"/stats", http.StatusUnauthorized},
		{"/metrics", http.StatusUnauthorized},
	} {
		code, body, err := p.Get(c.path, h)
		if err != nil || code != c.want {
			t.Errorf("GET %s with the exact non-ASCII key: %d, %v; want %d", c.path, code, err, c.want)
		}
		if c.want == http.StatusUnauthorized && len(body) != 0 {
			t.Errorf("GET %s: 401 with body %q, want an empty body", c.path, body)
		}
	}
}

// The endpoint also listens on TCP (host:port), as upstream's API does.
func TestEndpointOnTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a free port for the runner; nothing else binds loopback ports here
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	p := testkit.StartRunner(t, append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("tcp", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
		"IGGY_CONNECTORS_HTTP_ADDRESS="+addr))
	p.WaitUntil(t, waitLong, "a running status on http://"+addr+"/health", func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(body), `"connector_status":"running"`)
	})
}

// A plugin whose close never returns cannot hold the runner: after SIGTERM it gives up after the
// shutdown timeout and exits 1, naming the reason.
func TestShutdownWithHungCloseIsBounded(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	for _, c := range []struct{ name, toml string }{
		{"source", sourceTOML("hang", testkit.PluginPath(t, "fault"), "demo", "events", "", "close_hang = true\ninterval_ms = 5")},
		{"sink", sinkTOML("hang", testkit.PluginPath(t, "fault"), "demo", "events", "", "close_hang = true")},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The plugin call timeout stays at its 60 s default: close is bounded by the shutdown timeout.
			env := append(withConfig(baseEnv(srv, t.TempDir()), c.toml), "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=300ms")
			p := testkit.StartRunner(t, env)
			p.WaitStatus(t, "running", waitLong)
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			expectExit(t, p, 1, "close")
		})
	}
}

// The same bound holds when the broker is gone as well: the source's in-flight batch is stuck
// reconnecting in send while close hangs, and the runner still gives up on both and exits 1.
func TestShutdownWithHungCloseAndBrokerDownIsBounded(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	env := append(withConfig(baseEnv(srv, t.TempDir()),
		sourceTOML("hang", testkit.PluginPath(t, "fault"), "demo", "events", "", "close_hang = true\ninterval_ms = 5")),
		"IGGY_CONNECTOR_SHUTDOWN_TIMEOUT=300ms")
	p := testkit.StartRunner(t, env)
	p.WaitStatus(t, "running", waitLong)
	srv.Stop()
	// Let the next batch reach send and start reconnecting.
	p.WaitUntil(t, waitLong, "a send to fail against the stopped broker", func() bool {
		return strings.Contains(p.Logs(), "reconnect") || strings.Contains(p.Logs(), "connection")
	})
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	expectExit(t, p, 1, "close")
}
