package runner

import (
	"math"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// The waits a schedule gives after consecutive empty polls, a batch, and empty polls again.
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
			s := newPollSchedule(tt.interval, tt.idleMax)
			if s.wait != tt.interval {
				t.Fatalf("first wait %v, want poll_interval %v", s.wait, tt.interval)
			}
			waits := func() []time.Duration {
				var got []time.Duration
				for range tt.want {
					s.polled(false)
					got = append(got, s.wait)
				}
				return got
			}
			if got := waits(); !slices.Equal(got, tt.want) {
				t.Fatalf("waits after empty polls %v, want %v", got, tt.want)
			}
			s.polled(true)
			if s.wait != tt.interval {
				t.Fatalf("wait after a batch %v, want poll_interval %v", s.wait, tt.interval)
			}
			if got := waits(); !slices.Equal(got, tt.want) {
				t.Fatalf("after a batch, waits %v, want the same climb %v", got, tt.want)
			}
		})
	}
	t.Run("near the limit of time.Duration", func(t *testing.T) {
		s := newPollSchedule(time.Duration(math.MaxInt64/2+1), math.MaxInt64)
		s.polled(false)
		s.polled(false)
		if s.wait != math.MaxInt64 {
			t.Fatalf("wait %v, want the limit %v", s.wait, time.Duration(math.MaxInt64))
		}
	})
}
