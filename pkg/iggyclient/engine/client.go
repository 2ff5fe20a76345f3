package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// The api.Client surface, the same for every protocol: identifiers, group membership and the
// errors' wording here, one protocol command (or exchange) per step.

// errTopicMissing is the ErrNotFound of a stream or topic a read answered as missing.
var errTopicMissing = fmt.Errorf("topic (or its stream) %w", api.ErrNotFound)

// inGroup runs a group operation; when the server says this connection is not (or no longer) a
// member, it joins (re-creating a deleted group) once and runs it again.
func (e *Engine[C]) inGroup(ctx context.Context, g *Group, fn func(cn C) error) error {
	return e.Do(ctx, func(cn C) error {
		err := fn(cn)
		if MembershipLost(err) && cn.Transport().broken == nil {
			if err := e.Join(ctx, cn, g); err != nil {
				return err
			}
			err = fn(cn)
		}
		return err
	})
}

// Poll implements api.Client.
func (e *Engine[C]) Poll(ctx context.Context, r api.PollRequest) (api.Batch, error) {
	g, err := e.groupOf(r.Stream, r.Topic, r.Group)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll: %w", err)
	}
	if hook, s := r.OnStored, r.StoreFirst; hook != nil && s != nil {
		told := false // a retried call stores again: the first outcome is the one heard
		r.OnStored = func(err error) {
			if !told {
				told = true
				if err != nil {
					err = storeOffsetError(err, g, s.PartitionID, s.Offset)
				}
				hook(err)
			}
		}
	} else {
		r.OnStored = nil
	}
	var b api.Batch
	err = e.inGroup(ctx, g, func(cn C) error {
		var err error
		b, err = e.proto.Poll(ctx, cn, g, r)
		return err
	})
	if err != nil {
		if r.At != nil {
			return api.Batch{}, fmt.Errorf("poll stream %q topic %q group %q partition %d: %w", r.Stream, r.Topic, r.Group, r.At.PartitionID, err)
		}
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q group %q: %w", r.Stream, r.Topic, r.Group, err)
	}
	if s := r.StoreFirst; s != nil && b.StoreErr != nil {
		b.StoreErr = storeOffsetError(b.StoreErr, g, s.PartitionID, s.Offset)
	}
	return b, nil
}

// StoreOffset implements api.Client.
func (e *Engine[C]) StoreOffset(ctx context.Context, stream, topic, group string, partitionID uint32, offset uint64) error {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return fmt.Errorf("store offset: %w", err)
	}
	err = e.inGroup(ctx, g, func(cn C) error { return e.proto.StoreOffset(ctx, cn, g.Ref, partitionID, offset) })
	if err != nil {
		return storeOffsetError(err, g, partitionID, offset)
	}
	return nil
}

// EnsureConsumerGroup implements api.Client.
func (e *Engine[C]) EnsureConsumerGroup(ctx context.Context, stream, topic, group string) error {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return fmt.Errorf("ensure consumer group: %w", err)
	}
	if err := e.Do(ctx, func(cn C) error { return e.join(ctx, cn, g) }); err != nil {
		return fmt.Errorf("ensure consumer group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return nil
}

// Assignment implements api.Client.
func (e *Engine[C]) Assignment(ctx context.Context, stream, topic, group string) (api.Assignment, error) {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return api.Assignment{}, fmt.Errorf("assignment: %w", err)
	}
	var a api.Assignment
	err = e.inGroup(ctx, g, func(cn C) error {
		if err := e.proto.Assign(ctx, cn, g); err != nil {
			return err
		}
		a = g.assignment()
		return nil
	})
	if err != nil {
		return api.Assignment{}, fmt.Errorf("assignment in group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return a, nil
}

// OwnsPartition implements api.Client.
func (e *Engine[C]) OwnsPartition(ctx context.Context, stream, topic, group string, partition uint32) (bool, error) {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return false, fmt.Errorf("owns partition: %w", err)
	}
	var owns bool
	err = e.inGroup(ctx, g, func(cn C) error {
		var err error
		owns, err = e.proto.Owns(ctx, cn, g, partition)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("check partition %d of group %q on stream %q topic %q: %w", partition, group, stream, topic, err)
	}
	return owns, nil
}

// PollPartition implements api.Client.
func (e *Engine[C]) PollPartition(ctx context.Context, r api.PartitionPoll) (api.Batch, error) {
	ref, err := e.topicRef(r.Stream, r.Topic)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll partition: %w", err)
	}
	switch r.From {
	case api.PollFirst, api.PollLast, api.PollOffset:
	default:
		return api.Batch{}, fmt.Errorf("poll partition: unknown start %q (want %q, %q or %q)", r.From, api.PollFirst, api.PollLast, api.PollOffset)
	}
	var b api.Batch
	err = e.Do(ctx, func(cn C) error {
		var err error
		b, err = e.proto.PollPartition(ctx, cn, ref, r)
		return err
	})
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q partition %d: %w", r.Stream, r.Topic, r.Partition, err)
	}
	return b, nil
}

