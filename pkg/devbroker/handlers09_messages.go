package devbroker

import (
	"encoding/binary"
	"errors"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 handlers of sends, polls and consumer offsets (docs/iggy-protocol-0.9.md §10.4, §10.5,
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
	where, base, err := c.data.send(iggywire.TopicRef{StreamID: md.StreamID, TopicID: md.TopicID}, md.Partitioning,
		func(p *partition, now uint64) uint64 { return p.appendRecord(record, h.Count, now) })
	if err != nil {
		return nil, iggywire.StatusResourceNotFound
	}
	c.out = wire09.AppendConfirmations(c.out[:0],
		wire09.Confirmation{StreamID: where[0], TopicID: where[1], PartitionID: where[2], BaseOffset: base})
	return c.out, 0
}

// emptyPoll is a poll reply with no messages: the 16-byte prefix alone.
func (c *connection) emptyPoll(partitionID uint32) ([]byte, iggywire.Status) {
	c.polled = iggywire.AppendPollPrefix(c.polled[:0], iggywire.PollPrefix{PartitionID: partitionID})
	return c.polled, 0
}

// poll09 answers a poll with stored records, whole or sliced. A group poll must name a
// partition its member owns and is not handing over; otherwise it gets the 0xFFFFFFFF resync
// sentinel (an empty reply for a poll without a partition, or of a missing group).
func (c *connection) poll09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodePollMessages(body)
	if err != nil {
		return nil, statusOf(err)
	}
	if req.Consumer.Kind == iggywire.ConsumerKindGroup && !req.Partition.Set {
		return c.emptyPoll(0)
	}
	out := append(c.polled[:0], make([]byte, iggywire.PollPrefixSize)...)
	r, out, err := c.data.poll(pollQuery{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{Consumer: req.Consumer, StreamID: req.StreamID,
		TopicID: req.TopicID, Partition: req.Partition}, client: c.sess.clientID, strategy: req.Strategy, count: req.Count,
		autoCommit: req.AutoCommit, read: (*partition).readRecordsLocked}, out)
	c.polled = out
	switch {
	case errors.Is(err, iggywire.StatusConsumerGroupIDNotFound):
		return c.emptyPoll(0)
	case errors.Is(err, iggywire.StatusConsumerGroupMemberNotFound), errors.Is(err, iggywire.StatusNotResolvedConsumer):
		return c.emptyPoll(wire09.PartitionResync)
	case err != nil:
		return nil, statusOf(err)
	}
	iggywire.AppendPollPrefix(out[:0], iggywire.PollPrefix{PartitionID: r.partitionID, CurrentOffset: r.current})
	binary.LittleEndian.PutUint32(out[12:], uint32(r.to-r.from))
	return out, 0
}

// offsetWrite09 answers an offset store or delete: a group write must name its partition, and
// whatever does not resolve is status 20; an offset out of range (4100) or nothing to delete
// (3021) keeps its status.
func (c *connection) offsetWrite09(ref iggywire.ConsumerOffsetRef, write func() error) ([]byte, iggywire.Status) {
	if ref.Consumer.Kind == iggywire.ConsumerKindGroup && !ref.Partition.Set {
		return nil, iggywire.StatusResourceNotFound
	}
	switch err := write(); {
	case err == nil:
		return c.framed(), 0
	case errors.Is(err, iggywire.StatusInvalidOffset), errors.Is(err, iggywire.StatusConsumerOffsetNotFound):
		return nil, statusOf(err)
	default:
		return nil, iggywire.StatusResourceNotFound
	}
}

func (c *connection) storeOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeStoreConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.offsetWrite09(req.ConsumerOffsetRef, func() error {
		return c.data.storeOffset(req.ConsumerOffsetRef, c.sess.clientID, req.Offset)
	})
}

func (c *connection) deleteOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeDeleteConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.offsetWrite09(req.ConsumerOffsetRef, func() error {
		return c.data.deleteOffset(req.ConsumerOffsetRef, c.sess.clientID)
	})
}

// getOffset09 answers the stored offset, or an empty body when there is none
// or the request does not resolve.
func (c *connection) getOffset09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeGetConsumerOffset(body)
	if err != nil {
		return nil, statusOf(err)
	}
	partitionID, current, stored, found, err := c.data.storedOffset(req)
	if err != nil || !found {
		return nil, 0
	}
	c.out = wire09.AppendConsumerOffset(c.out[:0], wire09.ConsumerOffset{PartitionID: partitionID, CurrentOffset: current, StoredOffset: stored})
	return c.out, 0
}
