package runner

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Rate limits ([rate_limit], docs/runtime-changes.md): a sink waits before it hands a batch to its
// plugin, a source before it sends a batch to Iggy, until the connector's token buckets
// (golang.org/x/time/rate, one for messages and one for payload bytes) hold the batch. PUT
// /rate_limit replaces the limits while the connector runs; a batch waiting at that moment is
// measured again against the new ones.
//
// Buckets hold one second's worth (at least 1) and start empty, so from the start, and from every
// change, the connector moves at most the limit in any window. A batch larger than a bucket is
// taken in bucket-sized parts, reserved together: it waits as long as its size needs at the rate
// and then goes whole, so nothing deadlocks. A sink also polls at most one second's worth of
// messages (min(batch_length, messages_per_second)), so its batches wait about a second at most.

// throttle is one set of limits in force; nil limiters limit nothing.
type throttle struct {
	limit         *config.RateLimit
	msgs, bytes   *rate.Limiter
	msgBurst      int
	byteBurst     int
	pollAtMost    uint32 // a sink's poll count cap (0: none)
	messagesLimit bool
}

// clock is time for the rate limiter; tests drive a fake one.
type clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (its error) or wake is closed (nil, early).
	Sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rateLimiter is the connector's limits: the configured ones and those in force.
type rateLimiter struct {
	clock   clock
	metrics *metrics.Connector
	log     *slog.Logger

	mu         sync.Mutex
	configured *config.RateLimit
	changed    chan struct{} // closed (and replaced) at every change: waiting batches measure again
	cur        atomic.Pointer[throttle]
}

func newRateLimiter(configured *config.RateLimit, m *metrics.Connector, log *slog.Logger, c clock) *rateLimiter {
	l := &rateLimiter{clock: c, metrics: m, log: log, configured: configured, changed: make(chan struct{})}
	l.install(configured)
	return l
}

// install puts limit in force (nil or empty: no limit), with buckets that start empty.
func (l *rateLimiter) install(limit *config.RateLimit) {
	if limit == nil || (limit.MessagesPerSecond == nil && limit.BytesPerSecond == nil) {
		l.cur.Store(nil)
		return
	}
	now := l.clock.Now()
	t := &throttle{limit: limit}
	bucket := func(perSecond float64) (*rate.Limiter, int) {
		burst := int(min(math.Ceil(perSecond), math.MaxInt32))
		lim := rate.NewLimiter(rate.Limit(perSecond), burst)
		lim.ReserveN(now, burst) // start empty
		return lim, burst
	}
	if m := limit.MessagesPerSecond; m != nil {
		t.msgs, t.msgBurst = bucket(*m)
		t.pollAtMost = uint32(min(math.Max(math.Floor(*m), 1), math.MaxUint32))
		t.messagesLimit = true
	}
	if b := limit.BytesPerSecond; b != nil {
		t.bytes, t.byteBurst = bucket(*b)
	}
	l.cur.Store(t)
	if l.metrics != nil {
		l.metrics.ShowThrottled()
	}
}

// set puts limit in force (reset: the configured one again) and wakes every waiting batch.
func (l *rateLimiter) set(limit *config.RateLimit, reset bool) *config.RateLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	if reset {
		limit = l.configured
	}
	l.install(limit)
	close(l.changed)
	l.changed = make(chan struct{})
	return limit
}

func (l *rateLimiter) wake() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// current is the limit in force (nil: none).
func (l *rateLimiter) current() *config.RateLimit {
	if t := l.cur.Load(); t != nil {
		return t.limit
	}
	return nil
}

// pollCount caps a sink's poll at one second's worth of messages.
func (l *rateLimiter) pollCount(batchLength uint32) uint32 {
	if t := l.cur.Load(); t != nil && t.pollAtMost > 0 && t.pollAtMost < batchLength {
		return t.pollAtMost
	}
	return batchLength
}

