package v08

import (
	"context"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// A 0.8 member's partitions. GetConsumerGroup (600) lists every member's partitions, but names
// members by their number in the group, not by client: a connection learns which member it is
// from the partitions the server serves it. A poll the server picks the partition for (strategy
// next, none named) is answered from one of this member's partitions, and partitions belong to
// one member each, so the member listing that partition is this connection. A poll naming a
// partition the server does not serve this member is answered with no partition at all, which
// makes the connection forget who it is until the server picks again.
//
// The list is read again once a second, and at once when the server served a partition the
// cached list does not hold. A partition being handed over to a joining member (Iggy 0.8's
// cooperative rebalance) stays in its donor's list until what the group polled there is
// stored; the list cannot show it, so Settling says that some member waits without partitions
// while another holds more than one: a hand-over may be under way.

// assignmentTTL is how long a member list read from the server is trusted.
const assignmentTTL = time.Second

// membership is what one connection knows about its place in one group: the partition the server
// last served it, and the member number that partition identified.
type membership struct {
	served      uint32
	servedKnown bool
	news        bool // served changed since the member list was read
	member      uint32
	memberKnown bool
}

func (c *conn) membership(g *engine.Group) *membership {
	if c.members == nil {
		c.members = map[*engine.Group]*membership{}
	}
	m := c.members[g]
	if m == nil {
		m = &membership{}
		c.members[g] = m
	}
	return m
}

// served records that the server served this connection partition p of g.
func (c *conn) served(g *engine.Group, p uint32) {
	m := c.membership(g)
	if !m.servedKnown || m.served != p {
		m.served, m.servedKnown = p, true
		m.news = !slices.Contains(g.Partitions, p) || !g.Known
	}
}

// notServed records that the server refused a partition the connection named: who it is, and
// what it owns, are to be learnt again.
func (c *conn) notServed(g *engine.Group) {
	m := c.membership(g)
	m.servedKnown, m.memberKnown, m.news = false, false, false
	g.Forget()
}

// Assign implements engine.Protocol: the member list of GetConsumerGroup (600), read again when
// older than assignmentTTL or when a poll brought news.
func (p *protocol) Assign(ctx context.Context, c *conn, g *engine.Group) error {
	m := c.membership(g)
	if g.Seq == c.Seq() && !g.Synced.IsZero() && time.Since(g.Synced) < assignmentTTL && !m.news {
		return nil
	}
	reply, err := c.call(ctx, "get consumer group", wire08.CmdGetConsumerGroup, maxMetadataReply, func(b []byte) ([]byte, error) {
		return iggywire.AppendGroupRef(b, g.Ref)
	})
	if err != nil {
		return err
	}
	members, parts, found, err := wire08.DecodeGroupMembers(reply, c.groupMembers[:0], c.groupParts[:0])
	if err != nil {
		return c.Malformed("consumer group reply: %v", err)
	}
	c.groupMembers, c.groupParts = members[:0], parts[:0]
	if !found {
		return iggywire.StatusConsumerGroupIDNotFound // the engine joins (creating it) and asks again
	}
	var mine *wire08.GroupMember
	idle, crowded := false, false
	for i := range members {
		mb := &members[i]
		idle = idle || len(mb.Partitions) == 0
		crowded = crowded || len(mb.Partitions) > 1
		if m.memberKnown && mb.ID == m.member {
			mine = mb
		}
	}
	if m.servedKnown && (mine == nil || m.news && !slices.Contains(mine.Partitions, m.served)) {
		mine = nil
		for i := range members {
			if slices.Contains(members[i].Partitions, m.served) {
				mine = &members[i]
			}
		}
	}
	m.news, m.memberKnown = false, mine != nil
	own := g.Scratch()
	if mine != nil {
		m.member = mine.ID
		own = append(own, mine.Partitions...)
	}
	g.Assigned(c.Seq(), 0, own, mine != nil, idle && crowded)
	return nil
}
