package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"context"
	"fmt"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// partitionReader is the standalone consumer of PollPartition. It never stores an offset, so
// its id only has to be a valid one.
var partitionReader = iggcon.DefaultConsumer()

// PollPartition implements api.Client.
func (c *sdkClient) PollPartition(ctx context.Context, r api.PartitionPoll) (api.Batch, error) {
	streamID, topicID, err := c.topicIdentifiers(r.Stream, r.Topic)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll partition: %w", err)
	}
	var strategy iggcon.PollingStrategy
	switch r.From {
	case api.PollFirst:
		strategy = iggcon.FirstPollingStrategy()
	case api.PollLast:
		strategy = iggcon.LastPollingStrategy()
	case api.PollOffset:
		strategy = iggcon.OffsetPollingStrategy(r.Offset)
	default:
		return api.Batch{}, fmt.Errorf("poll partition: unknown start %q (want %q, %q or %q)", r.From, api.PollFirst, api.PollLast, api.PollOffset)
	}
	partition := r.Partition
	var polled *iggcon.PolledMessage
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		var err error
		polled, err = sdk.PollMessages(streamID, topicID, partitionReader, strategy, r.Count, false, &partition)
		return err
	})
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q partition %d: %w", r.Stream, r.Topic, r.Partition, err)
	}
	return c.toBatch(polled), nil
}

// OwnsPartition implements api.Client. The server serves a group poll naming a partition only to
// the member it is assigned to (Iggy 0.8 answers everyone else an empty poll, as the dev broker
// does), so one message read from the first offset tells the owner.
func (c *sdkClient) OwnsPartition(ctx context.Context, stream, topic, group string, partition uint32) (bool, error) {
	streamID, topicID, groupID, err := c.groupIdentifiers(stream, topic, group)
	if err != nil {
		return false, fmt.Errorf("owns partition: %w", err)
	}
	consumer := iggcon.NewGroupConsumer(groupID)
	var polled *iggcon.PolledMessage
	err = c.runInGroup(ctx, groupKey{stream, topic, group}, func(sdk *tcp.IggyTcpClient) error {
		var err error
		polled, err = sdk.PollMessages(streamID, topicID, consumer, iggcon.FirstPollingStrategy(), 1, false, &partition)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("check partition %d of group %q on stream %q topic %q: %w", partition, group, stream, topic, err)
	}
	return len(polled.Messages) > 0, nil
}
