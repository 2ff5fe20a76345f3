package plugin_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// The fault plugin's crash must be a real SIGSEGV that takes the whole host
// process down, so the test runs the host in a child process (this test
// binary again, selected by environment variables).
const (
	crashRoleEnv = "PLUGIN_TEST_CRASH_ROLE"
	crashLibEnv  = "PLUGIN_TEST_CRASH_LIB"
)

func TestFaultPluginCrashesWithSIGSEGV(t *testing.T) {
	if role := os.Getenv(crashRoleEnv); role != "" {
		crashHelper(role, os.Getenv(crashLibEnv))
		return
	}
	lib := examplePlugin(t, "fault")
	for _, role := range []string{"sink", "source", "source-after-max"} {
		t.Run(role, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFaultPluginCrashesWithSIGSEGV$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashRoleEnv+"="+role, crashLibEnv+"="+lib)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("helper ended with %v; want a crash\n%s", err, out)
			}
			ws, _ := exit.Sys().(syscall.WaitStatus)
			bySignal := ws.Signaled() && ws.Signal() == syscall.SIGSEGV
			if !bySignal && !strings.Contains(string(out), "SIGSEGV") {
				t.Fatalf("helper exited with %v without a SIGSEGV report:\n%s", err, out)
			}
			if !strings.Contains(string(out), "before the crash") {
				t.Fatalf("helper crashed before reaching the faulty batch:\n%s", out)
			}
		})
	}
}

// crashHelper drives the fault plugin into its crash; it never returns normally.
func crashHelper(role, lib string) {
	fail := func(err error) {
		fmt.Println("helper failed:", err)
		os.Exit(3)
	}
	switch role {
	case "sink":
		sink, err := plugin.LoadSink(lib)
		if err != nil {
			fail(err)
		}
		id := plugin.NextInstanceID()
		if err := sink.Open(id, []byte(`{"crash_on_batch":2}`)); err != nil {
			fail(err)
		}
		b := encodeBatch(postcard.SchemaRaw, nil, []byte("x"))
		if err := sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs); err != nil {
			fail(err)
		}
		fmt.Println("batch 1 consumed before the crash")
		_ = sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs)
	default:
		src, err := plugin.LoadSource(lib)
		if err != nil {
			fail(err)
		}
		config := `{"interval_ms":0,"crash_on_batch":3}`
		if role == "source-after-max" {
			config = `{"interval_ms":0,"messages_per_batch":5,"max_messages":5,"after_max":"crash"}`
		}
		id := plugin.NextInstanceID()
		if err := src.Open(id, []byte(config), nil); err != nil {
			fail(err)
		}
		err = src.Start(id, func(batchID uint64, _ []byte) bool {
			fmt.Printf("batch %d delivered before the crash\n", batchID)
			go func() { _ = src.BatchResult(id, batchID, true) }()
			return true
		})
		if err != nil {
			fail(err)
		}
	}
	// The crash ends this helper process; the sleep only bounds how long it may take.
	time.Sleep(20 * time.Second)
	fail(errors.New("no crash within 20s"))
}