// wait returns once a batch of n messages and size payload bytes may go, or with ctx's error when
// ctx ends first (nothing is taken from the buckets then). The time waited is counted.
func (l *rateLimiter) wait(ctx context.Context, n, size int) error {
	for {
		t := l.cur.Load()
		if t == nil || (n == 0 && size == 0) {
			return nil
		}
		wake := l.wake()
		if l.cur.Load() != t {
			continue // changed in between: measure against the new limits
		}
		now := l.clock.Now()
		var taken []*rate.Reservation
		delay := time.Duration(0)
		take := func(lim *rate.Limiter, burst, amount int) {
			for amount > 0 {
				k := min(amount, burst)
				r := lim.ReserveN(now, k)
				taken = append(taken, r)
				delay = max(delay, r.DelayFrom(now))
				amount -= k
			}
		}
		if t.msgs != nil {
			take(t.msgs, t.msgBurst, n)
		}
		if t.bytes != nil {
			take(t.bytes, t.byteBurst, size)
		}
		if delay == 0 {
			return nil
		}
		err := l.clock.Sleep(ctx, delay, wake)
		waited := l.clock.Now().Sub(now)
		if l.metrics != nil {
			l.metrics.AddThrottled(min(waited, delay))
		}
		if err != nil || l.cur.Load() != t {
			for _, r := range taken {
				r.CancelAt(l.clock.Now())
			}
			if err != nil {
				return err
			}
			continue // the limits changed while it waited
		}
		if waited >= delay {
			return nil
		}
		// Woken early by a change that left the same limits (a reset to them): wait the rest.
		for _, r := range taken {
			r.CancelAt(l.clock.Now())
		}
	}
}

// rateLimitState is GET /rate_limit: the limits in force, the configured ones, and the time spent
// waiting so far.
type rateLimitState struct {
	Limit            json.RawMessage `json:"limit"`
	Configured       json.RawMessage `json:"configured"`
	ThrottledSeconds float64         `json:"throttled_seconds"`
}

func (l *rateLimiter) state() rateLimitState {
	l.mu.Lock()
	configured := l.configured
	l.mu.Unlock()
	s := rateLimitState{Limit: config.RateLimitJSON(l.current()), Configured: config.RateLimitJSON(configured)}
	if l.metrics != nil {
		s.ThrottledSeconds = l.metrics.Throttled().Seconds()
	}
	return s
}

// handleRateLimit answers GET and PUT /rate_limit.
func (r *Runner) handleRateLimit(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPut {
		body, ok, _ := httplimit.ReadBody(w, req) // another read error leaves the parser a part
		if !ok {
			return
		}
		limit, reset, err := config.ParseRateLimitJSON(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_rate_limit", err.Error())
			return
		}
		from := config.RateLimitJSON(r.rate.current())
		to := r.rate.set(limit, reset)
		r.log.Info("rate limit changed", "from", string(from), "to", string(config.RateLimitJSON(to)))
	}
	writeJSON(w, r.rate.state())
}

// runtimeChangeRoutes registers the run-time change routes of the endpoint: GET and PUT
// /log_level (loglevel.go) and /rate_limit.
func (r *Runner) runtimeChangeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /log_level", r.handleLogLevel)
	mux.HandleFunc("PUT /log_level", r.handleLogLevel)
	mux.HandleFunc("GET /rate_limit", r.handleRateLimit)
	mux.HandleFunc("PUT /rate_limit", r.handleRateLimit)
}

// awaitRateLimit waits until the connector's rate limit lets recs reach the plugin. It reports
// false when the runner stops meanwhile and the batch should be left for the next run: with
// offset_commit = "after_consuming" its offset is not stored, so the next poll returns it again.
// With "after_polling" Iggy stored the offset at the poll already, so the batch goes at once.
func (c *sinkConsumer) awaitRateLimit(ctx context.Context, recs []postcard.RawMessage) bool {
	if c.r.rate.cur.Load() == nil {
		return true // no limit: the batch's bytes are not even counted
	}
	size := 0
	for i := range recs {
		size += len(recs[i].Payload)
	}
	if c.r.rate.wait(ctx, len(recs), size) == nil {
		return true
	}
	return c.t.Commit == commitAfterPolling
}

// awaitRateLimit waits until the connector's rate limit lets the prepared batch be sent (counted
// once, as produced, however many stream entries it goes to). It reports false when the session
// ends or a pause is asked for meanwhile: the batch is then NACKed, nothing of it sent and its
// state not saved, so the plugin produces it again. A plugin of the older ABI cannot be answered
// with a NACK, so its batch is sent at once then.
func (p *sourcePump) awaitRateLimit(ctx context.Context) bool {
	if p.r.rate.cur.Load() == nil || len(p.batch.outs) == 0 {
		return true
	}
	outs := p.batch.outs[0]
	size := 0
	for i := range outs {
		size += len(outs[i].Payload)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.sessionDone:
		case <-p.r.pause.requested():
		case <-p.abort:
		case <-waitCtx.Done():
		}
		cancel()
	}()
	return p.r.rate.wait(waitCtx, len(outs), size) == nil || !p.lib.SupportsAck()
}
