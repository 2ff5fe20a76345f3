package engine

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

// Retry is the one reconnect loop's bookkeeping, for the engine's calls and for protocol
// detection before any client exists: the capped, jittered backoff between attempts
// (Options.ReconnectMin/Max), the count of attempts, and the last real failure, which the error
// names when the caller gives up.
type Retry struct {
	opts    *api.Options
	life    *api.Lifetime // a client's Close stops the waiting too
	backoff *backoff.Backoff
	attempt int
	lastErr error
}

// NewRetry starts the bookkeeping of one call; life may be nil (no client to close).
func NewRetry(o *api.Options, life *api.Lifetime) Retry {
	if life == nil {
		life = api.NewLifetime()
	}
	return Retry{opts: o, life: life}
}

// Attempt is the number of attempts failed so far.
func (r *Retry) Attempt() int { return r.attempt }

// Wait pauses before the next attempt: not before the first, then from ReconnectMin doubling to
// ReconnectMax. When ctx ends (or the client closes) it returns why, naming the attempts and the
// last failure.
func (r *Retry) Wait(ctx context.Context) error {
	if r.attempt == 0 {
		return r.life.Stopped(ctx)
	}
	if r.backoff == nil {
		r.backoff = r.opts.ReconnectBackoff()
	}
	if err := r.life.Sleep(ctx, r.backoff.Next()); err != nil {
		return fmt.Errorf("%w (after %d attempts, last: %w)", err, r.attempt, r.lastErr)
	}
	return nil
}

// Unreachable records an attempt that could not reach the server, and logs it. A dial cut short
// by the caller's deadline says nothing about the server: the last real failure is kept.
func (r *Retry) Unreachable(ctx context.Context, err error) {
	r.attempt++
	if r.lastErr == nil || r.life.Stopped(ctx) == nil {
		r.lastErr = err
	}
	r.opts.Logger.Warn("iggy server unreachable, retrying", "address", r.opts.Address, "attempt", r.attempt, "error", r.lastErr)
}

// Lost records a connection lost during a call; the caller logs it.
func (r *Retry) Lost(err error) {
	r.attempt++
	r.lastErr = err
}
