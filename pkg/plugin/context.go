package plugin

import (
	"context"
	"fmt"
)

// callContext runs call, a blocking call into a plugin, and waits for it until
// ctx ends. C code cannot be interrupted: on ctx's end the call keeps running
// on its own goroutine (holding its buffers alive) and the instance id it was
// made for must not be used again.
func callContext(ctx context.Context, op string, call func() int32) (int32, error) {
	if ctx.Done() == nil {
		return call(), nil
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s not called: %w", op, err)
	}
	done := make(chan int32, 1)
	go func() { done <- call() }()
	select {
	case code := <-done:
		return code, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("%s abandoned, still running in the plugin: %w", op, ctx.Err())
	}
}
