package api

import (
	"context"
	"time"
)

// Lifetime is a client's life as a context: End (from Close) cancels it, which stops the client's
// dials, backoffs and background work. Implementations share it so that every call stops the
// same way: with the caller's context error, or ErrClosed.
type Lifetime struct {
	context.Context
	cancel context.CancelFunc
}

// NewLifetime starts a lifetime.
func NewLifetime() *Lifetime {
	ctx, cancel := context.WithCancel(context.Background())
	return &Lifetime{Context: ctx, cancel: cancel}
}

// End ends the lifetime; calling it again does nothing.
func (l *Lifetime) End() { l.cancel() }

// Stopped is the reason a call must stop: ctx's error, or ErrClosed once the lifetime ended.
func (l *Lifetime) Stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.Err() != nil {
		return ErrClosed
	}
	return nil
}

// Sleep waits d, or returns early with ctx's error or ErrClosed.
func (l *Lifetime) Sleep(ctx context.Context, d time.Duration) error {
	if err := l.Stopped(ctx); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.Done():
		return ErrClosed
	}
}
