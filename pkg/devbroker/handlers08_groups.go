package devbroker

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// 0.8 consumer-group handlers (spec §4.10). Membership belongs to the connection; Get commands
// answer an empty OK for what is missing at any level.

func groupRecord08(g groupInfo) wire08.ConsumerGroup {
	return wire08.ConsumerGroup{ID: g.id, PartitionsCount: g.partitionsCount, MembersCount: uint32(len(g.members)), Name: []byte(g.name)}
}

// groupRequest08 decodes a consumer-group request and checks the login.
func (c *connection) groupRequest08(code wire08.Command, payload []byte) (wire08.GroupRequest, iggywire.Status) {
	req, err := wire08.DecodeGroupRequest(code, payload)
	return req, c.decoded08(err)
}

func (c *connection) getGroup08(payload []byte) ([]byte, iggywire.Status) {
	req, st := c.groupRequest08(wire08.CmdGetConsumerGroup, payload)
	if st != iggywire.StatusOK {
		return nil, st
	}
	g, found, err := c.data.groupInfo(iggywire.GroupRef{TopicRef: req.TopicRef, GroupID: req.GroupID})
	if err != nil || !found {
		return nil, iggywire.StatusOK
	}
	c.out = wire08.AppendConsumerGroup(c.out[:0], groupRecord08(g))
	for _, m := range g.members {
		c.out = wire08.AppendConsumerGroupMember(c.out, m.id, m.partitions)
	}
	return c.out, iggywire.StatusOK
}

func (c *connection) getGroups08(payload []byte) ([]byte, iggywire.Status) {
	req, st := c.groupRequest08(wire08.CmdGetConsumerGroups, payload)
	if st != iggywire.StatusOK {
		return nil, st
	}
	groups, _ := c.data.groupInfos(req.TopicRef)
	c.out = c.out[:0]
	for _, g := range groups {
		c.out = wire08.AppendConsumerGroup(c.out, groupRecord08(g))
	}
	return c.out, iggywire.StatusOK
}

func (c *connection) createGroup08(payload []byte) ([]byte, iggywire.Status) {
	req, st := c.groupRequest08(wire08.CmdCreateConsumerGroup, payload)
	if st != iggywire.StatusOK {
		return nil, st
	}
	g, err := c.data.createGroup(req.TopicRef, string(req.Name))
	if err != nil {
		return nil, statusOf(err)
	}
	c.out = wire08.AppendConsumerGroup(c.out[:0], groupRecord08(g))
	return c.out, iggywire.StatusOK
}

// groupOp08 decodes a request naming one group and runs op on it.
func (c *connection) groupOp08(code wire08.Command, payload []byte, op func(iggywire.GroupRef) error) ([]byte, iggywire.Status) {
	req, st := c.groupRequest08(code, payload)
	if st != iggywire.StatusOK {
		return nil, st
	}
	return done08(op(iggywire.GroupRef{TopicRef: req.TopicRef, GroupID: req.GroupID}))
}

func (c *connection) deleteGroup08(payload []byte) ([]byte, iggywire.Status) {
	return c.groupOp08(wire08.CmdDeleteConsumerGroup, payload, c.data.deleteGroup)
}

func (c *connection) joinGroup08(payload []byte) ([]byte, iggywire.Status) {
	return c.groupOp08(wire08.CmdJoinConsumerGroup, payload, func(g iggywire.GroupRef) error { return c.data.joinGroup(g, c.sess.clientID) })
}

func (c *connection) leaveGroup08(payload []byte) ([]byte, iggywire.Status) {
	return c.groupOp08(wire08.CmdLeaveConsumerGroup, payload, func(g iggywire.GroupRef) error { return c.data.leaveGroup(g, c.sess.clientID) })
}
