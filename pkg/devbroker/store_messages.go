package devbroker

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// Sends, polls and consumer offsets of the store, for both protocols: which partition a send or
// poll goes to, what a poll returns and commits, whose offset a request names and who may write
// it. The rules are Iggy 0.8's; each protocol's handlers answer the errors in their own terms
// (0.9 denies what does not resolve with status 20; docs/iggy-protocols.md). Storage is in each
// sender's format: 0.8 messages here, 0.9 records in convert.go.

// Consumer kinds of offset keys.
const (
	consumerSingle = iggywire.ConsumerKindSingle
	consumerGroup  = iggywire.ConsumerKindGroup
)

// singleKey is the offset key of a single consumer: its numeric id, or XXH32 of its name.
func singleKey(id iggywire.Identifier) offsetKey {
	if id.IsNumeric() {
		return offsetKey{kind: consumerSingle, id: id.ID}
	}
	return offsetKey{kind: consumerSingle, id: iggywire.XXH32(id.Name)}
}

// send appends one request's messages to the partition its partitioning picks (add stores them
// in the sender's format and returns the base offset) and says where they went. A missing
// stream or topic is 1009 or 2010, a topic without partitions 2010 too (as server 0.8.0
// answers), a missing partition 3007.
func (s *store) send(ref iggywire.TopicRef, pt iggywire.Partitioning, add func(p *partition, now uint64) uint64) (where [3]uint32, base uint64, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, t, err := s.resolveTopic(ref)
	if err != nil {
		return where, 0, err
	}
	var partitionID uint32
	switch pt.Kind {
	case iggywire.PartitionByID:
		partitionID = pt.PartitionID
	case iggywire.PartitionByMessageKey:
		if len(t.partitions) == 0 {
			return where, 0, iggywire.StatusTopicIDNotFound
		}
		partitionID = iggywire.XXH32(pt.Key) % uint32(len(t.partitions))
	default:
		if len(t.partitions) == 0 {
			return where, 0, iggywire.StatusTopicIDNotFound
		}
		partitionID = t.nextBalancedPartition()
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return where, 0, iggywire.StatusPartitionNotFound
	}
	return [3]uint32{st.id, t.id, partitionID}, add(p, s.clock()), nil
}

// pollQuery is one poll: whose, where from, how many, and how the messages are read (each
// protocol reads them in its own format).
type pollQuery struct {
	iggywire.ConsumerOffsetRef
	client     uint32
	strategy   iggywire.PollingStrategy
	count      uint32
	autoCommit bool
	// handedOver: a partition the member is handing over to a new member may still be polled by
	// name (0.8), or not (0.9 polls only what Sync lists).
	handedOver bool
	read       func(p *partition, from, to uint64, dst []byte) ([]byte, uint64)
}

// pollResult is what a poll read: the partition, its current offset and the messages [from, to).
type pollResult struct {
	partitionID uint32
	current     uint64
	from, to    uint64
}

// poll reads up to q.count messages into dst. A single consumer reads the partition
// named, or 0; a group member the partition named, when it owns it, or the next of its own round
// robin. Errors: 1009, 2010, 3007; 5000 for a missing group, 5006 for a connection that is not a
// member, 3022 (not resolved) for a partition the member does not own or a member without one.
func (s *store) poll(q pollQuery, dst []byte) (pollResult, []byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(iggywire.TopicRef{StreamID: q.StreamID, TopicID: q.TopicID})
	if err != nil {
		return pollResult{}, dst, err
	}
	partitionID := q.Partition.ID
	var key offsetKey
	if q.Consumer.Kind == consumerSingle {
		if !q.Partition.Set {
			partitionID = 0
		}
		key = singleKey(q.Consumer.ID)
	} else {
		g, owned, err := s.groupPoll(t, q)
		if err != nil {
			return pollResult{}, dst, err
		}
		partitionID, key = owned, offsetKey{kind: consumerGroup, id: g.id}
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return pollResult{}, dst, iggywire.StatusPartitionNotFound
	}
	p.mu.RLock()
	r := pollResult{partitionID: partitionID, current: p.currentOffsetLocked()}
	r.from, r.to = p.pollRangeLocked(q.strategy, q.count, key)
	dst, r.to = q.read(p, r.from, r.to, dst)
	p.mu.RUnlock()
	p.recordPoll(key, r.from, r.to, q.autoCommit)
	return r, dst, nil
}

