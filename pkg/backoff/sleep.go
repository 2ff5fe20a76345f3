package backoff

import (
	"context"
	"time"
)

// Sleep waits d. It returns nil when d has passed, or the context's cause (context.Cause) as soon
// as ctx ends; a d of zero or less returns at once, with the cause if ctx has already ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
