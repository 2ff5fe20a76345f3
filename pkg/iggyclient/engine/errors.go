package engine

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// ErrMalformed marks a reply that breaks the protocol (bad framing, a body that does not
// decode, a wrong echo). The connection is then out of step and is replaced.
var ErrMalformed = errors.New("malformed reply from the server")

// isStatus reports whether err carries the server code s. Replies carry a bare iggywire.Status,
// so the common case needs no errors.As.
func isStatus(err error, s iggywire.Status) bool {
	if err == nil {
		return false
	}
	if st, ok := err.(iggywire.Status); ok {
		return st == s
	}
	return errors.Is(err, s)
}

// IsStatus reports whether err carries one of the server codes ss.
func IsStatus(err error, ss ...iggywire.Status) bool {
	for _, s := range ss {
		if isStatus(err, s) {
			return true
		}
	}
	return false
}

// lost reports whether err means the session is gone, so that reconnecting, logging in again and
// retrying can help: the stream failed, timed out or fell out of step, or the server says the
// session is gone (unauthenticated 40, stale client 30, disconnected 8). Refused credentials are
// never a loss. A protocol adds its own (Protocol.Lost).
func lost(err error) bool {
	if err == nil || errors.Is(err, api.ErrUnauthorized) {
		return false
	}
	switch {
	case errors.Is(err, ErrMalformed),
		errors.Is(err, api.ErrTimeout),
		errors.Is(err, api.ErrReplyTooLarge),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ETIMEDOUT),
		IsStatus(err, iggywire.StatusUnauthenticated, iggywire.StatusStaleClient, iggywire.StatusDisconnected):
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// MembershipLost reports the answers a (re)join cures: this connection is not a member of the
// group, or the group is gone.
func MembershipLost(err error) bool {
	return IsStatus(err, iggywire.StatusConsumerGroupMemberNotFound, iggywire.StatusConsumerGroupIDNotFound,
		iggywire.StatusConsumerGroupNameNotFound)
}

// notOwned reports a group offset write refused because another member owns the partition:
// 3022 over 0.8, 20 or 5009 over 0.9.
func notOwned(err error) bool {
	return IsStatus(err, iggywire.StatusNotResolvedConsumer, iggywire.StatusResourceNotFound, iggywire.StatusConsumerGroupPartitionNotOwned)
}

// classify turns a server answer into api's sentinels, keeping the server's code in the chain.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case IsStatus(err, iggywire.StatusStreamIDNotFound, iggywire.StatusStreamNameNotFound):
		return fmt.Errorf("stream %w (%w)", api.ErrNotFound, err)
	case IsStatus(err, iggywire.StatusTopicIDNotFound, iggywire.StatusTopicNameNotFound):
		return fmt.Errorf("topic (or its stream) %w (%w)", api.ErrNotFound, err)
	case isStatus(err, iggywire.StatusPartitionNotFound):
		return fmt.Errorf("partition %w (%w)", api.ErrNotFound, err)
	case MembershipLost(err):
		return fmt.Errorf("consumer group %w (%w)", api.ErrNotFound, err)
	case isStatus(err, iggywire.StatusUnauthorized):
		return fmt.Errorf("%w: permission denied (%w)", api.ErrUnauthorized, err)
	case isStatus(err, iggywire.StatusInvalidIdentifier):
		return fmt.Errorf("%w (%w)", api.ErrInvalidIdentifier, err)
	case IsStatus(err, iggywire.StatusInvalidMessageChecksum, iggywire.StatusInvalidBatchChecksum,
		iggywire.StatusInvalidMessagesCount, iggywire.StatusInvalidMessageTimestampDelta):
		return fmt.Errorf("%w: the server refused the batch (%w)", api.ErrInvalidMessage, err)
	}
	return err
}

// ClassifyLogin maps a refused login to api.ErrUnauthorized: bad or inactive credentials, an
// unknown (20 over 0.8), invalid or expired token, or a missing permission.
func ClassifyLogin(err error) error {
	if IsStatus(err, iggywire.StatusInvalidCredentials, iggywire.StatusInvalidUsername, iggywire.StatusInvalidPassword,
		iggywire.StatusUserInactive, iggywire.StatusResourceNotFound, iggywire.StatusInvalidPersonalAccessToken,
		iggywire.StatusPersonalAccessTokenExpired, iggywire.StatusUnauthorized) {
		return fmt.Errorf("%w (%w)", api.ErrUnauthorized, err)
	}
	return err
}

// storeOffsetError names the store that failed.
func storeOffsetError(err error, g *Group, partitionID uint32, offset uint64) error {
	switch {
	case notOwned(err):
		err = fmt.Errorf("%w (is the partition assigned to another group member?)", err)
	case isStatus(err, iggywire.StatusInvalidOffset):
		err = fmt.Errorf("%w (%w)", api.ErrOffsetOutOfRange, err)
	}
	return fmt.Errorf("store offset %d of group %q on stream %q topic %q partition %d: %w", offset, g.group, g.stream, g.topic, partitionID, classify(err))
}

// memberError names the refusals of an Admin offset write: a partition another member owns, an
// offset out of range.
func memberError(err error) error {
	switch {
	case notOwned(err):
		return fmt.Errorf("%w (%w)", api.ErrPartitionOwned, err)
	case isStatus(err, iggywire.StatusInvalidOffset):
		return fmt.Errorf("%w (%w)", api.ErrOffsetOutOfRange, err)
	}
	return err
}
