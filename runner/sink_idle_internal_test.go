package runner

import (
	"math"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// The waits a schedule gives after consecutive empty polls, a batch, and empty polls again, with
// idle_after 0 (the back-off starts with the first empty poll).
func TestPollScheduleWaits(t *testing.T) {
	tests := []struct {
		name              string
		interval, idleMax time.Duration
		want              []time.Duration // the wait after each of len(want) empty polls
	}{
		{"default: doubles from 5ms to 250ms", 5 * ms, 250 * ms, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 250 * ms, 250 * ms}},
		{"0 keeps the fixed interval", 5 * ms, 0, []time.Duration{5 * ms, 5 * ms, 5 * ms}},
		{"equal to poll_interval keeps it", 5 * ms, 5 * ms, []time.Duration{5 * ms, 5 * ms, 5 * ms}},
		{"below poll_interval keeps it", 100 * ms, 20 * ms, []time.Duration{100 * ms, 100 * ms, 100 * ms}},
		{"poll_interval 0 grows from 1ms", 0, 5 * ms, []time.Duration{0, ms, 2 * ms, 4 * ms, 5 * ms, 5 * ms}},
		{"poll_interval 0, idle_poll_max 0: back to back", 0, 0, []time.Duration{0, 0, 0}},
		{"a limit near the largest duration does not overflow", time.Hour, math.MaxInt64, []time.Duration{time.Hour, 2 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newPollSchedule(tt.interval, tt.idleMax, 0)
			if s.wait != tt.interval {
				t.Fatalf("first wait %v, want poll_interval %v", s.wait, tt.interval)
			}
			waits := func() []time.Duration {
				var got []time.Duration
				for range tt.want {
					s.polled(false, time.Now())
					got = append(got, s.wait)
				}
				return got
			}
			if got := waits(); !slices.Equal(got, tt.want) {
				t.Fatalf("waits after empty polls %v, want %v", got, tt.want)
			}
			s.polled(true, time.Now())
			if s.wait != tt.interval {
				t.Fatalf("wait after a batch %v, want poll_interval %v", s.wait, tt.interval)
			}
			if got := waits(); !slices.Equal(got, tt.want) {
				t.Fatalf("after a batch, waits %v, want the same climb %v", got, tt.want)
			}
		})
	}
	t.Run("near the limit of time.Duration", func(t *testing.T) {
		s := newPollSchedule(time.Duration(math.MaxInt64/2+1), math.MaxInt64, 0)
		s.polled(false, time.Now())
		s.polled(false, time.Now())
		if s.wait != math.MaxInt64 {
			t.Fatalf("wait %v, want the limit %v", s.wait, time.Duration(math.MaxInt64))
		}
	})
}

// With idle_after the wait stays poll_interval while the last batch is more recent than
// idle_after, then climbs as without it; a batch starts the spell over. Times are given, so the
// test reads no clock.
func TestPollScheduleIdleAfter(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newPollSchedule(5*ms, 250*ms, time.Second)
	s.polled(true, start)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	var waits []time.Duration
	for _, d := range []time.Duration{50 * ms, 100 * ms, 999 * ms, time.Second, 1005 * ms, 1015 * ms, 1035 * ms} {
		s.polled(false, at(d))
		waits = append(waits, s.wait)
	}
	if want := []time.Duration{5 * ms, 5 * ms, 5 * ms, 5 * ms, 10 * ms, 20 * ms, 40 * ms}; !slices.Equal(waits, want) {
		t.Fatalf("waits %v, want poll_interval for the first second, then the climb %v", waits, want)
	}
	s.polled(true, at(2*time.Second))
	s.polled(false, at(2*time.Second+500*ms))
	if s.wait != 5*ms {
		t.Fatalf("half a second after a batch the wait is %v, want poll_interval", s.wait)
	}
}
