package devbroker

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// groupCommand handles consumer groups (600-605): every request starts with
// `[Id stream][Id topic]`; Create adds `[u8 len][name]`, the others `[Id group]`.
func (c *connection) groupCommand(code uint32, payload []byte) error {
	d := decoder{buf: payload}
	streamID := d.ident()
	topicID := d.ident()
	var groupID ident
	var name string
	switch code {
	case codeGetConsumerGroups:
	case codeCreateConsumerGroup:
		name = d.name()
	default:
		groupID = d.ident()
	}
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	_, t, err := s.resolveTopic(streamID, topicID)

	switch code {
	case codeGetConsumerGroups:
		e := c.newReply()
		if err == nil {
			for _, g := range t.groups {
				if g != nil {
					encodeGroup(e, g)
				}
			}
		}
		c.ok(e.buf)
		return nil
	case codeGetConsumerGroup:
		var g *group
		if err == nil {
			g = t.findGroup(groupID)
		}
		if g == nil {
			c.ok(nil) // the real server's "not found" for Get commands
			return nil
		}
		e := c.newReply()
		encodeGroup(e, g)
		for _, m := range g.members {
			e.u32(m.id)
			e.u32(uint32(len(m.partitions)))
			for _, p := range m.partitions {
				e.u32(p)
			}
		}
		c.ok(e.buf)
		return nil
	}

	if err != nil {
		return err
	}
	if code == codeCreateConsumerGroup {
		for _, g := range t.groups {
			if g != nil && g.name == name {
				return iggywire.StatusConsumerGroupNameAlreadyExists
			}
		}
		id := allocID(&t.groups, &t.freeGroupIDs)
		g := &group{id: id, name: name}
		for p := range uint32(len(t.partitions)) {
			g.partitions = append(g.partitions, p)
		}
		t.groups[id] = g
		e := c.newReply()
		encodeGroup(e, g)
		c.ok(e.buf)
		return nil
	}
	g := t.findGroup(groupID)
	if g == nil {
		return iggywire.StatusConsumerGroupIDNotFound
	}
	switch code {
	case codeDeleteConsumerGroup:
		t.groups[g.id] = nil
		t.freeGroupIDs = append(t.freeGroupIDs, g.id)
	case codeJoinConsumerGroup:
		g.join(c.sess.clientID, t.releasedFor(g))
	case codeLeaveConsumerGroup:
		if !g.leave(c.sess.clientID) {
			return iggywire.StatusConsumerGroupMemberNotFound
		}
	}
	c.ok(nil)
	return nil
}

// encodeGroup writes the group record `[u32 id][u32 partitions][u32 members][u8 len][name]`.
func encodeGroup(e *encoder, g *group) {
	e.u32(g.id)
	e.u32(uint32(len(g.partitions)))
	e.u32(uint32(len(g.members)))
	e.name8(g.name)
}
