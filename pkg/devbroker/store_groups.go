package devbroker

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// Consumer-group operations of the store, for both protocols: the entity tree under store.mu,
// the groups under store.groupMu (groups.go deals their partitions).

// groupInfo is a snapshot of a group, with its members for GetConsumerGroup.
type groupInfo struct {
	id, partitionsCount uint32
	name                string
	members             []memberInfo
}

type memberInfo struct {
	id         uint32
	partitions []uint32
}

func (g *group) info(withMembers bool) groupInfo {
	i := groupInfo{id: g.id, partitionsCount: uint32(len(g.partitions)), name: g.name}
	if withMembers {
		for _, m := range g.members {
			i.members = append(i.members, memberInfo{id: m.id, partitions: append([]uint32(nil), m.partitions...)})
		}
	}
	return i
}

// inGroups runs fn on the topic ref names, under the store's read lock and the group lock; a
// topic that does not resolve is its error (1009, 2010).
func (s *store) inGroups(ref iggywire.TopicRef, fn func(t *topic) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(ref)
	if err != nil {
		return err
	}
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	return fn(t)
}

// inGroup is inGroups for one group (5000 when it is missing).
func (s *store) inGroup(ref iggywire.GroupRef, fn func(t *topic, g *group) error) error {
	return s.inGroups(ref.TopicRef, func(t *topic) error {
		g := t.findGroup(ref.GroupID)
		if g == nil {
			return iggywire.StatusConsumerGroupIDNotFound
		}
		return fn(t, g)
	})
}

// createGroup creates a group covering the topic's partitions (5004 when the name is taken).
func (s *store) createGroup(ref iggywire.TopicRef, name string) (groupInfo, error) {
	var out groupInfo
	err := s.inGroups(ref, func(t *topic) error {
		if t.findGroup(iggywire.NamedID(name)) != nil {
			return iggywire.StatusConsumerGroupNameAlreadyExists
		}
		id := allocID(&t.groups, &t.freeGroupIDs)
		g := &group{id: id, name: name}
		for p := range uint32(len(t.partitions)) {
			g.partitions = append(g.partitions, p)
		}
		t.groups[id] = g
		out = g.info(false)
		return nil
	})
	return out, err
}

// deleteGroup removes a group.
func (s *store) deleteGroup(ref iggywire.GroupRef) error {
	return s.inGroup(ref, func(t *topic, g *group) error {
		t.groups[g.id] = nil
		t.freeGroupIDs = append(t.freeGroupIDs, g.id)
		return nil
	})
}

// joinGroup makes the client a member (again is a no-op) and rebalances cooperatively.
func (s *store) joinGroup(ref iggywire.GroupRef, clientID uint32) error {
	return s.inGroup(ref, func(t *topic, g *group) error {
		g.join(clientID, t.releasedFor(g))
		return nil
	})
}

// leaveGroup ends the client's membership (5006 when it is not a member).
func (s *store) leaveGroup(ref iggywire.GroupRef, clientID uint32) error {
	return s.inGroup(ref, func(_ *topic, g *group) error {
		if !g.leave(clientID) {
			return iggywire.StatusConsumerGroupMemberNotFound
		}
		return nil
	})
}

// groupInfo is a group with its members; found is false when the group is missing, err the
// topic's error.
func (s *store) groupInfo(ref iggywire.GroupRef) (info groupInfo, found bool, err error) {
	err = s.inGroups(ref.TopicRef, func(t *topic) error {
		if g := t.findGroup(ref.GroupID); g != nil {
			info, found = g.info(true), true
		}
		return nil
	})
	return info, found, err
}

// groupInfos lists the topic's groups in id order.
func (s *store) groupInfos(ref iggywire.TopicRef) ([]groupInfo, error) {
	var out []groupInfo
	err := s.inGroups(ref, func(t *topic) error {
		for _, g := range t.groups {
			if g != nil {
				out = append(out, g.info(false))
			}
		}
		return nil
	})
	return out, err
}

// syncGroup is the client's assignment: the group's generation and, appended to dst, the
// partitions it may poll (not those it is handing over). member is false when the client is
// not a member.
func (s *store) syncGroup(ref iggywire.GroupRef, clientID uint32, dst []uint32) (generation uint64, partitions []uint32, member bool, err error) {
	partitions = dst
	err = s.inGroup(ref, func(t *topic, g *group) error {
		g.settleRevocations(t.releasedFor(g), 0)
		if m := g.member(clientID); m != nil {
			generation, partitions, member = g.generation, m.pollable(dst), true
		}
		return nil
	})
	return generation, partitions, member, err
}

// eachGroup runs fn on every group of every topic, under the read lock and the group lock.
func (s *store) eachGroup(fn func(st *stream, t *topic, g *group)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	for _, st := range s.streams {
		if st == nil {
			continue
		}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			for _, g := range t.groups {
				if g != nil {
					fn(st, t, g)
				}
			}
		}
	}
}

// groupsOf lists (stream, topic, group) ids of every group the client is a member of.
func (s *store) groupsOf(clientID uint32) [][3]uint32 {
	var out [][3]uint32
	s.eachGroup(func(st *stream, t *topic, g *group) {
		if g.member(clientID) != nil {
			out = append(out, [3]uint32{st.id, t.id, g.id})
		}
	})
	return out
}

// dropClient removes a closed connection (or an ended 0.9 session) from every group it joined.
func (s *store) dropClient(clientID uint32) {
	s.eachGroup(func(_ *stream, _ *topic, g *group) { g.leave(clientID) })
}
