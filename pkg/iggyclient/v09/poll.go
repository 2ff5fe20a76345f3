package v09

import (
	"context"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// partitionReader is the standalone consumer of PollPartition. It never stores an offset.
var partitionReader = iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(0)}

// Poll implements engine.Protocol over 0.9's group semantics (§10.6): the server wants the
// partition named, so the client asks for its assignment (Sync, cached assignmentTTL; Join when
// not a member), then polls its partitions round-robin with strategy Next, moving on from an
// empty one, until one has messages or each was polled once. A fenced answer (the resync
// sentinel, 5006, 5009) drops the cached assignment and syncs once more. A member with no
// partition gets an empty batch. StoreFirst costs a round trip of its own: 0.9 replies are
// matched one at a time.
func (p *protocol) Poll(ctx context.Context, c *conn, g *engine.Group, r api.PollRequest) (api.Batch, error) {
	var storeErr error
	if s := r.StoreFirst; s != nil {
		storeErr = p.StoreOffset(ctx, c, g.Ref, s.PartitionID, s.Offset)
		if c.Broken() != nil || engine.MembershipLost(storeErr) {
			return api.Batch{}, storeErr // retried whole: store, then poll
		}
		if r.OnStored != nil {
			r.OnStored(storeErr)
		}
	}
	var b api.Batch
	var err error
	if r.At != nil {
		b, err = p.pollAt(ctx, c, g, r)
	} else {
		b, err = p.pollGroup(ctx, c, g, r)
	}
	b.StoreErr = storeErr
	return b, err
}

// pollAt polls the partition r.At names. A partition the server does not let this member poll
// (it moved, or is being handed over: the resync sentinel or 5009) is an empty batch with
// NotOwned, and the cached assignment is dropped; a connection that is no longer a member (5006)
// is the error, which the engine cures by joining again.
func (p *protocol) pollAt(ctx context.Context, c *conn, g *engine.Group, r api.PollRequest) (api.Batch, error) {
	strategy := iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: r.At.Offset}
	if r.At.AfterStored {
		strategy = iggywire.PollingStrategy{Kind: iggywire.PollNext}
	}
	b, err := p.pollOnce(ctx, c, wire09.PollMessages{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.Ref.GroupID},
		StreamID: g.Ref.StreamID, TopicID: g.Ref.TopicID, Partition: iggywire.SomePartition(r.At.PartitionID),
		Strategy: strategy, Count: r.Count, AutoCommit: r.AutoCommit,
	}, r.Reuse)
	if isStatus(err, iggywire.StatusConsumerGroupPartitionNotOwned, iggywire.StatusPartitionNotFound) ||
		(err == nil && b.PartitionID == wire09.PartitionResync && len(b.Messages) == 0) {
		g.Forget() // moved, being handed over, or deleted
		return api.Batch{PartitionID: r.At.PartitionID, NotOwned: true}, nil
	}
	return b, err
}

func (p *protocol) pollGroup(ctx context.Context, c *conn, g *engine.Group, r api.PollRequest) (api.Batch, error) {
	req := wire09.PollMessages{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.Ref.GroupID},
		StreamID: g.Ref.StreamID, TopicID: g.Ref.TopicID,
		Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: r.Count, AutoCommit: r.AutoCommit,
	}
	var empty api.Batch
	for resync := 0; resync < 2; resync++ {
		if err := p.assignment(ctx, c, g, false); err != nil {
			return api.Batch{}, err
		}
		fenced := false
		for range g.Partitions {
			req.Partition = iggywire.SomePartition(g.Partitions[g.Next%len(g.Partitions)])
			g.Next++
			b, err := p.pollOnce(ctx, c, req, r.Reuse)
			// A partition deleted since the last Sync (3007) is as stale as one that moved.
			if isStatus(err, iggywire.StatusConsumerGroupMemberNotFound, iggywire.StatusConsumerGroupPartitionNotOwned, iggywire.StatusPartitionNotFound) ||
				(err == nil && b.PartitionID == wire09.PartitionResync && len(b.Messages) == 0) {
				fenced = true
				break
			}
			if err != nil || len(b.Messages) > 0 {
				return b, err
			}
			empty = b
		}
		if !fenced {
			return empty, nil
		}
		g.Forget()
	}
	return api.Batch{}, nil
}

// PollPartition implements engine.Protocol.
func (p *protocol) PollPartition(ctx context.Context, c *conn, t iggywire.TopicRef, r api.PartitionPoll) (api.Batch, error) {
	return p.pollOnce(ctx, c, wire09.PollMessages{Consumer: partitionReader, StreamID: t.StreamID, TopicID: t.TopicID,
		Partition: iggywire.SomePartition(r.Partition), Strategy: engine.Strategy(r), Count: r.Count}, nil)
}

// pollOnce runs one PollMessages (100) request and decodes the reply: into buf's memory when
// given (nothing allocated per message), else into memory the batch owns.
func (p *protocol) pollOnce(ctx context.Context, c *conn, req wire09.PollMessages, buf *api.PollBuffers) (api.Batch, error) {
	frame, err := wire09.AppendPollMessages(c.request(), req)
	if err != nil {
		return api.Batch{}, err
	}
	c.req = frame
	into := (*[]byte)(nil)
	if buf != nil {
		into = &buf.Reply
	}
	rep, err := c.exchange(ctx, frame, wire09.OpNonReplicated, wire09.CmdPollMessages, into)
	if err != nil {
		return api.Batch{}, err
	}
	it, err := wire09.NewPollIterator(engine.Owned(rep.payload, buf))
	if err != nil {
		return api.Batch{}, c.Malformed("poll reply: %v", err)
	}
	c.it = it
	return engine.IntoBatch(c.Link, &c.it, &c.msg, buf, p.engine.Log().Debug)
}
