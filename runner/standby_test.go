package runner_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/state"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const seqPerBatch = 10

// iggyStateEnv is a fault-source runner on the iggy state backend with its own state directory.
func iggyStateEnv(t testing.TB, srv *devbroker.Server, stateDir string) []string {
	return append(withConfig(baseEnv(srv, stateDir), sourceTOML("seqsrc", testkit.PluginPath(t, "fault"), "demo", "seq", "",
		fmt.Sprintf("messages_per_batch = %d\ninterval_ms = 5", seqPerBatch))), "IGGY_CONNECTORS_STATE_BACKEND=iggy")
}

// startActiveAndStandby starts a runner and waits until it is running, then a second one of the
// same source and waits until it is in standby.
func startActiveAndStandby(t *testing.T, activeEnv, standbyEnv []string) (active, standby *testkit.RunnerProc) {
	t.Helper()
	active = testkit.StartRunner(t, activeEnv)
	active.WaitStatus(t, "running", waitLong)
	standby = testkit.StartRunner(t, standbyEnv)
	standby.WaitStatus(t, "standby", waitLong)
	return active, standby
}

// A source on the file backend, then on the iggy backend (which migrates the file's state), is
// killed with SIGKILL and started again on another node, that is with a different, empty state
// directory: it continues from the state in Iggy, with no gap and at most the batch in flight
// repeated, and never writes a state file.
func TestSourceIggyStateNeedsNoVolume(t *testing.T) {
	testkit.OverProtocols(t, sourceIggyStateNeedsNoVolume)
}

func sourceIggyStateNeedsNoVolume(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"seq": 1}))
	fileDir := t.TempDir()
	fileEnv := withConfig(baseEnvOver(protocol, srv, fileDir), sourceTOML("seqsrc", testkit.PluginPath(t, "fault"), "demo", "seq", "",
		fmt.Sprintf("messages_per_batch = %d\ninterval_ms = 5", seqPerBatch)))

	onFile := testkit.StartRunner(t, fileEnv)
	onFile.WaitStatus(t, "running", waitLong)
	onFile.WaitUntil(t, waitLong, "the file-backend run to send 100 messages", func() bool {
		return testkit.OrZero(onFile.Stats(t).MessagesSent) >= 100
	})
	stopRunner(t, onFile)
	fileState, err := state.Load(fileDir, "seqsrc")
	if err != nil || fileState == nil {
		t.Fatalf("file state after the first run: %x, %v", fileState, err)
	}

	migrated := testkit.StartRunner(t, append(fileEnv, "IGGY_CONNECTORS_STATE_BACKEND=iggy"))
	migrated.WaitStatus(t, "running", waitLong)
	migrated.WaitUntil(t, waitLong, "the migrated run to send 200 messages", func() bool {
		return testkit.OrZero(migrated.Stats(t).MessagesSent) >= 200
	})
	// Its output reaches Logs through a pipe the test copies on its own: the line is waited for.
	migrated.WaitUntil(t, waitLong, "the migration to be logged", func() bool {
		return strings.Contains(migrated.Logs(), "source state migrated from its file to Iggy")
	})
	migrated.Kill9()

	elsewhere := t.TempDir()
	second := testkit.StartRunner(t, append(iggyStateEnv(t, srv, elsewhere), testkit.ProtocolEnv(protocol)))
	second.WaitStatus(t, "running", waitLong)
	second.WaitUntil(t, waitLong, "the run on the fresh node to send 100 messages", func() bool {
		return testkit.OrZero(second.Stats(t).MessagesSent) >= 100
	})
	stopRunner(t, second)

	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the iggy backend wrote %d files into the state directory", len(entries))
	}
	if after, _ := state.Load(fileDir, "seqsrc"); string(after) != string(fileState) {
		t.Errorf("the iggy backend changed the file backend's state file")
	}
	stored, err := srv.Messages("connector_state", state.TopicName("seqsrc"))
	if err != nil || len(stored) == 0 {
		t.Fatalf("state topic: %d messages, %v", len(stored), err)
	}
	checkSequence(t, readTopic(t, srv, "demo", "seq"), seqPerBatch)
}

// Two runners of one source on the iggy backend: one is active (running, /ready 200), the other
// reports standby on /health, /stats and /ready (503). Killed with SIGKILL mid-stream, the active
// one is replaced by the standby, which continues from the state in Iggy: no sequence number
// lost, at most the batch in flight repeated.
func TestStandbySourceTakesOver(t *testing.T) { testkit.OverProtocols(t, standbySourceTakesOver) }

