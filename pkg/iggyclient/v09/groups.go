package v09

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// assignmentTTL is how long a Sync answer is trusted before polling asks again, as the Go SDK
// does (§10.6). A poll the server fences (resync sentinel, 5006, 5009) drops it at once.
const assignmentTTL = 5 * time.Second

// groupState is what the client knows of one consumer group. It is guarded by the wire token.
type groupState struct {
	rejoin bool // EnsureConsumerGroup (or a poll) made this client a member: rejoin after reconnects

	// The assignment Sync reported on connection seq, at synced; next is the round-robin cursor.
	seq        uint64
	synced     time.Time
	generation uint64
	partitions []uint32
	next       int
}

func (c *client) groupState(k groupKey) *groupState {
	st := c.groups[k]
	if st == nil {
		st = &groupState{}
		c.groups[k] = st
	}
	return st
}

// resetGroupStates forgets every cached assignment: membership ends with the connection (§5.3).
func (c *client) resetGroupStates() {
	for _, st := range c.groups {
		st.synced = time.Time{}
	}
}

// EnsureConsumerGroup implements api.Client.
func (c *client) EnsureConsumerGroup(ctx context.Context, stream, topic, group string) error {
	ref, err := c.groupRef(stream, topic, group)
	if err != nil {
		return fmt.Errorf("ensure consumer group: %w", err)
	}
	k := groupKey{stream, topic, group}
	err = c.do(ctx, func(cn *conn) error { return c.join(ctx, cn, k, ref) })
	if err != nil {
		return fmt.Errorf("ensure consumer group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return nil
}

// join makes this connection a member of the group (creating it when missing) and registers it
// for rejoining after reconnects. A group that cannot be joined is not registered.
func (c *client) join(ctx context.Context, cn *conn, k groupKey, ref iggywire.GroupRef) error {
	if err := c.ensureGroup(ctx, cn, ref); err != nil {
		return err
	}
	st := c.groupState(k)
	st.rejoin = true
	st.synced = time.Time{}
	return nil
}

// ensureGroup creates the group unless it exists, then joins it (joining twice is a no-op on the
// server).
func (c *client) ensureGroup(ctx context.Context, cn *conn, ref iggywire.GroupRef) error {
	exists, err := c.groupExists(ctx, cn, ref)
	if err != nil {
		return err
	}
	if !exists {
		if err := c.createGroup(ctx, cn, ref); err != nil {
			return err
		}
	}
	return c.groupCall(ctx, cn, wire09.OpJoinConsumerGroup, ref)
}

// rejoinGroups re-enters every group joined before, on a fresh connection. A group whose topic
// is gone is logged and skipped (its next Poll reports api.ErrNotFound); only a lost connection
// fails the session.
func (c *client) rejoinGroups(ctx context.Context, cn *conn) error {
	for k, st := range c.groups {
		if !st.rejoin {
			continue
		}
		ref, err := c.groupRef(k.stream, k.topic, k.group)
		if err == nil {
			err = c.ensureGroup(ctx, cn, ref)
		}
		if err == nil {
			continue
		}
		if cn.broken != nil || isConnectionLoss(err) {
			return fmt.Errorf("rejoin consumer group %q: %w", k.group, err)
		}
		c.log.Warn("could not rejoin consumer group", "stream", k.stream, "topic", k.topic, "group", k.group, "error", classify(err))
	}
	return nil
}

// assignment is this connection's partitions in the group, from the cache when it is fresh,
// else from Sync (606). A connection that is not a member joins (creating a deleted group) and
// syncs again.
func (c *client) assignment(ctx context.Context, cn *conn, k groupKey, ref iggywire.GroupRef, fresh bool) (*groupState, error) {
	st := c.groupState(k)
	if !fresh && st.seq == cn.seq && !st.synced.IsZero() && time.Since(st.synced) < assignmentTTL {
		return st, nil
	}
	gen, parts, err := c.sync(ctx, cn, ref, st.partitions[:0])
	if isMembershipLost(err) && cn.broken == nil {
		c.log.Info("not a member of the consumer group, joining", "stream", k.stream, "topic", k.topic, "group", k.group)
		if err := c.join(ctx, cn, k, ref); err != nil {
			return nil, err
		}
		gen, parts, err = c.sync(ctx, cn, ref, st.partitions[:0])
	}
	if err != nil {
		return nil, err
	}
	if gen != st.generation || st.seq != cn.seq {
		st.next = 0
	}
	st.seq, st.synced, st.generation, st.partitions = cn.seq, time.Now(), gen, parts
	return st, nil
}

// forget drops a cached assignment the server contradicted.
func (st *groupState) forget() { st.synced = time.Time{} }

// OwnsPartition implements api.Client. The lease of standby sources: owning is the partition
// being in this connection's assignment, read by a fresh Sync (joining when not a member).
// Membership ends with the connection, so a dead owner's partition moves at once, and the next
// Sync of the standby shows it (§5.3, §10.6).
func (c *client) OwnsPartition(ctx context.Context, stream, topic, group string, partition uint32) (bool, error) {
	ref, err := c.groupRef(stream, topic, group)
	if err != nil {
		return false, fmt.Errorf("owns partition: %w", err)
	}
	k := groupKey{stream, topic, group}
	var owns bool
	err = c.do(ctx, func(cn *conn) error {
		st, err := c.assignment(ctx, cn, k, ref, true)
		if err == nil {
			owns = slices.Contains(st.partitions, partition)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("check partition %d of group %q on stream %q topic %q: %w", partition, group, stream, topic, err)
	}
	return owns, nil
}
