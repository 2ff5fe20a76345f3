package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"context"
	"errors"
	"fmt"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// DialAdmin connects like Dial and returns the offset administration over that connection.
func DialAdmin(ctx context.Context, o api.Options) (api.Admin, error) {
	c, err := Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return c.(*sdkClient), nil
}

// StreamExists implements api.Admin.
func (c *sdkClient) StreamExists(ctx context.Context, stream string) (bool, error) {
	streamID, err := c.identifier("stream", stream)
	if err != nil {
		return false, err
	}
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		_, err := sdk.GetStream(streamID)
		return err
	})
	if errors.Is(err, ierror.ErrStreamIdNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up stream %q: %w", stream, err)
	}
	return true, nil
}

// Partitions implements api.Admin.
func (c *sdkClient) Partitions(ctx context.Context, stream, topic string) ([]api.PartitionInfo, error) {
	details, err := c.topicDetails(ctx, stream, topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of stream %q topic %q: %w", stream, topic, err)
	}
	out := make([]api.PartitionInfo, len(details.Partitions))
	for i, p := range details.Partitions {
		out[i] = api.PartitionInfo{ID: p.Id, CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount}
	}
	return out, nil
}

// GroupOffset implements api.Admin.
func (c *sdkClient) GroupOffset(ctx context.Context, stream, topic, group string, partitionID uint32) (uint64, bool, error) {
	streamID, topicID, groupID, err := c.groupIdentifiers(stream, topic, group)
	if err != nil {
		return 0, false, err
	}
	var info *iggcon.ConsumerOffsetInfo
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		var err error
		info, err = sdk.GetConsumerOffset(iggcon.NewGroupConsumer(groupID), streamID, topicID, &partitionID)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("offset of group %q on stream %q topic %q partition %d: %w", group, stream, topic, partitionID, err)
	}
	if info == nil {
		return 0, false, nil // nothing stored (the server answers empty)
	}
	return info.StoredOffset, true, nil
}

// SetGroupOffsets implements api.Admin.
func (c *sdkClient) SetGroupOffsets(ctx context.Context, stream, topic, group string, offsets map[uint32]uint64) error {
	return c.asMember(ctx, stream, topic, group, func(sdk *tcp.IggyTcpClient, consumer iggcon.Consumer, streamID, topicID iggcon.Identifier) error {
		for partition, offset := range offsets {
			err := sdk.StoreConsumerOffset(consumer, streamID, topicID, offset, &partition)
			if err != nil {
				return fmt.Errorf("store offset %d on partition %d: %w", offset, partition, memberError(err))
			}
		}
		return nil
	})
}

// DeleteGroupOffsets implements api.Admin.
func (c *sdkClient) DeleteGroupOffsets(ctx context.Context, stream, topic, group string, partitions []uint32) error {
	return c.asMember(ctx, stream, topic, group, func(sdk *tcp.IggyTcpClient, consumer iggcon.Consumer, streamID, topicID iggcon.Identifier) error {
		for _, partition := range partitions {
			err := sdk.DeleteConsumerOffset(consumer, streamID, topicID, &partition)
			if err != nil && !errors.Is(err, ierror.ErrConsumerOffsetNotFound) {
				return fmt.Errorf("delete the offset on partition %d: %w", partition, memberError(err))
			}
		}
		return nil
	})
}

// asMember runs fn as a member of the group: offsets of a group can only be written by a member
// that owns the partition (iggy-protocol.md §6.5). The group is created when missing, joined, and
// left again afterwards (leaving also happens when the connection closes).
func (c *sdkClient) asMember(ctx context.Context, stream, topic, group string,
	fn func(sdk *tcp.IggyTcpClient, consumer iggcon.Consumer, streamID, topicID iggcon.Identifier) error) error {
	streamID, topicID, groupID, err := c.groupIdentifiers(stream, topic, group)
	if err != nil {
		return err
	}
	g := groupKey{stream, topic, group}
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		if err := c.ensureGroup(sdk, g); err != nil {
			return err
		}
		err := fn(sdk, iggcon.NewGroupConsumer(groupID), streamID, topicID)
		if leaveErr := sdk.LeaveConsumerGroup(streamID, topicID, groupID); err == nil && leaveErr != nil {
			err = fmt.Errorf("leave the group: %w", leaveErr)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("consumer group %q on stream %q topic %q: %w", group, stream, topic, err) // run classified it
	}
	return nil
}

// memberError names the refusals of an offset write. The SDK does not know code 3022 (a
// partition this member does not own) and reports it as a bare ErrError (iggy-protocol.md §9.2);
// as the only member of the group, that happens when another member holds the partition.
func memberError(err error) error {
	switch {
	case errors.Is(err, ierror.ErrError):
		return fmt.Errorf("%w (%w)", api.ErrPartitionOwned, err)
	case errors.Is(err, ierror.ErrInvalidOffset):
		return fmt.Errorf("%w (%w)", api.ErrOffsetOutOfRange, err)
	}
	return err
}