func standbySourceTakesOver(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"seq": 1}))
	first, second := startActiveAndStandby(t, append(iggyStateEnv(t, srv, t.TempDir()), testkit.ProtocolEnv(protocol)), append(iggyStateEnv(t, srv, t.TempDir()), testkit.ProtocolEnv(protocol)))

	for _, c := range []struct {
		p          *testkit.RunnerProc
		role       string
		ready      int
		statStatus string
	}{
		{first, "active", http.StatusOK, "running"},
		{second, "standby", http.StatusServiceUnavailable, "standby"},
	} {
		h, err := c.p.Health()
		if err != nil || h.Role != c.role {
			t.Errorf("/health of the %s runner: %+v, %v", c.role, h, err)
		}
		if code, body, err := c.p.Get("/ready", nil); err != nil || code != c.ready {
			t.Errorf("/ready of the %s runner: %d %s, %v; want %d", c.role, code, body, err, c.ready)
		}
		if st := c.p.Stats(t).Status; st != c.statStatus {
			t.Errorf("/stats status of the %s runner: %q, want %q", c.role, st, c.statStatus)
		}
	}
	if sent := testkit.OrZero(second.Stats(t).MessagesSent); sent != 0 {
		t.Errorf("the standby sent %d messages", sent)
	}

	first.WaitUntil(t, waitLong, "the active runner to send 300 messages", func() bool {
		return testkit.OrZero(first.Stats(t).MessagesSent) >= 300
	})
	first.Kill9()
	killed := time.Now()
	second.WaitStatus(t, "running", waitLong)
	t.Logf("takeover: the standby was running %s after the active runner was killed", time.Since(killed).Round(time.Millisecond))
	if code, _, err := second.Get("/ready", nil); err != nil || code != http.StatusOK {
		t.Errorf("/ready of the new active runner: %d, %v", code, err)
	}
	second.WaitUntil(t, waitLong, "the new active runner to send 200 messages", func() bool {
		return testkit.OrZero(second.Stats(t).MessagesSent) >= 200
	})
	stopRunner(t, second)
	_, dups := checkSequence(t, readTopic(t, srv, "demo", "seq"), seqPerBatch)
	t.Logf("duplicates after the takeover: %d (one batch is %d)", dups, seqPerBatch)
}

// The active runner freezes (SIGSTOP: its connection stays open but silent, as with a host that
// hangs or a network partition). A server with heartbeat verification drops it as stale and the
// standby takes over; when the frozen runner wakes up it finds its lease unconfirmed for too long,
// sends nothing more and exits. No sequence number is lost.
func TestFrozenActiveSourceIsReplaced(t *testing.T) {
	testkit.OverProtocols(t, frozenActiveSourceIsReplaced)
}

func frozenActiveSourceIsReplaced(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"seq": 1}), testkit.WithHeartbeat(time.Second))
	env := append(iggyStateEnv(t, srv, t.TempDir()), "IGGY_CONNECTOR_HEARTBEAT_INTERVAL=300ms", testkit.ProtocolEnv(protocol))
	first, second := startActiveAndStandby(t, env, env)
	first.WaitUntil(t, waitLong, "the active runner to send 200 messages", func() bool {
		return testkit.OrZero(first.Stats(t).MessagesSent) >= 200
	})
	if err := first.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	second.WaitStatus(t, "running", waitLong)
	t.Logf("takeover from a frozen runner: %s (server heartbeat 1 s, stale after 1.2 s)", time.Since(frozen).Round(time.Millisecond))
	time.Sleep(time.Until(frozen.Add(5500 * time.Millisecond))) // past the 5 s a lease stays trusted unconfirmed
	if err := first.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code, err := first.Wait(15 * time.Second)
	if err != nil || code == 0 || !strings.Contains(first.Logs(), "source lease lost") {
		t.Fatalf("the runner woken after losing its lease: exit %d, %v; want a non-zero exit naming the lost lease; logs:\n%s", code, err, first.Logs())
	}
	second.WaitUntil(t, waitLong, "the new active runner to send 200 messages", func() bool {
		return testkit.OrZero(second.Stats(t).MessagesSent) >= 200
	})
	stopRunner(t, second)
	_, dups := checkSequence(t, readTopic(t, srv, "demo", "seq"), seqPerBatch)
	t.Logf("duplicates after the takeover from a frozen runner: %d (one batch is %d)", dups, seqPerBatch)
}
