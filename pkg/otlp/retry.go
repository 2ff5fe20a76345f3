package otlp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
)

// Retry is how one export is retried after a retryable failure (HTTP 429,
// 502, 503, 504, a temporary network error; gRPC UNAVAILABLE and the other
// codes the OTLP specification calls retryable): exponential backoff from
// InitialInterval, growing 1.5 times per attempt up to MaxInterval, each wait
// randomised by ±50%, and never past MaxElapsedTime or the export's deadline.
// A collector's throttling hint (Retry-After, gRPC RetryInfo) lengthens a
// wait. The zero value does not retry; zero intervals of an enabled Retry
// are the OpenTelemetry exporters' defaults (5 s, 30 s).
type Retry struct {
	Enabled         bool
	InitialInterval time.Duration
	MaxInterval     time.Duration
	MaxElapsedTime  time.Duration
}

// The OpenTelemetry exporters' growth and spread (theirs is cenkalti/backoff too): ±50% keeps
// exporters of many processes from retrying in step.
const (
	backoffMultiplier    = 1.5
	backoffRandomization = 0.5
)

// retryableError marks a failed attempt worth repeating, with the wait the
// collector asked for (0 when it did not).
type retryableError struct {
	err      error
	throttle time.Duration
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

func retryable(err error, throttle time.Duration) error {
	return &retryableError{err: err, throttle: throttle}
}

// do runs attempt until it succeeds, fails for good, or retrying would pass
// the bounds. The error returned is the last attempt's, unwrapped from its
// retryable marker; when the deadline cut that attempt short, the failure of
// the attempt before it is joined, since that says why the export failed
// (connection refused, 503) better than the deadline does.
func (r Retry) do(ctx context.Context, attempt func(context.Context) error) error {
	start := time.Now()
	interval, maxInterval := r.InitialInterval, r.MaxInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	if maxInterval <= 0 {
		maxInterval = 30 * time.Second
	}
	intervals := backoff.New(backoff.Policy{Min: interval, Max: maxInterval, Multiplier: backoffMultiplier, Jitter: backoffRandomization})
	var earlier error
	for {
		err := attempt(ctx)
		var re *retryableError
		if err == nil || !errors.As(err, &re) {
			return withEarlier(ctx, err, earlier)
		}
		if !r.Enabled {
			return re.err
		}
		if ctx.Err() != nil {
			return withEarlier(ctx, fmt.Errorf("%w: %w", context.Cause(ctx), re.err), earlier)
		}
		wait := max(intervals.Next(), re.throttle)
		if r.MaxElapsedTime > 0 && time.Since(start)+wait > r.MaxElapsedTime {
			return fmt.Errorf("retries would outlast %v: %w", r.MaxElapsedTime, re.err)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			// Waiting could only end in the deadline; give the batch up now.
			return fmt.Errorf("retry in %v would pass the export deadline: %w", wait.Round(time.Millisecond), re.err)
		}
		earlier = re.err
		if err := backoff.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w: %w", err, re.err)
		}
	}
}

// withEarlier joins the failure of the previous attempt to err when the
// export's context ended during the last one.
func withEarlier(ctx context.Context, err, earlier error) error {
	if err == nil || earlier == nil || ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("%w (the attempt before: %w)", err, earlier)
}
