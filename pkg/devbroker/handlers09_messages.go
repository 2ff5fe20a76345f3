package devbroker

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 handlers of sends, polls and consumer offsets (spec 0.9 §10.4, §10.5,
// §11). Partition-plane requests that do not resolve (stream, topic,
// partition, or a group offset write by a non-owner) are denied with status 20.

// send09 admits a SendMessages request as the server does: metadata, full
// batch verification (frame checksums 4027, batch checksum 4039), counts;
// then stamps and stores the record and confirms where it went.
func (c *connection) send09(body []byte) ([]byte, iggywire.Status) {
	md, record, err := wire09.DecodeSendMessages(body)
	if err != nil {
		return nil, statusOf(err)
	}
	h, err := wire09.VerifyBatch(record)
	if err != nil {
		return nil, statusOf(err)
	}
	if h.Count != md.MessagesCount {
		return nil, iggywire.StatusInvalidMessagesCount
	}
	return c.inTopic(iggywire.TopicRef{StreamID: md.StreamID, TopicID: md.TopicID}, denyUnresolved, func(st *stream, t *topic) ([]byte, iggywire.Status) {
		var partitionID uint32
		switch md.Partitioning.Kind {
		case iggywire.PartitionBalanced:
			if len(t.partitions) == 0 {
				return nil, iggywire.StatusResourceNotFound
			}
			partitionID = t.nextBalancedPartition()
		case iggywire.PartitionByID:
			partitionID = md.Partitioning.PartitionID
		case iggywire.PartitionByMessageKey:
			if len(t.partitions) == 0 {
				return nil, iggywire.StatusResourceNotFound
			}
			partitionID = iggywire.XXH32(md.Partitioning.Key) % uint32(len(t.partitions))
		}
		p := lookupSlot(t.partitions, partitionID)
		if p == nil {
			return nil, iggywire.StatusResourceNotFound
		}
		base := p.appendRecord(record, h.Count, c.data.clock())
		c.s09.out = wire09.AppendConfirmations(c.s09.out[:0],
			wire09.Confirmation{StreamID: st.id, TopicID: t.id, PartitionID: partitionID, BaseOffset: base})
		return c.s09.out, 0
	})
}

// emptyPoll is a poll reply with no messages: the 16-byte prefix alone.
func (c *connection) emptyPoll(partitionID uint32) ([]byte, iggywire.Status) {
	c.polled = iggywire.AppendPollPrefix(c.polled[:0], iggywire.PollPrefix{PartitionID: partitionID})
	return c.polled, 0
}

// poll09 answers a poll with stored records, whole or sliced. A group poll
// must name a partition its member owns (and is not handing over); otherwise
// it gets the 0xFFFFFFFF resync sentinel.
func (c *connection) poll09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodePollMessages(body)
	if err != nil {
		return nil, statusOf(err)
	}
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.findStream(toIdent(req.StreamID))
	if st == nil {
		return nil, iggywire.StatusStreamIDNotFound
	}
	t := st.findTopic(toIdent(req.TopicID))
	if t == nil {
		return nil, iggywire.StatusTopicIDNotFound
	}
	partitionID := req.Partition.ID
	var key offsetKey
	if req.Consumer.Kind == iggywire.ConsumerKindSingle {
		if !req.Partition.Set {
			partitionID = 0
		}
		key = singleKey(toIdent(req.Consumer.ID))
	} else {
		if !req.Partition.Set {
			return c.emptyPoll(0)
		}
		s.groupMu.Lock()
		g := t.findGroup(toIdent(req.Consumer.ID))
		if g == nil {
			s.groupMu.Unlock()
			return c.emptyPoll(0)
		}
		g.settleRevocations(t.releasedFor(g), 0)
		g.polls++
		m := g.member(c.sess.clientID)
		owned := m != nil && m.owns(partitionID) && !m.revoking(partitionID)
		s.groupMu.Unlock()
		if !owned {
			return c.emptyPoll(wire09.PartitionResync)
		}
		key = offsetKey{kind: consumerGroup, id: g.id}
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return nil, iggywire.StatusPartitionNotFound
	}
	p.mu.RLock()
	current := p.currentOffsetLocked()
	from, to := p.pollRangeLocked(pollRequest{strategy: req.Strategy.Kind, value: req.Strategy.Value, count: req.Count}, key)
	out := iggywire.AppendPollPrefix(c.polled[:0], iggywire.PollPrefix{PartitionID: partitionID, CurrentOffset: current})
	out, to = p.readRecordsLocked(from, to, out)
	p.mu.RUnlock()
	binary.LittleEndian.PutUint32(out[12:], uint32(to-from))
	p.recordPoll(key, from, to, req.AutoCommit)
	c.polled = out
	return out, 0
}

