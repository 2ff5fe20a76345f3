package iggyclient

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/v08"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/v09"
)

// implementation is one protocol's client.
type implementation struct {
	dial      func(context.Context, api.Options) (api.Client, error)
	dialAdmin func(context.Context, api.Options) (api.Admin, error)
}

var implementations = map[string]implementation{
	api.Protocol08: over(v08.NewProtocol),
	api.Protocol09: over(v09.NewProtocol),
}

// over is the implementation of one protocol on the engine.
func over[C engine.Conn](newProtocol func(*engine.Engine[C]) engine.Protocol[C]) implementation {
	return implementation{
		dial: func(ctx context.Context, o api.Options) (api.Client, error) {
			return engine.DialClient(ctx, o, newProtocol)
		},
		dialAdmin: func(ctx context.Context, o api.Options) (api.Admin, error) {
			return engine.DialAdmin(ctx, o, newProtocol)
		},
	}
}

// Dial connects to the server and logs in, speaking o.Protocol; with ProtocolAuto (the default)
// it first asks the server which protocol it speaks (detect.go). While the server is unreachable
// it keeps trying with backoff until ctx ends; bad credentials fail at once with ErrUnauthorized.
func Dial(ctx context.Context, o Options) (Client, error) {
	impl, o, err := choose(ctx, o)
	if err != nil {
		return nil, err
	}
	return impl.dial(ctx, o)
}

// DialAdmin connects like Dial and returns the offset administration over that connection.
func DialAdmin(ctx context.Context, o Options) (Admin, error) {
	impl, o, err := choose(ctx, o)
	if err != nil {
		return nil, err
	}
	return impl.dialAdmin(ctx, o)
}

// choose resolves o.Protocol to an implementation, detecting it when it is auto.
func choose(ctx context.Context, o Options) (implementation, Options, error) {
	if err := o.Normalize(); err != nil {
		return implementation{}, o, err
	}
	if o.Protocol == api.ProtocolAuto {
		p, err := detectWithRetry(ctx, o)
		if err != nil {
			return implementation{}, o, fmt.Errorf("connect to iggy at %s: %w", o.Address, err)
		}
		o.Logger.Info("iggy protocol detected", "address", o.Address, "protocol", p)
		o.Protocol = p
	}
	impl, ok := implementations[o.Protocol]
	if !ok {
		return implementation{}, o, fmt.Errorf("iggy protocol %s is not available", o.Protocol)
	}
	return impl, o, nil
}
