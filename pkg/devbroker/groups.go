package devbroker

import (
	"slices"
	"time"
)

// Consumer-group membership and partition assignment (docs/iggy-protocol-0.8.md §6.6), as Iggy 0.8 does it. All of it
// runs under store.groupMu.
//
// A join is cooperative: unowned partitions go to idle members, and a member above its fair share
// marks partitions from the end of its list as pending revocation towards an idle member. It keeps
// such a partition (a poll naming it and a commit still work; round-robin polls skip it) until the
// group has committed what it polled there, or the rebalancing timeout passes; then the partition
// moves. So the member that had a batch in flight commits it, and nobody reads it twice.
//
// A leave, or a closed connection, deals all partitions anew (member i mod n, in member order) and
// drops pending revocations.

// defaultRebalancingTimeout is Iggy 0.8's consumer_group.rebalancing_timeout.
const defaultRebalancingTimeout = 30 * time.Second

// partitionReleased tells whether the group committed what it polled from a partition.
type partitionReleased func(partition uint32) bool

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
func (g *group) join(clientID uint32, released partitionReleased) {
	if g.member(clientID) != nil {
		return
	}
	id := uint32(0)
	for _, m := range g.members {
		id = max(id, m.id+1)
	}
	g.members = append(g.members, &member{id: id, clientID: clientID})
	g.generation++
	g.cooperativeRebalance()
	g.settleRevocations(released, 0)
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
	targeted := map[uint32]bool{}
	for _, m := range g.members {
		for _, r := range m.pending {
			targeted[r.target] = true
		}
	}
	for _, taker := range idle() {
		if targeted[taker.clientID] {
			continue
		}
		donor := -1
		for i, m := range g.members {
			if len(m.partitions)-len(m.pending) > fairShare(i) {
				donor = i
				break
			}
		}
		if donor < 0 {
			return
		}
		d := g.members[donor]
		for i := len(d.partitions) - 1; i >= 0; i-- {
			if !d.revoking(d.partitions[i]) {
				d.pending = append(d.pending, revocation{partition: d.partitions[i], target: taker.clientID, since: time.Now()})
				targeted[taker.clientID] = true
				break
			}
		}
	}
}

// settleRevocations moves every pending partition whose group commit caught up, or that has been
// pending for timeout (0: the default) or longer, to its target.
func (g *group) settleRevocations(released partitionReleased, timeout time.Duration) {
	if timeout <= 0 {
		timeout = defaultRebalancingTimeout
	}
	for _, m := range g.members {
		kept := m.pending[:0]
		for _, r := range m.pending {
			if !released(r.partition) && time.Since(r.since) < timeout {
				kept = append(kept, r)
				continue
			}
			m.partitions = slices.DeleteFunc(m.partitions, func(p uint32) bool { return p == r.partition })
			m.cursor = 0
			g.generation++
			if t := g.member(r.target); t != nil {
				t.partitions = append(t.partitions, r.partition)
			}
		}
		m.pending = kept
	}
}

func (m *member) revoking(partition uint32) bool {
	return slices.ContainsFunc(m.pending, func(r revocation) bool { return r.partition == partition })
}

// fullRebalance deals partition i to member i mod m, in member order.
func (g *group) fullRebalance() {
	g.generation++
	for _, m := range g.members {
		m.partitions = m.partitions[:0]
		m.pending = nil
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
// CreatePartitions or DeletePartitions, and deals them anew.
func (g *group) resetPartitions(count uint32) {
	g.partitions = g.partitions[:0]
	for p := range count {
		g.partitions = append(g.partitions, p)
	}
	g.fullRebalance()
}

// nextPartition is the member's round-robin choice for a poll without a
// partition id, skipping partitions pending revocation; advance moves the
// cursor on, as every such poll does.
func (m *member) nextPartition(advance bool) (uint32, bool) {
	var choice []uint32
	if len(m.pending) == 0 {
		choice = m.partitions
	} else {
		for _, p := range m.partitions {
			if !m.revoking(p) {
				choice = append(choice, p)
			}
		}
	}
	if len(choice) == 0 {
		return 0, false
	}
	p := choice[m.cursor%len(choice)]
	if advance {
		m.cursor = (m.cursor + 1) % len(choice)
	}
	return p, true
}

func (m *member) owns(partitionID uint32) bool {
	return slices.Contains(m.partitions, partitionID)
}

// pollable lists, into dst, the partitions the member may poll: those it owns
// and is not handing over (0.9 Sync reports these).
func (m *member) pollable(dst []uint32) []uint32 {
	for _, p := range m.partitions {
		if !m.revoking(p) {
			dst = append(dst, p)
		}
	}
	return dst
}
