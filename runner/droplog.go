package runner

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// dropLogInterval is the least time between two warnings about dropped sink messages of one
// connector: a flood of bad messages must not flood the log.
const dropLogInterval = time.Second

// dropLogger warns about sink messages that were dropped (they failed to decode, transform or
// encode), at most once per interval. Messages dropped in between are counted (and logged at
// debug only); the next warning carries that count as "suppressed". Safe for concurrent use by the topic consumers.
type dropLogger struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	last       time.Time // when the last warning went out; zero before the first
	suppressed int       // drops since then that got no warning of their own
}

func newDropLogger(log *slog.Logger, every time.Duration) *dropLogger {
	return &dropLogger{log: log, every: every, now: time.Now}
}

// droppedMessage identifies one dropped message and why.
type droppedMessage struct {
	Stage         string // "decode", "transform" or "encode"
	Stream, Topic string
	PartitionID   uint32
	Offset        uint64
	Err           error
}

// dropped reports one dropped message; it returns whether the warning was written. A message
// whose warning is suppressed still gets a debug line, for whoever asked for debug logs.
func (d *dropLogger) dropped(m droppedMessage) bool {
	d.mu.Lock()
	now := d.now()
	if !d.last.IsZero() && now.Sub(d.last) < d.every {
		d.suppressed++
		d.mu.Unlock()
		if d.log.Enabled(context.Background(), slog.LevelDebug) {
			d.log.LogAttrs(context.Background(), slog.LevelDebug, "sink message dropped (warning rate-limited)", m.attrs()...)
		}
		return false
	}
	suppressed := d.suppressed
	d.last, d.suppressed = now, 0
	d.mu.Unlock()

	d.log.LogAttrs(context.Background(), slog.LevelWarn, "sink message dropped",
		append(m.attrs(), slog.Int("suppressed", suppressed))...)
	return true
}

func (m droppedMessage) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("stage", m.Stage),
		slog.String("stream", m.Stream),
		slog.String("topic", m.Topic),
		slog.Uint64("partition_id", uint64(m.PartitionID)),
		slog.Uint64("offset", m.Offset),
		slog.Any("error", m.Err),
	}
}
