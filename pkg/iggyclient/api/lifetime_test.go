package api_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

// A call stops with its own context's error first, with ErrClosed once the client ended, and a
// sleep ends as soon as either happens.
func TestLifetime(t *testing.T) {
	life := api.NewLifetime()
	if err := life.Stopped(context.Background()); err != nil {
		t.Fatalf("Stopped on a live client: %v", err)
	}
	if err := life.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("a short sleep: %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := life.Sleep(cancelled, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep with an ended context: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- life.Sleep(context.Background(), time.Hour) }()
	life.End()
	if err := <-done; !errors.Is(err, api.ErrClosed) {
		t.Fatalf("a sleep when the client closes: %v, want ErrClosed", err)
	}
	if err := life.Stopped(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller's error comes first: %v", err)
	}
	if err := life.Stopped(context.Background()); !errors.Is(err, api.ErrClosed) {
		t.Fatalf("Stopped after End: %v, want ErrClosed", err)
	}
	life.End() // twice is fine
}