// groupPoll resolves the partition a group member polls and counts the poll (callers hold
// store.mu).
func (s *store) groupPoll(t *topic, q pollQuery) (*group, uint32, error) {
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	g := t.findGroup(q.Consumer.ID)
	if g == nil {
		return nil, 0, iggywire.StatusConsumerGroupIDNotFound
	}
	g.settleRevocations(t.releasedFor(g), 0) // the timeout of pending hand-overs
	g.polls++
	m := g.member(q.client)
	if m == nil {
		return nil, 0, iggywire.StatusConsumerGroupMemberNotFound
	}
	if !q.Partition.Set {
		if p, ok := m.nextPartition(true); ok {
			return g, p, nil
		}
	} else if m.owns(q.Partition.ID) && (q.handedOver || !m.revoking(q.Partition.ID)) {
		return g, q.Partition.ID, nil
	}
	return nil, 0, iggywire.StatusNotResolvedConsumer
}

// recordPoll notes what a poll returned ([from, to)): the last offset a group
// polled (what a revocation waits to see committed) and, with auto-commit,
// the stored offset.
func (p *partition) recordPoll(key offsetKey, from, to uint64, autoCommit bool) {
	if to <= from || (!autoCommit && key.kind != consumerGroup) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if key.kind == consumerGroup {
		p.lastPolled[key.id] = to - 1
	}
	if autoCommit {
		p.offsets[key] = to - 1
	}
}

// pollRangeLocked returns the offsets [from, to) a poll returns; from == to means none.
func (p *partition) pollRangeLocked(strategy iggywire.PollingStrategy, count uint32, key offsetKey) (from, to uint64) {
	end := p.nextOffset
	if count == 0 || end == 0 {
		return 0, 0
	}
	switch strategy.Kind {
	case iggywire.PollOffset:
		from = strategy.Value
	case iggywire.PollTimestamp:
		first, ok := p.firstOffsetAtLocked(strategy.Value)
		if !ok {
			return 0, 0
		}
		from = first
	case iggywire.PollFirst:
		from = 0
	case iggywire.PollLast:
		from = end - min(uint64(count), end)
	case iggywire.PollNext:
		if stored, ok := p.offsets[key]; ok {
			from = stored + 1
		}
	}
	// Messages dropped by retention are gone: reading resumes at the oldest kept.
	from = max(from, p.firstRetainedLocked())
	if from >= end {
		return 0, 0
	}
	return from, min(end, from+uint64(count))
}

// offsetTarget resolves the partition and key an offset request names (callers hold store.mu).
// A single consumer's is the partition named, or 0. A group's: the group must exist (5000); a
// read needs no membership (partition or 0); a write comes from a member (5006) and names a
// partition it owns (3022), or, without one, takes the member's round-robin cursor, which after
// a poll points at the next partition (server 0.8.0 does so). A missing partition is 3007.
func (s *store) offsetTarget(t *topic, ref iggywire.ConsumerOffsetRef, client uint32, write bool) (*partition, offsetKey, *group, error) {
	partitionID := ref.Partition.ID
	if !ref.Partition.Set {
		partitionID = 0
	}
	var key offsetKey
	var g *group
	if ref.Consumer.Kind == consumerSingle {
		key = singleKey(ref.Consumer.ID)
	} else {
		s.groupMu.Lock()
		g = t.findGroup(ref.Consumer.ID)
		var err error
		switch {
		case g == nil:
			err = iggywire.StatusConsumerGroupIDNotFound
		case write:
			partitionID, err = writerPartition(g.member(client), ref.Partition)
		}
		s.groupMu.Unlock()
		if err != nil {
			return nil, key, nil, err
		}
		key = offsetKey{kind: consumerGroup, id: g.id}
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return nil, key, nil, iggywire.StatusPartitionNotFound
	}
	return p, key, g, nil
}

// writerPartition is the partition a member's offset write goes to (callers hold groupMu).
func writerPartition(m *member, named iggywire.OptionalPartition) (uint32, error) {
	switch {
	case m == nil:
		return 0, iggywire.StatusConsumerGroupMemberNotFound
	case named.Set && m.owns(named.ID):
		return named.ID, nil
	case !named.Set:
		if p, ok := m.nextPartition(false); ok {
			return p, nil
		}
	}
	return 0, iggywire.StatusNotResolvedConsumer
}

// offsetTarget is where an offset request points: the topic, the partition and whose offset it
// is, with the group (nil for a single consumer).
type offsetTarget struct {
	t   *topic
	p   *partition
	key offsetKey
	g   *group
}

// atOffset resolves ref (offsetTarget) and runs fn on it under the store's read lock.
func (s *store) atOffset(ref iggywire.ConsumerOffsetRef, client uint32, write bool, fn func(o offsetTarget) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(iggywire.TopicRef{StreamID: ref.StreamID, TopicID: ref.TopicID})
	if err != nil {
		return err
	}
	p, key, g, err := s.offsetTarget(t, ref, client, write)
	if err != nil {
		return err
	}
	return fn(offsetTarget{t: t, p: p, key: key, g: g})
}

