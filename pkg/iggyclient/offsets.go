package iggyclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// Admin reads and rewrites a consumer group's stored offsets, for an operator tool (the
// supervisor's offsets routes, the runner's --check) rather than a pump. It shares the
// connection handling of Client: Dial's reconnects, classified errors and context handling.
type Admin interface {
	// StreamExists reports whether the stream exists.
	StreamExists(ctx context.Context, stream string) (bool, error)
	// Partitions lists the topic's partitions in id order; ErrNotFound when the stream or topic
	// is missing.
	Partitions(ctx context.Context, stream, topic string) ([]PartitionInfo, error)
	// GroupOffset is the group's stored offset on one partition; ok is false when none is stored
	// (or the group does not exist yet). Reading needs no membership.
	GroupOffset(ctx context.Context, stream, topic, group string, partitionID uint32) (offset uint64, ok bool, err error)
	// SetGroupOffsets stores the given offset per partition for the group: it creates and joins
	// the group, stores each offset and leaves again. A partition another member of the group
	// owns gives ErrPartitionOwned.
	SetGroupOffsets(ctx context.Context, stream, topic, group string, offsets map[uint32]uint64) error
	// DeleteGroupOffsets removes the group's stored offsets on the given partitions (nothing
	// stored is fine), joining and leaving like SetGroupOffsets. A group that does not exist has
	// nothing stored.
	DeleteGroupOffsets(ctx context.Context, stream, topic, group string, partitions []uint32) error
	// Close ends the connection.
	Close() error
}

// PartitionInfo is one partition as the topic describes it.
type PartitionInfo struct {
	ID uint32
	// CurrentOffset is the offset of the partition's last message (0 also when it is empty).
	CurrentOffset uint64
	Messages      uint64
}

var (
	// ErrPartitionOwned: another member of the consumer group owns the partition, so its offset
	// cannot be written from here (the connector, or a replica of it, is still consuming).
	ErrPartitionOwned = errors.New("partition is assigned to another member of the consumer group")
	// ErrOffsetOutOfRange: the offset is past the partition's last message, or the partition is
	// empty.
	ErrOffsetOutOfRange = errors.New("offset is beyond the partition's last message")
)

// DialAdmin connects like Dial and returns the offset administration over that connection.
func DialAdmin(ctx context.Context, o Options) (Admin, error) {
	c, err := Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return c.(*sdkClient), nil
}

// StreamExists implements Admin.
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

// Partitions implements Admin.
func (c *sdkClient) Partitions(ctx context.Context, stream, topic string) ([]PartitionInfo, error) {
	details, err := c.topicDetails(ctx, stream, topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of stream %q topic %q: %w", stream, topic, err)
	}
	out := make([]PartitionInfo, len(details.Partitions))
	for i, p := range details.Partitions {
		out[i] = PartitionInfo{ID: p.Id, CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount}
	}
	return out, nil
}

// GroupOffset implements Admin.
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

// SetGroupOffsets implements Admin.
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

// DeleteGroupOffsets implements Admin.
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
		return fmt.Errorf("%w (%w)", ErrPartitionOwned, err)
	case errors.Is(err, ierror.ErrInvalidOffset):
		return fmt.Errorf("%w (%w)", ErrOffsetOutOfRange, err)
	}
	return err
}
