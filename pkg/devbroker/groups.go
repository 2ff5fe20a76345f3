package devbroker

import "slices"

// Consumer-group membership and partition assignment (spec §6.6). All of it
// runs under store.groupMu. Hand-overs the real server may defer until a
// commit catches up are immediate here.

func (g *group) member(clientID uint32) *member {
	for _, m := range g.members {
		if m.clientID == clientID {
			return m
		}
	}
	return nil
}

// join adds the connection as a member (a no-op when it already is one) and
// runs the cooperative rebalance.
func (g *group) join(clientID uint32) {
	if g.member(clientID) != nil {
		return
	}
	id := uint32(0)
	for _, m := range g.members {
		id = max(id, m.id+1)
	}
	g.members = append(g.members, &member{id: id, clientID: clientID})
	g.cooperativeRebalance()
}

// leave removes the connection's member and deals all partitions anew; it
// reports whether the connection was a member.
func (g *group) leave(clientID uint32) bool {
	i := slices.IndexFunc(g.members, func(m *member) bool { return m.clientID == clientID })
	if i < 0 {
		return false
	}
	g.members = slices.Delete(g.members, i, i+1)
	g.fullRebalance()
	return true
}

// cooperativeRebalance gives unowned partitions to idle members, then lets
// members above their fair share hand partitions from the end of their lists
// to members that still own nothing.
func (g *group) cooperativeRebalance() {
	if len(g.members) == 0 {
		return
	}
	owned := map[uint32]bool{}
	for _, m := range g.members {
		for _, p := range m.partitions {
			owned[p] = true
		}
	}
	idle := func() []*member {
		var out []*member
		for _, m := range g.members {
			if len(m.partitions) == 0 {
				out = append(out, m)
			}
		}
		return out
	}
	if waiting := idle(); len(waiting) > 0 {
		next := 0
		for _, p := range g.partitions {
			if !owned[p] {
				m := waiting[next%len(waiting)]
				m.partitions = append(m.partitions, p)
				next++
			}
		}
	}
	n, count := len(g.partitions), len(g.members)
	fairShare := func(index int) int {
		share := n / count
		if index < n%count {
			share++
		}
		return share
	}
	for _, taker := range idle() {
		donor := -1
		for i, m := range g.members {
			if len(m.partitions) > fairShare(i) {
				donor = i
				break
			}
		}
		if donor < 0 {
			return
		}
		d := g.members[donor]
		last := d.partitions[len(d.partitions)-1]
		d.partitions = d.partitions[:len(d.partitions)-1]
		taker.partitions = append(taker.partitions, last)
	}
}

// fullRebalance deals partition i to member i mod m, in member order.
func (g *group) fullRebalance() {
	for _, m := range g.members {
		m.partitions = m.partitions[:0]
		m.cursor = 0
	}
	if len(g.members) == 0 {
		return
	}
	for i, p := range g.partitions {
		m := g.members[i%len(g.members)]
		m.partitions = append(m.partitions, p)
	}
}

// resetPartitions makes the group cover partitions [0, count) after
// CreatePartitions, and deals them anew.
func (g *group) resetPartitions(count uint32) {
	g.partitions = g.partitions[:0]
	for p := range count {
		g.partitions = append(g.partitions, p)
	}
	g.fullRebalance()
}

// nextPartition is the member's round-robin choice for a poll without a
// partition id; advance moves the cursor on, as every such poll does.
func (m *member) nextPartition(advance bool) (uint32, bool) {
	if len(m.partitions) == 0 {
		return 0, false
	}
	p := m.partitions[m.cursor%len(m.partitions)]
	if advance {
		m.cursor = (m.cursor + 1) % len(m.partitions)
	}
	return p, true
}

func (m *member) owns(partitionID uint32) bool {
	return slices.Contains(m.partitions, partitionID)
}
