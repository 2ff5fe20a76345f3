package plugin

import (
	"sync"
	"sync/atomic"
	"time"
)

// A plugin that logs in a tight loop must not flood the runner's output, the supervisor relaying
// it, or a log pipeline: plugin lines are limited per second (a runner hosts one connector, so
// the limit is per connector), the lines over it dropped and counted.

// logLimiter admits at most perSecond plugin lines in each second.
type logLimiter struct {
	perSecond int
	onDrop    func(n uint64) // counts dropped lines (the connector's stats)

	mu      sync.Mutex
	window  int64  // the second (Unix) being counted
	used    int    // lines admitted in window
	dropped uint64 // lines dropped in window, reported when the next one opens
}

var pluginLogLimit atomic.Pointer[logLimiter]

// SetLogLimit limits plugin log lines to perSecond a second; the lines over it are dropped,
// onDrop is told of each (it may be nil), and the first line admitted after drops is preceded by a
// warning saying how many went. perSecond <= 0 removes the limit.
func SetLogLimit(perSecond int, onDrop func(n uint64)) {
	if perSecond <= 0 {
		pluginLogLimit.Store(nil)
		return
	}
	pluginLogLimit.Store(&logLimiter{perSecond: perSecond, onDrop: onDrop})
}

// admit reports whether a line logged at now may go out, and how many lines the previous window
// dropped when this line opens a new one (to be reported once).
func (l *logLimiter) admit(now time.Time) (ok bool, droppedBefore uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sec := now.Unix(); sec != l.window {
		droppedBefore = l.dropped
		l.window, l.used, l.dropped = sec, 0, 0
	}
	if l.used >= l.perSecond {
		l.dropped++
		if l.onDrop != nil {
			l.onDrop(1)
		}
		return false, droppedBefore
	}
	l.used++
	return true, droppedBefore
}
