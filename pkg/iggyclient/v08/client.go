package v08

import (
	"context"
	"log/slog"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
)

// Dial connects to the server and logs in. While the server is unreachable it keeps trying with
// backoff until ctx ends; bad credentials fail at once with api.ErrUnauthorized.
func Dial(ctx context.Context, o api.Options) (api.Client, error) {
	e, err := dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DialAdmin connects like Dial and returns the offset administration over that connection.
func DialAdmin(ctx context.Context, o api.Options) (api.Admin, error) {
	e, err := dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func dial(ctx context.Context, o api.Options) (*engine.Engine[*conn], error) {
	p := &protocol{username: o.Username, password: o.Password, token: o.Token}
	e, err := engine.New[*conn](o, p)
	if err != nil {
		return nil, err
	}
	p.log = e.Log()
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// protocol is Iggy 0.8 for the engine: every method is one request, or two written together.
type protocol struct {
	username, password, token string
	log                       *slog.Logger
}

// Name implements engine.Protocol.
func (*protocol) Name() string { return api.Protocol08 }

// Lost implements engine.Protocol: 0.8 has no losses beyond the engine's.
func (*protocol) Lost(error) bool { return false }

// LossBudget implements engine.Protocol: every loss is retried until the call's context ends.
func (*protocol) LossBudget(error) time.Duration { return 0 }
