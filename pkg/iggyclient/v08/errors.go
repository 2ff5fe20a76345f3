package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	ierror "github.com/apache/iggy/foreign/go/errors"
)

// errProtocol marks a reply the SDK could not digest (it panicked while
// decoding). The connection is then out of step and must be replaced.
var errProtocol = errors.New("malformed reply from the server")

// isConnectionLoss reports whether err means the session is gone (or no
// longer usable) so that reconnecting and retrying can help.
func isConnectionLoss(err error) bool {
	switch {
	case errors.Is(err, errProtocol),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ETIMEDOUT),
		// The SDK's own names for a dead or unusable session. A lost
		// authentication (40) is cured by logging in again, stale clients
		// likewise.
		errors.Is(err, ierror.ErrDisconnected),
		errors.Is(err, ierror.ErrCannotEstablishConnection),
		errors.Is(err, ierror.ErrNotConnected),
		errors.Is(err, ierror.ErrClientShutdown),
		errors.Is(err, ierror.ErrConnectionClosed),
		errors.Is(err, ierror.ErrEmptyResponse),
		errors.Is(err, ierror.ErrUnauthenticated),
		errors.Is(err, ierror.ErrStaleClient):
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// isGroupMembershipLost reports the errors that a rejoin (and, for a deleted
// group, a re-create) cures.
func isGroupMembershipLost(err error) bool {
	return errors.Is(err, ierror.ErrConsumerGroupMemberNotFound) ||
		errors.Is(err, ierror.ErrConsumerGroupIdNotFound) ||
		errors.Is(err, ierror.ErrConsumerGroupNameNotFound)
}

// classify turns a server error into this package's sentinels, keeping the
// server's error in the chain.
func classify(err error) error {
	switch {
	case errors.Is(err, ierror.ErrStreamIdNotFound), errors.Is(err, ierror.ErrStreamNameNotFound):
		return fmt.Errorf("stream %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, ierror.ErrTopicIdNotFound), errors.Is(err, ierror.ErrTopicNameNotFound):
		return fmt.Errorf("topic (or its stream) %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, ierror.ErrPartitionNotFound):
		return fmt.Errorf("partition %w (%w)", api.ErrNotFound, err)
	case isGroupMembershipLost(err):
		return fmt.Errorf("consumer group %w (%w)", api.ErrNotFound, err)
	case errors.Is(err, ierror.ErrUnauthorized):
		return fmt.Errorf("%w: permission denied (%w)", api.ErrUnauthorized, err)
	}
	return err
}

// classifyLogin maps a login refusal to api.ErrUnauthorized. The server answers
// an unknown personal access token with ResourceNotFound (20).
func classifyLogin(err error) error {
	switch {
	case errors.Is(err, ierror.ErrInvalidCredentials),
		errors.Is(err, ierror.ErrInvalidUsername),
		errors.Is(err, ierror.ErrInvalidPassword),
		errors.Is(err, ierror.ErrUserInactive),
		errors.Is(err, ierror.ErrResourceNotFound),
		errors.Is(err, ierror.ErrInvalidPersonalAccessToken),
		errors.Is(err, ierror.ErrPersonalAccessTokenExpired),
		errors.Is(err, ierror.ErrInvalidAccessToken),
		errors.Is(err, ierror.ErrUnauthorized):
		return fmt.Errorf("%w (%w)", api.ErrUnauthorized, err)
	}
	return err
}
