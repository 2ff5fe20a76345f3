package v09

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// errProtocol marks a reply that breaks the protocol (wrong echo, bad framing, a body that does
// not decode). The connection is then out of step and is replaced.
var errProtocol = errors.New("malformed reply from the server")

// Codes the client branches on that pkg/wire09 does not name.
const (
	statusConsumerOffsetNotFound iggywire.Status = 3021
	statusInvalidOffset          iggywire.Status = 4100
	statusTopicNameNotFound      iggywire.Status = 2011
	statusGroupNameNotFound      iggywire.Status = 5003
)

// isConnectionLoss reports whether err means the session is gone, so that reconnecting, logging
// in again and retrying can help: network failures, broken framing, a lost session (status 40,
// stale client 30, and the evictions the SDK maps to them), and a node that is not the leader.
func isConnectionLoss(err error) bool {
	if errors.Is(err, api.ErrUnauthorized) {
		return false // refused credentials: no reconnect cures them
	}
	switch {
	case errors.Is(err, errProtocol),
		errors.Is(err, errNotLeader),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, iggywire.StatusUnauthenticated),
		errors.Is(err, iggywire.StatusStaleClient),
		errors.Is(err, iggywire.StatusDisconnected):
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// isMembershipLost reports the answers a (re)join cures: this connection is not a member of the
// group, or the group is gone.
func isMembershipLost(err error) bool {
	return errors.Is(err, iggywire.StatusConsumerGroupMemberNotFound) ||
		errors.Is(err, iggywire.StatusConsumerGroupIDNotFound) ||
		errors.Is(err, statusGroupNameNotFound)
}

// classify turns a server answer into api's sentinels, keeping the server's code in the chain.
func classify(err error) error {
	switch {
	case errors.Is(err, iggywire.StatusStreamIDNotFound), errors.Is(err, iggywire.StatusStreamNameNotFound):
		return fmt.Errorf("stream %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, iggywire.StatusTopicIDNotFound), errors.Is(err, statusTopicNameNotFound):
		return fmt.Errorf("topic (or its stream) %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, iggywire.StatusPartitionNotFound):
		return fmt.Errorf("partition %w (%w)", api.ErrNotFound, err)
	case isMembershipLost(err):
		return fmt.Errorf("consumer group %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, iggywire.StatusUnauthorized):
		return fmt.Errorf("%w: permission denied (%w)", api.ErrUnauthorized, err)
	case errors.Is(err, iggywire.StatusInvalidIdentifier):
		return fmt.Errorf("%w (%w)", api.ErrInvalidIdentifier, err)
	case errors.Is(err, iggywire.StatusInvalidMessageChecksum), errors.Is(err, iggywire.StatusInvalidBatchChecksum),
		errors.Is(err, iggywire.StatusInvalidMessagesCount), errors.Is(err, iggywire.StatusInvalidMessageTimestampDelta):
		return fmt.Errorf("%w: the server refused the batch (%w)", api.ErrInvalidMessage, err)
	}
	return err
}

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
	if errors.Is(err, iggywire.StatusInvalidCredentials) || errors.Is(err, iggywire.StatusInvalidPersonalAccessToken) ||
		errors.Is(err, iggywire.StatusUnauthorized) {
		return fmt.Errorf("%w (%w)", api.ErrUnauthorized, err)
	}
	return err
}

// isStatus reports whether err carries the server code s.
func isStatus(err error, s iggywire.Status) bool { return err != nil && errors.Is(err, s) }
