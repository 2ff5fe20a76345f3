package v08

import (
	"context"
	"math"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// partitionReader is the standalone consumer of PollPartition (the SDK's default consumer). It
// never stores an offset, so its id only has to be a valid one.
var partitionReader = iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(0)}

// maxPollReply is the most a poll of count messages can be answered with.
func maxPollReply(count uint32) int { return int(min(wire08.MaxPollReply(count), math.MaxUint32)) }

// Poll implements engine.Protocol: PollMessages (100) with strategy "next" and no partition, so
// the server picks one of this member's partitions (round robin). With StoreFirst a
// StoreConsumerOffset goes first in the same write and both replies are read: the server serves a
// connection in order, so the poll sees the stored offset and a round trip is saved.
//
// With At the poll names its partition and starts where At says (strategy offset, or next on
// that partition); a reply that names no partition means the server did not serve it to this
// member (NotOwned). Every reply that names a partition tells which partition the server serves
// this member, which is how the connection learns which member it is (assign.go).
func (p *protocol) Poll(ctx context.Context, c *conn, g *engine.Group, r api.PollRequest) (api.Batch, error) {
	consumer := iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.Ref.GroupID}
	strategy := iggywire.PollingStrategy{Kind: iggywire.PollNext}
	var partition iggywire.OptionalPartition
	if at := r.At; at != nil {
		partition = iggywire.SomePartition(at.PartitionID)
		if !at.AfterStored {
			strategy = iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: at.Offset}
		}
	}
	frame := c.req[:0]
	if s := r.StoreFirst; s != nil {
		var start int
		frame, start = wire08.StartRequest(frame, wire08.CmdStoreConsumerOffset)
		frame, _ = wire08.AppendStoreConsumerOffset(frame, groupOffsetRef(g.Ref, s.PartitionID), s.Offset)
		frame = wire08.FinishRequest(frame, start)
	}
	frame, start := wire08.StartRequest(frame, wire08.CmdPollMessages)
	frame, err := wire08.AppendPollMessages(frame, wire08.PollMessages{
		ConsumerOffsetRef: iggywire.ConsumerOffsetRef{Consumer: consumer, StreamID: g.Ref.StreamID, TopicID: g.Ref.TopicID, Partition: partition},
		Strategy:          strategy, Count: r.Count, AutoCommit: r.AutoCommit})
	if err != nil {
		return api.Batch{}, err
	}
	c.req = wire08.FinishRequest(frame, start)
	if err := c.send(ctx, c.req, "poll"); err != nil {
		return api.Batch{}, err
	}
	var storeErr error
	if r.StoreFirst != nil {
		// The store's reply has no body; a status is its error, and the poll's reply follows
		// either way. A lost connection ends the call here: the stream is not read again.
		if _, storeErr = c.read("store offset", 0, nil); c.Broken() != nil {
			return api.Batch{}, storeErr
		}
		if r.OnStored != nil && !engine.MembershipLost(storeErr) {
			r.OnStored(storeErr)
		}
	}
	b, err := p.readPoll(c, r.Count, r.Reuse)
	b.StoreErr = storeErr
	if r.At != nil && engine.IsStatus(err, iggywire.StatusPartitionNotFound) { // deleted meanwhile
		c.notServed(g)
		return api.Batch{PartitionID: r.At.PartitionID, NotOwned: true, StoreErr: storeErr}, nil
	}
	if err == nil {
		resolved := b.PartitionID != 0 || b.CurrentOffset != 0 || len(b.Messages) > 0
		switch {
		case resolved:
			c.served(g, b.PartitionID)
		case r.At != nil: // (0, 0): the member does not own it (or it is partition 0 and empty)
			c.notServed(g)
			b.PartitionID, b.NotOwned = r.At.PartitionID, true
		}
	}
	return b, err
}

// readPoll reads a poll reply, bounded by what count messages can take, and decodes it into
// buf's memory when given (nothing allocated per message), else into memory the batch owns.
func (p *protocol) readPoll(c *conn, count uint32, buf *api.PollBuffers) (api.Batch, error) {
	var into *[]byte
	if buf != nil {
		into = &buf.Reply
	}
	reply, err := c.read("poll", maxPollReply(count), into)
	if err != nil {
		return api.Batch{}, err
	}
	it, err := wire08.NewPollIterator(engine.Owned(reply, buf))
	if err != nil {
		return api.Batch{}, c.Malformed("poll reply: %v", err)
	}
	c.it = it
	return engine.IntoBatch(c.Link, &c.it, &c.msg, buf, p.engine.Log().Debug)
}

// pollOne runs one PollMessages request without StoreFirst.
func (p *protocol) pollOne(ctx context.Context, c *conn, req wire08.PollMessages) (api.Batch, error) {
	frame, err := c.build(wire08.CmdPollMessages, func(b []byte) ([]byte, error) { return wire08.AppendPollMessages(b, req) })
	if err != nil {
		return api.Batch{}, err
	}
	if err := c.send(ctx, frame, "poll"); err != nil {
		return api.Batch{}, err
	}
	return p.readPoll(c, req.Count, nil)
}

// PollPartition implements engine.Protocol: the partition named, as a standalone consumer.
func (p *protocol) PollPartition(ctx context.Context, c *conn, t iggywire.TopicRef, r api.PartitionPoll) (api.Batch, error) {
	return p.pollOne(ctx, c, wire08.PollMessages{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{Consumer: partitionReader,
		StreamID: t.StreamID, TopicID: t.TopicID, Partition: iggywire.SomePartition(r.Partition)},
		Strategy: engine.Strategy(r), Count: r.Count})
}

// Owns implements engine.Protocol. The server serves a group poll naming a partition only to the
// member it is assigned to (everyone else gets an empty poll), so one message read from the first
// offset, without committing, tells the owner; the partition must hold a message.
func (p *protocol) Owns(ctx context.Context, c *conn, g *engine.Group, partition uint32) (bool, error) {
	b, err := p.pollOne(ctx, c, wire08.PollMessages{ConsumerOffsetRef: groupOffsetRef(g.Ref, partition),
		Strategy: iggywire.PollingStrategy{Kind: iggywire.PollFirst}, Count: 1})
	return len(b.Messages) > 0, err
}

// EncodeSend implements engine.Protocol: the whole SendMessages (101) frame. Zero ids are sent as
// they are: the 0.8 server gives such a message a UUID.
func (p *protocol) EncodeSend(buf []byte, t iggywire.TopicRef, pt iggywire.Partitioning, msgs []iggywire.Message) ([]byte, error) {
	frame, start := wire08.StartRequest(buf, wire08.CmdSendMessages)
	frame, err := wire08.AppendSendMessages(frame, wire08.SendMetadata{TopicRef: t, Partitioning: pt}, msgs)
	if err != nil {
		return buf, err
	}
	return wire08.FinishRequest(frame, start), nil
}

// SendEncoded implements engine.Protocol; the reply is empty.
func (p *protocol) SendEncoded(ctx context.Context, c *conn, frame []byte) error {
	if err := c.send(ctx, frame, "send"); err != nil {
		return err
	}
	_, err := c.read("send", 0, nil)
	return err
}