// storeOffset stores a consumer's offset: the partition must hold it (4100 for an empty
// partition or an offset past its last message). A group's commit may complete a pending
// hand-over of the partition.
func (s *store) storeOffset(ref iggywire.ConsumerOffsetRef, client uint32, offset uint64) error {
	return s.atOffset(ref, client, true, func(o offsetTarget) error {
		o.p.mu.Lock()
		if o.p.nextOffset == 0 || offset > o.p.currentOffsetLocked() {
			o.p.mu.Unlock()
			return iggywire.StatusInvalidOffset
		}
		o.p.offsets[o.key] = offset
		o.p.mu.Unlock()
		if o.g != nil {
			// Lock order: groups before partitions, so the partition lock was let go first.
			s.groupMu.Lock()
			o.g.settleRevocations(o.t.releasedFor(o.g), 0)
			s.groupMu.Unlock()
		}
		return nil
	})
}

// deleteOffset removes a consumer's stored offset (3021 when none is stored).
func (s *store) deleteOffset(ref iggywire.ConsumerOffsetRef, client uint32) error {
	return s.atOffset(ref, client, true, func(o offsetTarget) error {
		o.p.mu.Lock()
		defer o.p.mu.Unlock()
		if _, has := o.p.offsets[o.key]; !has {
			return iggywire.StatusConsumerOffsetNotFound
		}
		delete(o.p.offsets, o.key)
		return nil
	})
}

// storedOffset is a consumer's stored offset with its partition's current one; found is false
// when nothing is stored, err says what did not resolve.
func (s *store) storedOffset(ref iggywire.ConsumerOffsetRef) (partitionID uint32, current, stored uint64, found bool, err error) {
	err = s.atOffset(ref, 0, false, func(o offsetTarget) error {
		o.p.mu.RLock()
		defer o.p.mu.RUnlock()
		stored, found = o.p.offsets[o.key]
		partitionID, current = o.p.id, o.p.currentOffsetLocked()
		return nil
	})
	return partitionID, current, stored, found, err
}

// append stores one 0.8 request's messages and returns the first one's offset: it copies them,
// then fills in the offset, the server timestamp (one per request), a UUID v4 for a zero id and
// the XXH3 checksum, as the real server does.
func (p *partition) append(messages []byte, ends []uint32, now uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	stored := p.newBatchLocked(len(messages), len(ends))
	stored.data = append(stored.data, messages...)
	stored.ends = append(stored.ends, ends...)

	timestamp := max(now, p.lastTimestamp) // never backwards, so timestamp polls can binary search
	p.lastTimestamp = timestamp
	stored.firstOffset = p.nextOffset
	stored.timestamp = timestamp
	start := uint32(0)
	for i, end := range stored.ends {
		msg := stored.data[start:end]
		fillMissingID(wire08.MessageID(msg))
		wire08.StampMessage(msg, stored.firstOffset+uint64(i), timestamp)
		start = end
	}
	p.addBatchLocked(stored)
	return stored.firstOffset
}

// addBatchLocked appends a filled-in batch and accounts for it.
func (p *partition) addBatchLocked(stored batch) {
	p.batches = append(p.batches, stored)
	p.nextOffset += uint64(len(stored.ends))
	p.messages += uint64(len(stored.ends))
	p.sizeBytes += stored.messageBytes()
	p.enforceRetentionLocked()
}

// newBatchLocked returns an empty batch with room for size bytes and count
// messages, reusing a dropped batch's memory when one is big enough. Fresh
// memory is what bounds send throughput where page faults are slow.
func (p *partition) newBatchLocked(size, count int) batch {
	for i, b := range p.spare {
		if cap(b.data) >= size && cap(b.ends) >= count {
			p.spare = append(p.spare[:i], p.spare[i+1:]...)
			return batch{data: b.data[:0], ends: b.ends[:0]}
		}
	}
	return batch{data: make([]byte, 0, size), ends: make([]uint32, 0, count)}
}

// maxSpareBatches bounds the memory kept for reuse per partition.
const maxSpareBatches = 4

// enforceRetentionLocked drops the oldest batches while the partition holds
// more than retainBytes, always keeping the newest batch.
func (p *partition) enforceRetentionLocked() {
	for p.retainBytes > 0 && p.sizeBytes > p.retainBytes && len(p.batches) > 1 {
		old := p.batches[0]
		p.batches[0] = batch{}
		p.batches = p.batches[1:]
		p.sizeBytes -= old.messageBytes()
		p.messages -= uint64(len(old.ends))
		if len(p.spare) < maxSpareBatches {
			p.spare = append(p.spare, old)
		}
	}
}

// fillMissingID replaces an all-zero 16-byte id with a random UUID v4 in RFC
// 4122 byte order. math/rand/v2 suffices: ids must be unique, not secret.
func fillMissingID(id []byte) {
	if binary.LittleEndian.Uint64(id) != 0 || binary.LittleEndian.Uint64(id[8:]) != 0 {
		return
	}
	binary.LittleEndian.PutUint64(id, rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
}
