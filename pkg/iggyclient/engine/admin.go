package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// The api.Admin surface, the same for every protocol.

// StreamExists implements api.Admin.
func (e *Engine[C]) StreamExists(ctx context.Context, stream string) (bool, error) {
	id, err := e.identifier("stream", stream)
	if err != nil {
		return false, err
	}
	var exists bool
	err = e.Do(ctx, func(cn C) error {
		var err error
		exists, err = e.proto.StreamExists(ctx, cn, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up stream %q: %w", stream, err)
	}
	return exists, nil
}

// Partitions implements api.Admin.
func (e *Engine[C]) Partitions(ctx context.Context, stream, topic string) ([]api.PartitionInfo, error) {
	parts, err := e.topicDetails(ctx, stream, topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of stream %q topic %q: %w", stream, topic, err)
	}
	return parts, nil
}

// GroupOffset implements api.Admin: reading needs no membership. Nothing stored, or no such
// group, is ok = false.
func (e *Engine[C]) GroupOffset(ctx context.Context, stream, topic, group string, partitionID uint32) (uint64, bool, error) {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return 0, false, err
	}
	var (
		stored uint64
		found  bool
	)
	err = e.Do(ctx, func(cn C) error {
		var err error
		stored, found, err = e.proto.GroupOffset(ctx, cn, g.Ref, partitionID)
		if MembershipLost(err) || isStatus(err, iggywire.StatusConsumerOffsetNotFound) {
			stored, found, err = 0, false, nil
		}
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("offset of group %q on stream %q topic %q partition %d: %w", group, stream, topic, partitionID, err)
	}
	return stored, found, nil
}

// SetGroupOffsets implements api.Admin. The offsets are checked against the partitions first
// (an offset past the last message, or any offset on an empty partition, is
// api.ErrOffsetOutOfRange, as the server would refuse it with 4100).
func (e *Engine[C]) SetGroupOffsets(ctx context.Context, stream, topic, group string, offsets map[uint32]uint64) error {
	return e.asMember(ctx, stream, topic, group, func(cn C, g *Group, parts []api.PartitionInfo) error {
		for _, partition := range slices.Sorted(maps.Keys(offsets)) {
			offset := offsets[partition]
			i := slices.IndexFunc(parts, func(p api.PartitionInfo) bool { return p.ID == partition })
			if i < 0 {
				return fmt.Errorf("partition %d: %w", partition, api.ErrNotFound)
			}
			if p := parts[i]; p.Messages == 0 || offset > p.CurrentOffset {
				return fmt.Errorf("store offset %d on partition %d (last offset %d, %d messages): %w",
					offset, partition, p.CurrentOffset, p.Messages, api.ErrOffsetOutOfRange)
			}
			if err := e.proto.StoreOffset(ctx, cn, g.Ref, partition, offset); err != nil {
				return fmt.Errorf("store offset %d on partition %d: %w", offset, partition, memberError(err))
			}
		}
		return nil
	})
}

// DeleteGroupOffsets implements api.Admin; nothing stored (3021) is fine.
func (e *Engine[C]) DeleteGroupOffsets(ctx context.Context, stream, topic, group string, partitions []uint32) error {
	return e.asMember(ctx, stream, topic, group, func(cn C, g *Group, _ []api.PartitionInfo) error {
		for _, partition := range partitions {
			err := e.proto.DeleteOffset(ctx, cn, g.Ref, partition)
			if err != nil && !isStatus(err, iggywire.StatusConsumerOffsetNotFound) {
				return fmt.Errorf("delete the offset on partition %d: %w", partition, memberError(err))
			}
		}
		return nil
	})
}

// asMember runs fn as a member of the group: a server takes a group's offset writes only from a
// member that owns the partition. The group is created when missing, joined, and left again
// afterwards (leaving also happens when the connection closes).
func (e *Engine[C]) asMember(ctx context.Context, stream, topic, group string, fn func(cn C, g *Group, parts []api.PartitionInfo) error) error {
	g, err := e.groupOf(stream, topic, group)
	if err != nil {
		return err
	}
	err = e.Do(ctx, func(cn C) error {
		parts, found, err := e.proto.Topic(ctx, cn, g.Ref.TopicRef)
		if err != nil {
			return err
		}
		if !found {
			return errTopicMissing
		}
		if err := e.ensureGroup(ctx, cn, g); err != nil {
			return err
		}
		err = fn(cn, g, parts)
		if cn.Transport().broken != nil {
			return err
		}
		if leaveErr := e.proto.LeaveGroup(ctx, cn, g.Ref); err == nil && leaveErr != nil {
			err = fmt.Errorf("leave the group: %w", leaveErr)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("consumer group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return nil
}
