package devbroker

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Consumer kinds and polling strategies on the wire.
const (
	consumerSingle = 1
	consumerGroup  = 2

	pollOffset    = 1
	pollTimestamp = 2
	pollFirst     = 3
	pollLast      = 4
	pollNext      = 5
)

// sendMessages stores one SendMessages request in the partition its
// partitioning picks (spec §6.4) and answers with an empty OK.
func (c *connection) sendMessages(payload []byte) error {
	req, err := decodeSend(payload, c.ends)
	if req.ends != nil {
		c.ends = req.ends
	}
	if err != nil {
		return err
	}
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(req.stream, req.topic)
	if err != nil {
		return err
	}
	var partitionID uint32
	switch req.partitioningKind {
	case partitionBalanced:
		if len(t.partitions) == 0 {
			return iggywire.StatusTopicIDNotFound // what server 0.8.0 answers for a topic without partitions
		}
		partitionID = t.nextBalancedPartition()
	case partitionByID:
		partitionID = binary.LittleEndian.Uint32(req.partitioningKey)
	case partitionByKey:
		if len(t.partitions) == 0 {
			return iggywire.StatusTopicIDNotFound
		}
		partitionID = iggywire.XXH32(req.partitioningKey) % uint32(len(t.partitions))
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return iggywire.StatusPartitionNotFound
	}
	p.append(req.messages, req.ends, s.clock())
	c.ok(nil)
	return nil
}

// consumerRef is a decoded `[kind u8][Id]` consumer.
type consumerRef struct {
	kind uint8
	id   ident
}

func (d *decoder) consumer() consumerRef {
	kind := d.u8()
	id := d.ident()
	if d.err == nil && kind != consumerSingle && kind != consumerGroup {
		d.fail(iggywire.StatusInvalidCommand)
	}
	return consumerRef{kind: kind, id: id}
}

// singleKey is the offset key of a single consumer: its numeric id, or XXH32 of its name.
func singleKey(id ident) offsetKey {
	if id.numeric {
		return offsetKey{kind: consumerSingle, id: id.id}
	}
	return offsetKey{kind: consumerSingle, id: iggywire.XXH32(id.name)}
}

type pollRequest struct {
	consumer      consumerRef
	stream, topic ident
	partition     uint32
	hasPartition  bool
	strategy      uint8
	value         uint64
	count         uint32
	autoCommit    bool
}

func decodePoll(payload []byte) (pollRequest, error) {
	d := decoder{buf: payload}
	var req pollRequest
	req.consumer = d.consumer()
	req.stream = d.ident()
	req.topic = d.ident()
	req.partition, req.hasPartition = d.optionalPartition()
	req.strategy = d.u8()
	req.value = d.u64()
	req.count = d.u32()
	req.autoCommit = d.u8() != 0
	if d.err == nil && (req.strategy < pollOffset || req.strategy > pollNext) {
		d.fail(iggywire.StatusInvalidCommand)
	}
	return req, d.err
}