// Strategy is the polling strategy of a partition poll's start.
func Strategy(r api.PartitionPoll) iggywire.PollingStrategy {
	switch r.From {
	case api.PollFirst:
		return iggywire.PollingStrategy{Kind: iggywire.PollFirst}
	case api.PollLast:
		return iggywire.PollingStrategy{Kind: iggywire.PollLast}
	}
	return iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: r.Offset}
}

// Send implements api.Client. The messages are encoded once, before the wire token is taken; a
// send whose reply is lost is sent again after the reconnect, so delivery is at least once.
func (e *Engine[C]) Send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if err := e.sendMessages(ctx, stream, topic, p, msgs); err != nil {
		return fmt.Errorf("send %d messages to stream %q topic %q: %w", len(msgs), stream, topic, err)
	}
	return nil
}

func (e *Engine[C]) sendMessages(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no messages", api.ErrInvalidMessage)
	}
	ref, err := e.topicRef(stream, topic)
	if err != nil {
		return err
	}
	pt, err := wirePartitioning(p)
	if err != nil {
		return err
	}
	buf := sendPool.Get().(*sendBuffers)
	wmsgs, err := buf.messages(msgs, uint64(time.Now().UnixMicro()))
	var frame []byte
	if err == nil {
		if frame, err = e.proto.EncodeSend(buf.frame[:0], ref, pt, wmsgs); err != nil {
			err = fmt.Errorf("%w: %w", api.ErrInvalidMessage, err)
		}
	}
	defer buf.release(wmsgs, frame)
	if err != nil {
		return err
	}
	return e.Do(ctx, func(cn C) error { return e.proto.SendEncoded(ctx, cn, frame) })
}

// TopicInfo implements api.Client.
func (e *Engine[C]) TopicInfo(ctx context.Context, stream, topic string) (api.TopicInfo, error) {
	parts, err := e.topicDetails(ctx, stream, topic)
	if err != nil {
		return api.TopicInfo{}, fmt.Errorf("topic info of stream %q topic %q: %w", stream, topic, err)
	}
	return api.TopicInfo{Partitions: uint32(len(parts))}, nil
}

// topicDetails reads a topic's partitions; a missing stream or topic is errTopicMissing.
func (e *Engine[C]) topicDetails(ctx context.Context, stream, topic string) ([]api.PartitionInfo, error) {
	ref, err := e.topicRef(stream, topic)
	if err != nil {
		return nil, err
	}
	var parts []api.PartitionInfo
	err = e.Do(ctx, func(cn C) error {
		var found bool
		var err error
		if parts, found, err = e.proto.Topic(ctx, cn, ref); err == nil && !found {
			err = errTopicMissing
		}
		return err
	})
	return parts, err
}

// EnsureTopic implements api.Client.
func (e *Engine[C]) EnsureTopic(ctx context.Context, stream, topic string, partitions uint32) error {
	return e.EnsureTopicWith(ctx, stream, topic, api.TopicSpec{Partitions: partitions})
}

// EnsureTopicWith implements api.Client.
func (e *Engine[C]) EnsureTopicWith(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if err := e.ensureTopic(ctx, stream, topic, spec); err != nil {
		return fmt.Errorf("ensure stream %q topic %q: %w", stream, topic, err)
	}
	return nil
}

func (e *Engine[C]) ensureTopic(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if spec.Partitions == 0 || spec.Partitions > api.MaxPartitions {
		return fmt.Errorf("partition count %d is out of range 1..%d", spec.Partitions, api.MaxPartitions)
	}
	if spec.MessageExpiry < 0 {
		return fmt.Errorf("message expiry %s is negative", spec.MessageExpiry)
	}
	ref, err := e.topicRef(stream, topic)
	if err != nil {
		return err
	}
	return e.Do(ctx, func(cn C) error {
		exists, err := e.proto.StreamExists(ctx, cn, ref.StreamID)
		if err != nil {
			return err
		}
		if !exists {
			if ref.StreamID.IsNumeric() {
				return fmt.Errorf("stream %w: the server assigns ids, so only a stream given by name can be created", api.ErrNotFound)
			}
			if err := e.proto.CreateStream(ctx, cn, ref.StreamID.Name); err != nil && !isStatus(err, iggywire.StatusStreamNameAlreadyExists) {
				return err
			}
			e.log.Info("created stream", "stream", stream)
		}
		_, found, err := e.proto.Topic(ctx, cn, ref)
		if err != nil || found {
			return err
		}
		if ref.TopicID.IsNumeric() {
			return fmt.Errorf("topic %w: the server assigns ids, so only a topic given by name can be created", api.ErrNotFound)
		}
		if err := e.proto.CreateTopic(ctx, cn, ref.StreamID, ref.TopicID.Name, spec); err != nil && !isStatus(err, iggywire.StatusTopicNameAlreadyExists) {
			return err
		}
		e.log.Info("created topic", "stream", stream, "topic", topic, "partitions", spec.Partitions)
		return nil
	})
}
