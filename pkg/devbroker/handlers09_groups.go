package devbroker

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 consumer-group handlers (docs/iggy-protocol-0.9.md §10.6). Members are sessions
// (connection.sess.clientID stands for the bound u128 client id, see
// conn09.go); every change of membership or assignment bumps the group's
// generation, which Sync reports with the partitions the member may poll.

func groupElement09(g groupInfo) wire09.ConsumerGroup {
	return wire09.ConsumerGroup{ID: g.id, PartitionsCount: g.partitionsCount, MembersCount: uint32(len(g.members)), Name: []byte(g.name)}
}

// createGroup09 creates a group; a missing stream or topic, or a name in use, is a committed
// rejection.
func (c *connection) createGroup09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, wire09.DecodeCreateConsumerGroup, func(req wire09.CreateConsumerGroup) ([]byte, iggywire.Status) {
		g, err := c.data.createGroup(req.TopicRef, string(req.Name))
		return c.committed(err, func() []byte {
			c.out = wire09.AppendConsumerGroup(c.framed(), groupElement09(g))
			return c.out
		})
	})
}

// getGroup09 answers the group and its members, empty when absent; a missing stream or topic is
// status 1009 or 2010.
func (c *connection) getGroup09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, iggywire.DecodeGroupRef, c.groupOf09)
}

func (c *connection) groupOf09(ref iggywire.GroupRef) ([]byte, iggywire.Status) {
	g, found, err := c.data.groupInfo(ref)
	if err != nil {
		return nil, statusOf(err)
	}
	c.out = c.out[:0]
	if found {
		c.out = wire09.AppendConsumerGroup(c.out, groupElement09(g))
		for _, m := range g.members {
			c.out = wire09.AppendConsumerGroupMember(c.out, m.id, m.partitions)
		}
	}
	return c.out, 0
}

// getGroups09 answers the topic's groups concatenated.
func (c *connection) getGroups09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, iggywire.DecodeTopicRef, func(ref iggywire.TopicRef) ([]byte, iggywire.Status) {
		groups, err := c.data.groupInfos(ref)
		c.out = c.out[:0]
		for _, g := range groups {
			c.out = wire09.AppendConsumerGroup(c.out, groupElement09(g))
		}
		if err != nil {
			return nil, statusOf(err)
		}
		return c.out, 0
	})
}

// syncGroup09 answers the caller's generation and pollable partitions, or an
// empty body when it is not a member.
func (c *connection) syncGroup09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, iggywire.DecodeGroupRef, c.assignment09)
}

func (c *connection) assignment09(ref iggywire.GroupRef) ([]byte, iggywire.Status) {
	generation, parts, member, err := c.data.syncGroup(ref, c.sess.clientID, c.s09.parts[:0])
	c.s09.parts = parts
	if err != nil {
		return nil, statusOf(err)
	}
	if !member {
		return nil, 0
	}
	c.out = wire09.AppendGroupAssignment(c.out[:0], generation, parts)
	return c.out, 0
}