// pollMessages answers `[u32 partition][u64 current offset][u32 count]` and the
// stored messages (spec §5.5, §6.5).
func (c *connection) pollMessages(payload []byte) error {
	req, err := decodePoll(payload)
	if err := c.requireLogin(err); err != nil {
		return err
	}
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(req.stream, req.topic)
	if err != nil {
		return err
	}
	partitionID := req.partition
	var key offsetKey
	if req.consumer.kind == consumerSingle {
		if !req.hasPartition {
			partitionID = 0
		}
		key = singleKey(req.consumer.id)
	} else {
		s.groupMu.Lock()
		g := t.findGroup(req.consumer.id)
		if g == nil {
			s.groupMu.Unlock()
			return iggywire.StatusConsumerGroupIDNotFound
		}
		g.settleRevocations(t.releasedFor(g), 0) // the timeout of pending hand-overs
		g.polls++
		m := g.member(c.sess.clientID)
		if m == nil {
			s.groupMu.Unlock()
			return iggywire.StatusConsumerGroupMemberNotFound
		}
		owned := true
		if req.hasPartition {
			owned = m.owns(req.partition)
		} else {
			partitionID, owned = m.nextPartition(true)
		}
		s.groupMu.Unlock()
		if !owned {
			c.writePoll(0, 0, 0, nil) // the real server's answer to a member without that partition
			return nil
		}
		key = offsetKey{kind: consumerGroup, id: g.id}
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return iggywire.StatusPartitionNotFound
	}

	p.mu.RLock()
	current := p.currentOffsetLocked()
	from, to := p.pollRangeLocked(req, key)
	c.polled, to = p.readLocked(from, to, c.polled[:0])
	p.mu.RUnlock()
	p.recordPoll(key, from, to, req.autoCommit)
	c.writePoll(partitionID, current, uint32(to-from), c.polled)
	if cap(c.polled) > keepBufferCap {
		c.polled = nil
	}
	return nil
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
func (p *partition) pollRangeLocked(req pollRequest, key offsetKey) (from, to uint64) {
	end := p.nextOffset
	if req.count == 0 || end == 0 {
		return 0, 0
	}
	switch req.strategy {
	case pollOffset:
		from = req.value
	case pollTimestamp:
		first, ok := p.firstOffsetAtLocked(req.value)
		if !ok {
			return 0, 0
		}
		from = first
	case pollFirst:
		from = 0
	case pollLast:
		from = end - min(uint64(req.count), end)
	case pollNext:
		if stored, ok := p.offsets[key]; ok {
			from = stored + 1
		}
	}
	// Messages dropped by retention are gone: reading resumes at the oldest kept.
	from = max(from, p.firstRetainedLocked())
	if from >= end {
		return 0, 0
	}
	return from, min(end, from+uint64(req.count))
}

// writePoll writes the poll reply: the 16-byte head and the stored messages.
func (c *connection) writePoll(partitionID uint32, current uint64, count uint32, messages []byte) {
	var head [24]byte
	binary.LittleEndian.PutUint32(head[4:8], uint32(16+len(messages)))
	binary.LittleEndian.PutUint32(head[8:12], partitionID)
	binary.LittleEndian.PutUint64(head[12:20], current)
	binary.LittleEndian.PutUint32(head[20:24], count)
	_, _ = c.w.Write(head[:])
	_, _ = c.w.Write(messages)
}

// consumerOffset handles Get (120), Store (121) and Delete (122) consumer offset:
// `[Consumer][Id stream][Id topic][opt partition]`, Store adds `[u64 offset]`.
func (c *connection) consumerOffset(code uint32, payload []byte) error {
	d := decoder{buf: payload}
	consumer := d.consumer()
	streamID := d.ident()
	topicID := d.ident()
	partitionID, hasPartition := d.optionalPartition()
	var offset uint64
	if code == codeStoreConsumerOffset {
		offset = d.u64()
	}
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	get := code == codeGetConsumerOffset
	// GetConsumerOffset swallows every resolution error into an empty OK.
	fail := func(status error) error {
		if get {
			c.ok(nil)
			return nil
		}
		return status
	}
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return fail(err)
	}
	var key offsetKey
	if consumer.kind == consumerSingle {
		if !hasPartition {
			partitionID = 0
		}
		key = singleKey(consumer.id)
	} else {
		s.groupMu.Lock()
		g := t.findGroup(consumer.id)
		if g == nil {
			s.groupMu.Unlock()
			return fail(iggywire.StatusConsumerGroupIDNotFound)
		}
		key = offsetKey{kind: consumerGroup, id: g.id}
		if get {
			if !hasPartition {
				partitionID = 0
			}
		} else {
			m := g.member(c.sess.clientID)
			if m == nil {
				s.groupMu.Unlock()
				return iggywire.StatusConsumerGroupMemberNotFound
			}
			if hasPartition {
				if !m.owns(partitionID) {
					s.groupMu.Unlock()
					return iggywire.StatusNotResolvedConsumer
				}
			} else {
				var ok bool
				// The real server uses the round-robin cursor here, which after a
				// poll points at the next partition, not the polled one.
				if partitionID, ok = m.nextPartition(false); !ok {
					s.groupMu.Unlock()
					return iggywire.StatusNotResolvedConsumer
				}
			}
		}
		s.groupMu.Unlock()
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return fail(iggywire.StatusPartitionNotFound)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	stored, has := p.offsets[key]
	switch code {
	case codeGetConsumerOffset:
		if !has {
			c.ok(nil)
			return nil
		}
		e := c.newReply()
		e.u32(partitionID)
		e.u64(p.currentOffsetLocked())
		e.u64(stored)
		c.ok(e.buf)
	case codeStoreConsumerOffset:
		if p.nextOffset == 0 || offset > p.currentOffsetLocked() {
			return iggywire.StatusInvalidOffset
		}
		p.offsets[key] = offset
		if key.kind == consumerGroup {
			// A commit may complete the revocation of this partition (lock order: groups, then
			// partitions, so the partition lock is let go first).
			p.mu.Unlock()
			s.groupMu.Lock()
			if g := t.findGroup(consumer.id); g != nil {
				g.settleRevocations(t.releasedFor(g), 0)
			}
			s.groupMu.Unlock()
			p.mu.Lock()
		}
		c.ok(nil)
	case codeDeleteConsumerOffset:
		if !has {
			return iggywire.StatusConsumerOffsetNotFound
		}
		delete(p.offsets, key)
		c.ok(nil)
	}
	return nil
}
