package devbroker

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// 0.8 consumer-group handlers. Membership belongs to the connection; Get commands
// answer an empty OK for what is missing at any level.

func groupRecord08(g groupInfo) wire08.ConsumerGroup {
	return wire08.ConsumerGroup{ID: g.id, PartitionsCount: g.partitionsCount, MembersCount: uint32(len(g.members)), Name: []byte(g.name)}
}

// groupRequest08 decodes one of the consumer-group requests.
func groupRequest08(code wire08.Command) func([]byte) (wire08.GroupRequest, error) {
	return func(payload []byte) (wire08.GroupRequest, error) { return wire08.DecodeGroupRequest(code, payload) }
}

func (c *connection) getGroup08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, groupRequest08(wire08.CmdGetConsumerGroup), func(req wire08.GroupRequest) ([]byte, iggywire.Status) {
		g, found, err := c.data.groupInfo(groupRef08(req))
		if err != nil || !found {
			return nil, iggywire.StatusOK
		}
		c.out = wire08.AppendConsumerGroup(c.out[:0], groupRecord08(g))
		for _, m := range g.members {
			c.out = wire08.AppendConsumerGroupMember(c.out, m.id, m.partitions)
		}
		return c.out, iggywire.StatusOK
	})
}

func (c *connection) getGroups08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, groupRequest08(wire08.CmdGetConsumerGroups), func(req wire08.GroupRequest) ([]byte, iggywire.Status) {
		groups, _ := c.data.groupInfos(req.TopicRef)
		c.out = c.out[:0]
		for _, g := range groups {
			c.out = wire08.AppendConsumerGroup(c.out, groupRecord08(g))
		}
		return c.out, iggywire.StatusOK
	})
}

func (c *connection) createGroup08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, groupRequest08(wire08.CmdCreateConsumerGroup), func(req wire08.GroupRequest) ([]byte, iggywire.Status) {
		g, err := c.data.createGroup(req.TopicRef, string(req.Name))
		return answer08(err, func() []byte {
			c.out = wire08.AppendConsumerGroup(c.out[:0], groupRecord08(g))
			return c.out
		})
	})
}

// groupRef08 is the group a decoded request names.
func groupRef08(req wire08.GroupRequest) iggywire.GroupRef {
	return iggywire.GroupRef{TopicRef: req.TopicRef, GroupID: req.GroupID}
}
