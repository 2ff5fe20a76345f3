package v09

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// errTopicMissing is the ErrNotFound of a stream or topic that GetTopic answered empty.
var errTopicMissing = fmt.Errorf("topic (or its stream) %w", api.ErrNotFound)

// TopicInfo implements api.Client.
func (c *client) TopicInfo(ctx context.Context, stream, topic string) (api.TopicInfo, error) {
	d, err := c.topicDetails(ctx, stream, topic)
	if err != nil {
		return api.TopicInfo{}, fmt.Errorf("topic info of stream %q topic %q: %w", stream, topic, err)
	}
	return api.TopicInfo{Partitions: d.topic.PartitionsCount}, nil
}

// Partitions implements api.Admin.
func (c *client) Partitions(ctx context.Context, stream, topic string) ([]api.PartitionInfo, error) {
	d, err := c.topicDetails(ctx, stream, topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of stream %q topic %q: %w", stream, topic, err)
	}
	return partitionInfos(d), nil
}

func partitionInfos(d topicDetails) []api.PartitionInfo {
	out := make([]api.PartitionInfo, len(d.partitions))
	for i, p := range d.partitions {
		out[i] = api.PartitionInfo{ID: p.ID, CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount}
	}
	return out
}

// topicDetails is GetTopic; a missing stream or topic is errTopicMissing.
func (c *client) topicDetails(ctx context.Context, stream, topic string) (topicDetails, error) {
	ref, err := c.topicRef(stream, topic)
	if err != nil {
		return topicDetails{}, err
	}
	var d topicDetails
	err = c.do(ctx, func(cn *conn) error {
		var found bool
		var err error
		if d, found, err = c.getTopic(ctx, cn, ref); err == nil && !found {
			err = errTopicMissing
		}
		return err
	})
	return d, err
}

// StreamExists implements api.Admin.
func (c *client) StreamExists(ctx context.Context, stream string) (bool, error) {
	id, err := c.identifier("stream", stream)
	if err != nil {
		return false, err
	}
	var exists bool
	err = c.do(ctx, func(cn *conn) error {
		var err error
		exists, err = c.streamExists(ctx, cn, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up stream %q: %w", stream, err)
	}
	return exists, nil
}

// EnsureTopic implements api.Client.
func (c *client) EnsureTopic(ctx context.Context, stream, topic string, partitions uint32) error {
	return c.EnsureTopicWith(ctx, stream, topic, api.TopicSpec{Partitions: partitions})
}

// EnsureTopicWith implements api.Client. The retention travels in the options block (§10.3):
// message_expiry in µs and max_topic_size in bytes, left out when zero (the server's defaults).
func (c *client) EnsureTopicWith(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if err := c.ensureTopic(ctx, stream, topic, spec); err != nil {
		return fmt.Errorf("ensure stream %q topic %q: %w", stream, topic, err)
	}
	return nil
}

func (c *client) ensureTopic(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if spec.Partitions == 0 || spec.Partitions > api.MaxPartitions {
		return fmt.Errorf("partition count %d is out of range 1..%d", spec.Partitions, api.MaxPartitions)
	}
	if spec.MessageExpiry < 0 {
		return fmt.Errorf("message expiry %s is negative", spec.MessageExpiry)
	}
	ref, err := c.topicRef(stream, topic)
	if err != nil {
		return err
	}
	return c.do(ctx, func(cn *conn) error {
		exists, err := c.streamExists(ctx, cn, ref.StreamID)
		if err != nil {
			return err
		}
		if !exists {
			if ref.StreamID.IsNumeric() {
				return fmt.Errorf("stream %w: the server assigns ids, so only a stream given by name can be created", api.ErrNotFound)
			}
			_, err := c.call(ctx, cn, wire09.OpCreateStream, 0, func(b []byte) ([]byte, error) {
				return wire09.AppendCreateStream(b, wire09.CreateStream{Name: ref.StreamID.Name})
			})
			if err != nil && !isStatus(err, iggywire.StatusStreamNameAlreadyExists) {
				return err
			}
			c.log.Info("created stream", "stream", stream)
		}
		_, found, err := c.getTopic(ctx, cn, ref)
		if err != nil || found {
			return err
		}
		if ref.TopicID.IsNumeric() {
			return fmt.Errorf("topic %w: the server assigns ids, so only a topic given by name can be created", api.ErrNotFound)
		}
		_, err = c.call(ctx, cn, wire09.OpCreateTopic, 0, func(b []byte) ([]byte, error) {
			opts, err := wire09.AppendTopicOptions(nil, wire09.TopicOptions{
				MessageExpiry: uint64(spec.MessageExpiry.Microseconds()), MaxTopicSize: spec.MaxTopicSize})
			if err != nil {
				return b, err
			}
			return wire09.AppendCreateTopic(b, wire09.CreateTopic{StreamID: ref.StreamID, PartitionsCount: spec.Partitions, Name: ref.TopicID.Name, Options: opts})
		})
		if err != nil && !isStatus(err, iggywire.StatusTopicNameAlreadyExists) {
			return err
		}
		c.log.Info("created topic", "stream", stream, "topic", topic, "partitions", spec.Partitions)
		return nil
	})
}
