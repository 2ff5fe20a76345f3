package v09

import (
	"context"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// assignmentTTL is how long a Sync answer is trusted before polling asks again, as the Go SDK
// does (§10.6). A poll the server fences (resync sentinel, 5006, 5009) drops it at once.
const assignmentTTL = 5 * time.Second

// sync reads this connection's assignment in the group (SyncConsumerGroup, 606). An empty reply
// (not a member) is StatusConsumerGroupMemberNotFound, as wire09 decodes it.
func (c *conn) sync(ctx context.Context, g iggywire.GroupRef, dst []uint32) (uint64, []uint32, error) {
	body, err := c.read(ctx, wire09.CmdSyncConsumerGroup, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	if err != nil {
		return 0, dst, err
	}
	a, err := wire09.DecodeGroupAssignment(body)
	if err != nil {
		if isStatus(err, iggywire.StatusConsumerGroupMemberNotFound) {
			return 0, dst, err
		}
		return 0, dst, c.Malformed("sync reply: %v", err)
	}
	return a.Generation, a.Partitions.AppendTo(dst), nil
}

// assignment is this connection's partitions in the group, from the cache when it is fresh,
// else from Sync (606). A connection that is not a member joins (creating a deleted group) and
// syncs again.
func (p *protocol) assignment(ctx context.Context, c *conn, g *engine.Group, fresh bool) error {
	if !fresh && g.Seq == c.Seq() && !g.Synced.IsZero() && time.Since(g.Synced) < assignmentTTL {
		return nil
	}
	gen, parts, err := c.sync(ctx, g.Ref, g.Scratch())
	if engine.MembershipLost(err) && c.Broken() == nil {
		if err := p.engine.Join(ctx, c, g); err != nil {
			return err
		}
		gen, parts, err = c.sync(ctx, g.Ref, g.Scratch())
	}
	if err != nil {
		return err
	}
	g.Assigned(c.Seq(), gen, parts, true, false) // Sync lists only what this member may poll
	return nil
}

// Assign implements engine.Protocol: the cached assignment, or Sync's.
func (p *protocol) Assign(ctx context.Context, c *conn, g *engine.Group) error {
	return p.assignment(ctx, c, g, false)
}

// Owns implements engine.Protocol. The lease of standby sources: owning is the partition being
// in this connection's assignment, read by a fresh Sync (joining when not a member). Membership
// ends with the connection, so a dead owner's partition moves at once, and the next Sync of the
// standby shows it (§5.3, §10.6).
func (p *protocol) Owns(ctx context.Context, c *conn, g *engine.Group, partition uint32) (bool, error) {
	if err := p.assignment(ctx, c, g, true); err != nil {
		return false, err
	}
	return slices.Contains(g.Partitions, partition), nil
}
