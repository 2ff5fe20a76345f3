package testkit

import (
	"testing"
	"time"
)

// Waits look at their condition every 10 ms at first, then less often (up to every 100 ms), so a
// state reached at once is seen at once and a long wait does not load a busy machine.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = 100 * time.Millisecond
)

// Eventually waits until cond holds and fails the test naming what when timeout passes first. It
// is how a test waits for a state it cannot be told about (a count in /stats, a line in a log, a
// file on disk): never a fixed sleep, which is too short on a loaded machine and wastes time on
// an idle one. Where the code under test offers a hook or a channel, wait on that instead.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if msg := waitCond(timeout, pollMax, cond, nil); msg != "" {
		tb.Fatalf("%s: %s", what, msg)
	}
}

// EventuallyEvery is Eventually for a condition that is expensive or changes only at its own
// pace (a Prometheus scrape): it is looked at every period.
func EventuallyEvery(tb testing.TB, timeout, every time.Duration, what string, cond func() bool) {
	tb.Helper()
	if msg := waitCond(timeout, every, cond, nil); msg != "" {
		tb.Fatalf("%s: %s", what, msg)
	}
}

// Within is Eventually for a caller that reports the failure itself (with the output it holds):
// it reports whether cond came to hold within timeout.
func Within(timeout time.Duration, cond func() bool) bool {
	return waitCond(timeout, pollMax, cond, nil) == ""
}

// WithinEvery is Within looking at cond every period.
func WithinEvery(timeout, every time.Duration, cond func() bool) bool {
	return waitCond(timeout, every, cond, nil) == ""
}

// waitCond polls cond until it holds (""), abort says why the wait is over (its text), or timeout
// passes ("timed out after ..."). The pause between looks grows from pollFirst to every. cond is
// looked at once more at the deadline, so a slow cond on a loaded machine is not cut short by its
// own duration.
func waitCond(timeout, every time.Duration, cond func() bool, abort func() string) string {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	pause := min(pollFirst, every)
	next := time.NewTimer(pause)
	defer next.Stop()
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
		case <-next.C:
			pause = min(pause*3/2, every)
			next.Reset(pause)
		case <-deadline.C:
			if cond() {
				return ""
			}
			return "timed out after " + timeout.String()
		}
	}
}