// offsetTarget resolves the partition and key of an offset request. For
// writes a group consumer must name a partition its member owns (one pending
// hand-over still counts). ok is false when it does not resolve.
func (c *connection) offsetTarget(t *topic, ref iggywire.ConsumerOffsetRef, write bool) (p *partition, key offsetKey, g *group, ok bool) {
	s := c.data
	partitionID := ref.Partition.ID
	if !ref.Partition.Set {
		if write && ref.Consumer.Kind == iggywire.ConsumerKindGroup {
			return nil, key, nil, false
		}
		partitionID = 0
	}
	if ref.Consumer.Kind == iggywire.ConsumerKindSingle {
		key = singleKey(toIdent(ref.Consumer.ID))
	} else {
		s.groupMu.Lock()
		g = t.findGroup(toIdent(ref.Consumer.ID))
		owner := g != nil
		if owner && write {
			m := g.member(c.sess.clientID)
			owner = m != nil && m.owns(partitionID)
		}
		s.groupMu.Unlock()
		if !owner {
			return nil, key, nil, false
		}
		key = offsetKey{kind: consumerGroup, id: g.id}
	}
	p = lookupSlot(t.partitions, partitionID)
	return p, key, g, p != nil
}

// offsetWrite resolves the target of an offset store or delete and runs fn
// with it; a target that does not resolve is status 20.
func (c *connection) offsetWrite(ref iggywire.ConsumerOffsetRef, fn func(t *topic, p *partition, key offsetKey, g *group) ([]byte, iggywire.Status)) ([]byte, iggywire.Status) {
	return c.inTopic(iggywire.TopicRef{StreamID: ref.StreamID, TopicID: ref.TopicID}, denyUnresolved, func(_ *stream, t *topic) ([]byte, iggywire.Status) {
		p, key, g, ok := c.offsetTarget(t, ref, true)
		if !ok {
			return denyUnresolved(nil)
		}
		return fn(t, p, key, g)
	})
}

// denyUnresolved is the partition plane's answer to what does not resolve.
func denyUnresolved(error) ([]byte, iggywire.Status) { return nil, iggywire.StatusResourceNotFound }

func (c *connection) storeOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeStoreConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.offsetWrite(req.ConsumerOffsetRef, func(t *topic, p *partition, key offsetKey, g *group) ([]byte, iggywire.Status) {
		p.mu.Lock()
		if p.nextOffset == 0 || req.Offset > p.currentOffsetLocked() {
			p.mu.Unlock()
			return nil, iggywire.Status(iggywire.StatusInvalidOffset)
		}
		p.offsets[key] = req.Offset
		p.mu.Unlock()
		if g != nil {
			// A commit may complete the hand-over of this partition.
			c.data.groupMu.Lock()
			g.settleRevocations(t.releasedFor(g), 0)
			c.data.groupMu.Unlock()
		}
		return c.framed(), 0
	})
}

func (c *connection) deleteOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeDeleteConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.offsetWrite(req.ConsumerOffsetRef, func(_ *topic, p *partition, key offsetKey, _ *group) ([]byte, iggywire.Status) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, has := p.offsets[key]; !has {
			return nil, iggywire.Status(iggywire.StatusConsumerOffsetNotFound)
		}
		delete(p.offsets, key)
		return c.framed(), 0
	})
}

// getOffset09 answers the stored offset, or an empty body when there is none
// or the request does not resolve.
func (c *connection) getOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeGetConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.inTopic(iggywire.TopicRef{StreamID: req.StreamID, TopicID: req.TopicID}, answerEmpty, func(_ *stream, t *topic) ([]byte, iggywire.Status) {
		p, key, _, ok := c.offsetTarget(t, req, false)
		if !ok {
			return answerEmpty(nil)
		}
		p.mu.RLock()
		defer p.mu.RUnlock()
		stored, has := p.offsets[key]
		if !has {
			return answerEmpty(nil)
		}
		c.s09.out = wire09.AppendConsumerOffset(c.s09.out[:0], wire09.ConsumerOffset{PartitionID: p.id, CurrentOffset: p.currentOffsetLocked(), StoredOffset: stored})
		return c.s09.out, 0
	})
}

// answerEmpty is a read's "not found": status 0 and an empty body.
func answerEmpty(error) ([]byte, iggywire.Status) { return nil, 0 }
