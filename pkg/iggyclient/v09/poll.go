package v09

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// partitionReader is the standalone consumer of PollPartition. It never stores an offset.
var partitionReader = iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(0)}

// Poll implements api.Client over 0.9's group semantics (§10.6): the server wants the partition
// named, so the client asks for its assignment (Sync, cached assignmentTTL; Join when not a
// member), then polls its partitions round-robin with strategy Next, moving on from an empty
// one, until one has messages or each was polled once. A fenced answer (the resync sentinel,
// 5006, 5009) drops the cached assignment and syncs once more. A member with no partition gets an
// empty batch.
func (c *client) Poll(ctx context.Context, r api.PollRequest) (api.Batch, error) {
	ref, err := c.groupRef(r.Stream, r.Topic, r.Group)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll: %w", err)
	}
	k := groupKey{r.Stream, r.Topic, r.Group}
	var (
		batch    api.Batch
		storeErr error
	)
	err = c.do(ctx, func(cn *conn) error {
		storeErr = nil
		if s := r.StoreFirst; s != nil {
			storeErr = c.offsetRequest(ctx, cn, wire09.OpStoreConsumerOffset, ref, s.PartitionID, s.Offset)
			if cn.broken != nil || isConnectionLoss(storeErr) {
				return storeErr // retried whole: store, then poll
			}
		}
		var err error
		batch, err = c.pollGroup(ctx, cn, k, ref, r)
		return err
	})
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q group %q: %w", r.Stream, r.Topic, r.Group, err)
	}
	if s := r.StoreFirst; s != nil && storeErr != nil {
		batch.StoreErr = storeOffsetError(storeErr, r.Group, r.Stream, r.Topic, s.PartitionID, s.Offset)
	}
	return batch, nil
}

// pollGroup is one Poll on a live connection.
func (c *client) pollGroup(ctx context.Context, cn *conn, k groupKey, ref iggywire.GroupRef, r api.PollRequest) (api.Batch, error) {
	req := wire09.PollMessages{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: ref.GroupID},
		StreamID: ref.StreamID, TopicID: ref.TopicID,
		Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: r.Count, AutoCommit: r.AutoCommit,
	}
	var empty api.Batch
	for resync := 0; resync < 2; resync++ {
		st, err := c.assignment(ctx, cn, k, ref, false)
		if err != nil {
			return api.Batch{}, err
		}
		fenced := false
		for range st.partitions {
			req.Partition = iggywire.SomePartition(st.partitions[st.next%len(st.partitions)])
			st.next++
			b, err := c.pollOnce(ctx, cn, req, r.Reuse)
			if isStatus(err, iggywire.StatusConsumerGroupMemberNotFound) || isStatus(err, iggywire.StatusConsumerGroupPartitionNotOwned) ||
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
		st.forget()
	}
	return api.Batch{}, nil
}

// PollPartition implements api.Client.
func (c *client) PollPartition(ctx context.Context, r api.PartitionPoll) (api.Batch, error) {
	ref, err := c.topicRef(r.Stream, r.Topic)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll partition: %w", err)
	}
	req := wire09.PollMessages{Consumer: partitionReader, StreamID: ref.StreamID, TopicID: ref.TopicID,
		Partition: iggywire.SomePartition(r.Partition), Count: r.Count}
	switch r.From {
	case api.PollFirst:
		req.Strategy.Kind = iggywire.PollFirst
	case api.PollLast:
		req.Strategy.Kind = iggywire.PollLast
	case api.PollOffset:
		req.Strategy = iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: r.Offset}
	default:
		return api.Batch{}, fmt.Errorf("poll partition: unknown start %q (want %q, %q or %q)", r.From, api.PollFirst, api.PollLast, api.PollOffset)
	}
	var b api.Batch
	err = c.do(ctx, func(cn *conn) error {
		var err error
		b, err = c.pollOnce(ctx, cn, req, nil)
		return err
	})
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q partition %d: %w", r.Stream, r.Topic, r.Partition, err)
	}
	return b, nil
}

// pollOnce runs one PollMessages (100) request and decodes the reply: into buf's memory when
// given (nothing allocated per message), else into memory the batch owns.
func (c *client) pollOnce(ctx context.Context, cn *conn, req wire09.PollMessages, buf *api.PollBuffers) (api.Batch, error) {
	frame, err := wire09.AppendPollMessages(c.request(), req)
	if err != nil {
		return api.Batch{}, err
	}
	c.req = frame
	into := (*[]byte)(nil)
	if buf != nil {
		into = &buf.Reply
	}
	rep, err := cn.exchange(ctx, frame, wire09.OpNonReplicated, wire09.CmdPollMessages, into)
	if err != nil {
		return api.Batch{}, err
	}
	var b api.Batch
	if buf != nil {
		b, buf.Msgs, buf.Headers, err = decodePoll(rep.payload, buf.Msgs[:0], buf.Headers[:0], c.log.Debug)
	} else {
		body := append([]byte(nil), rep.payload...) // the batch owns its bytes; cn.in is reused
		b, _, _, err = decodePoll(body, nil, nil, c.log.Debug)
	}
	if err != nil {
		return api.Batch{}, cn.breakWith(fmt.Errorf("%w: poll reply: %w", errProtocol, err))
	}
	return b, nil
}
