package testkit

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually and the process waits look at their condition again.
const pollEvery = 10 * time.Millisecond

// Eventually waits until cond holds, looking every 10 ms, and fails the test naming what when
// timeout passes first. It is how a test waits for a state it cannot be told about (a count in
// /stats, a line in a log, a file on disk): never a fixed sleep, which is too short on a loaded
// machine and wastes time on an idle one. Where the code under test offers a hook or a channel,
// wait on that instead.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if msg := waitCond(timeout, cond, nil); msg != "" {
		tb.Fatalf("%s: %s", what, msg)
	}
}

// Within is Eventually for a caller that reports the failure itself (with the output it holds):
// it reports whether cond came to hold within timeout.
func Within(timeout time.Duration, cond func() bool) bool {
	return waitCond(timeout, cond, nil) == ""
}

// waitCond polls cond until it holds (""), abort says why the wait is over (its text), or timeout
// passes ("timed out after ..."). cond is called once more after the deadline, so a slow cond on a
// loaded machine is not cut short by its own duration.
func waitCond(timeout time.Duration, cond func() bool, abort func() string) string {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if cond() {
			return ""
		}
		if abort != nil {
			if why := abort(); why != "" {
				return why
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			if cond() {
				return ""
			}
			return "timed out after " + timeout.String()
		}
	}
}
