package v09

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// The replay rules of transient answers (§6.4).
const (
	replayInterval     = 50 * time.Millisecond
	notCommittedBudget = 30 * time.Second // 57: the outcome is unknown, replay the same bytes
	notAcceptedBudget  = 2 * time.Second  // 58: this node will not take it, then look for the leader
)

// errNotLeader: the node kept answering 58 (not accepted) for notAcceptedBudget. The client then
// drops the connection and reconnects, which re-reads the roster and moves to the leader (§8),
// and sends the request again there (re-stamped), for up to notCommittedBudget in all.
var errNotLeader = errors.New("the node does not accept the request (not the primary?)")

func isNotLeader(err error) bool { return errors.Is(err, errNotLeader) }

// exchange stamps frame (header space first, body after it) and runs it. A transient answer is
// replayed with the identical bytes, so the server deduplicates a metadata request by its number:
// 57 every 50 ms for up to 30 s, 58 for up to 2 s and then errNotLeader.
func (c *conn) exchange(ctx context.Context, frame []byte, op wire09.Operation, code wire09.Command, buf *[]byte) (reply, error) {
	request := c.stamp(frame, op, code)
	var first time.Time
	for {
		rep, err := c.roundTrip(ctx, frame, request, op, buf)
		st, transient := transientStatus(err)
		if !transient {
			return rep, err
		}
		if first.IsZero() {
			first = time.Now()
		}
		budget := notCommittedBudget
		if st == iggywire.StatusTransientNotAccepted && op != wire09.OpRegister {
			budget = notAcceptedBudget
		}
		if time.Since(first) >= budget {
			if st == iggywire.StatusTransientNotAccepted && op != wire09.OpRegister {
				return reply{}, fmt.Errorf("%w: %w", errNotLeader, st)
			}
			return reply{}, fmt.Errorf("%s request still transient after %s: %w", opName(op), budget, st)
		}
		if err := backoff.Sleep(ctx, replayInterval); err != nil {
			return reply{}, fmt.Errorf("%w (replaying a transient %w)", err, st)
		}
	}
}

// transientStatus reports a 57 or 58 answer. Replies carry a bare iggywire.Status, so the common
// case needs no errors.As (whose target would escape, an allocation per request).
func transientStatus(err error) (iggywire.Status, bool) {
	if err == nil {
		return 0, false
	}
	st, ok := err.(iggywire.Status)
	if !ok && !errors.As(err, &st) {
		return 0, false
	}
	return st, st.Transient()
}
