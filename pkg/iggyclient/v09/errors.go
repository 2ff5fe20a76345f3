package v09

import (
	"errors"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Lost implements engine.Protocol: a node that is not the leader (the reconnect moves to it).
// Evictions unwrap to the status the Go SDK maps them to (wire09.EvictionError), which the engine
// judges: a lost session (40, 30) reconnects, an unknown reason is an error.
func (*protocol) Lost(err error) bool { return isNotLeader(err) }

// classifyLogin maps a refused login: bad credentials, a bad token or a disabled user are
// api.ErrUnauthorized; every other eviction keeps its reason.
func classifyLogin(err error) error {
	var ev *wire09.EvictionError
	if errors.As(err, &ev) {
		switch ev.Reason {
		case wire09.EvictInvalidCredentials, wire09.EvictInvalidToken, wire09.EvictUserInactive:
			return fmt.Errorf("%w (%w)", api.ErrUnauthorized, err)
		}
	}
	return engine.ClassifyLogin(err)
}

// LossDetails implements engine.LossDetailer: an eviction's reason and code.
func (*protocol) LossDetails(err error) []any {
	var ev *wire09.EvictionError
	if errors.As(err, &ev) {
		return []any{"reason", ev.Reason.String(), "code", uint8(ev.Reason)}
	}
	return nil
}
