package devbroker

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 consumer-group handlers (spec 0.9 §10.6). Members are sessions
// (connection.sess.clientID stands for the bound u128 client id, see
// conn09.go); every change of membership or assignment bumps the group's
// generation, which Sync reports with the partitions the member may poll.

func groupElement(g *group) wire09.ConsumerGroup {
	return wire09.ConsumerGroup{ID: g.id, PartitionsCount: uint32(len(g.partitions)), MembersCount: uint32(len(g.members)), Name: []byte(g.name)}
}

func (c *connection) createGroup09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeCreateConsumerGroup(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.inGroups(req.TopicRef, c.rejected, func(t *topic) ([]byte, iggywire.Status) {
		if t.findGroup(ident{name: req.Name}) != nil {
			return c.rejected(iggywire.StatusConsumerGroupNameAlreadyExists)
		}
		id := allocID(&t.groups, &t.freeGroupIDs)
		g := &group{id: id, name: string(req.Name)}
		for p := range uint32(len(t.partitions)) {
			g.partitions = append(g.partitions, p)
		}
		t.groups[id] = g
		c.s09.out = wire09.AppendConsumerGroup(c.framed(), groupElement(g))
		return c.s09.out, 0
	})
}

// groupOp09 deletes, joins or leaves a group; a missing stream, topic or
// group, or leaving a group one is not in, is a committed rejection.
func (c *connection) groupOp09(op wire09.Operation, body []byte) ([]byte, iggywire.Status) {
	req, err := iggywire.DecodeGroupRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.inGroups(req.TopicRef, c.rejected, func(t *topic) ([]byte, iggywire.Status) {
		g := t.findGroup(toIdent(req.GroupID))
		if g == nil {
			return c.rejected(iggywire.StatusConsumerGroupIDNotFound)
		}
		switch op {
		case wire09.OpDeleteConsumerGroup:
			t.groups[g.id] = nil
			t.freeGroupIDs = append(t.freeGroupIDs, g.id)
		case wire09.OpJoinConsumerGroup:
			g.join(c.sess.clientID, t.releasedFor(g))
		case wire09.OpLeaveConsumerGroup:
			if !g.leave(c.sess.clientID) {
				return c.rejected(iggywire.StatusConsumerGroupMemberNotFound)
			}
		}
		return c.framed(), 0
	})
}

// getGroups09 answers GetConsumerGroup (group and members, empty when
// absent) and GetConsumerGroups (the topic's groups concatenated). A missing
// stream or topic is status 1009 or 2010.
func (c *connection) getGroups09(code wire09.Command, body []byte) ([]byte, iggywire.Status) {
	var ref iggywire.GroupRef
	var err error
	if code == wire09.CmdGetConsumerGroups {
		ref.TopicRef, err = iggywire.DecodeTopicRef(body)
	} else {
		ref, err = iggywire.DecodeGroupRef(body)
	}
	if err != nil {
		return nil, statusOf(err)
	}
	return c.inGroups(ref.TopicRef, denyStatus, func(t *topic) ([]byte, iggywire.Status) {
		out := c.s09.out[:0]
		if code == wire09.CmdGetConsumerGroups {
			for _, g := range t.groups {
				if g != nil {
					out = wire09.AppendConsumerGroup(out, groupElement(g))
				}
			}
		} else if g := t.findGroup(toIdent(ref.GroupID)); g != nil {
			out = wire09.AppendConsumerGroup(out, groupElement(g))
			for _, m := range g.members {
				out = wire09.AppendConsumerGroupMember(out, m.id, m.partitions)
			}
		}
		c.s09.out = out
		return out, 0
	})
}

// syncGroup09 answers the caller's generation and pollable partitions, or an
// empty body when it is not a member.
func (c *connection) syncGroup09(body []byte) ([]byte, iggywire.Status) {
	ref, err := iggywire.DecodeGroupRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.inGroups(ref.TopicRef, denyStatus, func(t *topic) ([]byte, iggywire.Status) {
		g := t.findGroup(toIdent(ref.GroupID))
		if g == nil {
			return nil, iggywire.StatusConsumerGroupIDNotFound
		}
		g.settleRevocations(t.releasedFor(g), 0)
		m := g.member(c.sess.clientID)
		if m == nil {
			return answerEmpty(nil)
		}
		c.s09.parts = m.pollable(c.s09.parts[:0])
		c.s09.out = wire09.AppendGroupAssignment(c.s09.out[:0], g.generation, c.s09.parts)
		return c.s09.out, 0
	})
}
