package runner

import (
	"context"
	"time"
)

// minIdleStep is the wait the idle back-off grows from when poll_interval is 0 (upstream then
// polls back to back, and so does a sink with batches flowing).
const minIdleStep = time.Millisecond

// pollSchedule paces one sink consumer's polls. While batches come the polls are poll_interval
// apart, as upstream's. Once the stream has gone idle_after without a message, the wait doubles
// over consecutive empty polls from poll_interval up to idle_poll_max (the first empty poll of
// the idle spell still waits poll_interval), and the first batch sets it back: an idle runner
// then polls a few times a second instead of 200 (each empty poll costs a round trip, two or
// three wake-ups of this process and the broker's work; docs/benchmarks.md §2), a message that
// arrives during an idle spell waits at most idle_poll_max for its poll, and a stream with a
// message at least every idle_after keeps poll_interval between its polls (a steady 20 msg/s
// is not idle between its messages). An idle_poll_max at or below poll_interval keeps upstream's
// fixed interval; idle_after 0 backs off from the first empty poll on. No jitter: the bound stays
// exact, and runners drift apart on their own since every wait counts from its poll's start.
type pollSchedule struct {
	interval  time.Duration // poll_interval
	limit     time.Duration // max(idle_poll_max, poll_interval)
	idleAfter time.Duration // idle_after
	wait      time.Duration // from the start of the last poll to the next one
	empty     int           // consecutive empty polls of the idle spell
	lastBatch time.Time     // when the last poll with messages started (zero: none yet)
	timer     *time.Timer   // every wait's, made at the first
}

func newPollSchedule(interval, idleMax, idleAfter time.Duration) *pollSchedule {
	// No batch yet: a sink starts idle, so one that finds nothing backs off at once.
	return &pollSchedule{interval: interval, limit: max(idleMax, interval), idleAfter: idleAfter, wait: interval}
}

// reset starts the schedule afresh, as after a batch.
func (s *pollSchedule) reset() { s.polled(true, time.Now()) }

// polled records the outcome of a poll that started at: messages reset the wait to
// poll_interval; an empty poll keeps it until the stream has been idle for idle_after, and then
// doubles it after each further empty poll, up to the limit.
func (s *pollSchedule) polled(gotMessages bool, at time.Time) {
	if gotMessages {
		s.wait, s.empty, s.lastBatch = s.interval, 0, at
		return
	}
	if at.Sub(s.lastBatch) < s.idleAfter {
		return // not idle yet: the wait stays poll_interval
	}
	if s.empty > 0 {
		if s.wait > s.limit/2 { // doubling would pass the limit, or overflow near years
			s.wait = s.limit
		} else {
			s.wait = min(s.limit, max(2*s.wait, minIdleStep))
		}
	}
	s.empty++
}

// remaining is how long the next poll is still to wait, given when the last one started.
func (s *pollSchedule) remaining(lastPoll time.Time) time.Duration {
	return s.wait - time.Since(lastPoll)
}

// sleep waits d unless ctx ends or a pause is requested first, since a long idle wait must hold
// neither up; it reports whether the whole wait passed. One timer serves every wait: a poll
// then costs no timer allocation.
func (s *pollSchedule) sleep(ctx context.Context, pauseRequested <-chan struct{}, d time.Duration) bool {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
		return true
	case <-ctx.Done():
	case <-pauseRequested:
	}
	s.timer.Stop()
	return false
}
