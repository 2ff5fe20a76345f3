package plugin

import (
	"testing"
	"time"
)

// The limiter admits perSecond lines in each second, counts the rest, and reports a second's drops
// once, with the first line of the next second.
func TestLogLimiterWindows(t *testing.T) {
	var counted uint64
	l := &logLimiter{perSecond: 3, onDrop: func(n uint64) { counted += n }}
	start := time.Unix(1000, 0)
	steps := []struct {
		at          time.Duration
		wantOK      bool
		wantDropped uint64
	}{
		{0, true, 0}, {100 * time.Millisecond, true, 0}, {200 * time.Millisecond, true, 0},
		{300 * time.Millisecond, false, 0}, {900 * time.Millisecond, false, 0},
		{time.Second, true, 2}, {time.Second + time.Millisecond, true, 0},
		{3 * time.Second, true, 0},
	}
	for i, s := range steps {
		ok, dropped := l.admit(start.Add(s.at))
		if ok != s.wantOK || dropped != s.wantDropped {
			t.Fatalf("step %d (+%s): admit = %v, %d; want %v, %d", i, s.at, ok, dropped, s.wantOK, s.wantDropped)
		}
	}
	if counted != 2 {
		t.Fatalf("onDrop counted %d lines, want 2", counted)
	}
}
