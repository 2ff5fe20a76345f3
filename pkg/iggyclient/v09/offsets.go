package v09

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// StoreOffset implements api.Client: StoreConsumerOffset (161) with the ack byte. 0.9 fences
// group offset writes by ownership: a partition this member does not own is refused (status 20).
// A connection that is not a member (any more) joins once and stores again.
func (c *client) StoreOffset(ctx context.Context, stream, topic, group string, partitionID uint32, offset uint64) error {
	ref, err := c.groupRef(stream, topic, group)
	if err != nil {
		return fmt.Errorf("store offset: %w", err)
	}
	k := groupKey{stream, topic, group}
	err = c.do(ctx, func(cn *conn) error {
		err := c.offsetRequest(ctx, cn, wire09.OpStoreConsumerOffset, ref, partitionID, offset)
		if isMembershipLost(err) && cn.broken == nil {
			c.log.Info("not a member of the consumer group, joining again", "stream", stream, "topic", topic, "group", group)
			if err := c.join(ctx, cn, k, ref); err != nil {
				return err
			}
			err = c.offsetRequest(ctx, cn, wire09.OpStoreConsumerOffset, ref, partitionID, offset)
		}
		return err
	})
	if err != nil {
		return storeOffsetError(err, group, stream, topic, partitionID, offset)
	}
	return nil
}

// storeOffsetError names the store that failed.
func storeOffsetError(err error, group, stream, topic string, partitionID uint32, offset uint64) error {
	switch {
	case isStatus(err, iggywire.StatusResourceNotFound), isStatus(err, iggywire.StatusConsumerGroupPartitionNotOwned):
		err = fmt.Errorf("%w (is the partition assigned to another group member?)", err)
	case isStatus(err, statusInvalidOffset):
		err = fmt.Errorf("%w (%w)", api.ErrOffsetOutOfRange, err)
	}
	return fmt.Errorf("store offset %d of group %q on stream %q topic %q partition %d: %w", offset, group, stream, topic, partitionID, classify(err))
}

// GroupOffset implements api.Admin: GetConsumerOffset (120) for the group, which needs no
// membership. Nothing stored, or no such group, is ok = false.
func (c *client) GroupOffset(ctx context.Context, stream, topic, group string, partitionID uint32) (uint64, bool, error) {
	ref, err := c.groupRef(stream, topic, group)
	if err != nil {
		return 0, false, err
	}
	var (
		stored uint64
		found  bool
	)
	err = c.do(ctx, func(cn *conn) error {
		body, err := c.read(ctx, cn, wire09.CmdGetConsumerOffset, func(b []byte) ([]byte, error) {
			return wire09.AppendGetConsumerOffset(b, iggywire.ConsumerOffsetRef{
				Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: ref.GroupID},
				StreamID: ref.StreamID, TopicID: ref.TopicID, Partition: iggywire.SomePartition(partitionID)})
		})
		if isMembershipLost(err) || isStatus(err, statusConsumerOffsetNotFound) {
			found = false
			return nil
		}
		if err != nil {
			return err
		}
		o, ok, err := wire09.DecodeConsumerOffset(body)
		if err != nil {
			return cn.breakWith(fmt.Errorf("%w: offset reply: %w", errProtocol, err))
		}
		stored, found = o.StoredOffset, ok
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("offset of group %q on stream %q topic %q partition %d: %w", group, stream, topic, partitionID, err)
	}
	return stored, found, nil
}

// SetGroupOffsets implements api.Admin. The offsets are checked against the partitions first
// (an offset past the last message, or any offset on an empty partition, is
// api.ErrOffsetOutOfRange, as the server would refuse it with 4100).
func (c *client) SetGroupOffsets(ctx context.Context, stream, topic, group string, offsets map[uint32]uint64) error {
	return c.asMember(ctx, stream, topic, group, func(cn *conn, ref iggywire.GroupRef, d topicDetails) error {
		for _, partition := range slices.Sorted(maps.Keys(offsets)) {
			offset := offsets[partition]
			i := slices.IndexFunc(d.partitions, func(p wire09.Partition) bool { return p.ID == partition })
			if i < 0 {
				return fmt.Errorf("partition %d: %w", partition, api.ErrNotFound)
			}
			if p := d.partitions[i]; p.MessagesCount == 0 || offset > p.CurrentOffset {
				return fmt.Errorf("store offset %d on partition %d (last offset %d, %d messages): %w",
					offset, partition, p.CurrentOffset, p.MessagesCount, api.ErrOffsetOutOfRange)
			}
			if err := c.offsetRequest(ctx, cn, wire09.OpStoreConsumerOffset, ref, partition, offset); err != nil {
				return fmt.Errorf("store offset %d on partition %d: %w", offset, partition, memberError(err))
			}
		}
		return nil
	})
}

// DeleteGroupOffsets implements api.Admin; nothing stored (3021) is fine.
func (c *client) DeleteGroupOffsets(ctx context.Context, stream, topic, group string, partitions []uint32) error {
	return c.asMember(ctx, stream, topic, group, func(cn *conn, ref iggywire.GroupRef, _ topicDetails) error {
		for _, partition := range partitions {
			err := c.offsetRequest(ctx, cn, wire09.OpDeleteConsumerOffset, ref, partition, 0)
			if err != nil && !isStatus(err, statusConsumerOffsetNotFound) {
				return fmt.Errorf("delete the offset on partition %d: %w", partition, memberError(err))
			}
		}
		return nil
	})
}

// asMember runs fn as a member of the group: 0.9 takes a group's offset writes only from a member
// that owns the partition (§10.4). The group is created when missing, joined, and left again
// afterwards (leaving also happens when the connection closes).
func (c *client) asMember(ctx context.Context, stream, topic, group string, fn func(cn *conn, ref iggywire.GroupRef, d topicDetails) error) error {
	ref, err := c.groupRef(stream, topic, group)
	if err != nil {
		return err
	}
	err = c.do(ctx, func(cn *conn) error {
		d, found, err := c.getTopic(ctx, cn, ref.TopicRef)
		if err != nil {
			return err
		}
		if !found {
			return errTopicMissing
		}
		if err := c.ensureGroup(ctx, cn, ref); err != nil {
			return err
		}
		err = fn(cn, ref, d)
		if cn.broken != nil {
			return err
		}
		if leaveErr := c.groupCall(ctx, cn, wire09.OpLeaveConsumerGroup, ref); err == nil && leaveErr != nil {
			err = fmt.Errorf("leave the group: %w", leaveErr)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("consumer group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return nil
}

// memberError names the refusals of an offset write: status 20 (or 5009) is a partition another
// member owns, 4100 an offset out of range.
func memberError(err error) error {
	switch {
	case isStatus(err, iggywire.StatusResourceNotFound), isStatus(err, iggywire.StatusConsumerGroupPartitionNotOwned):
		return fmt.Errorf("%w (%w)", api.ErrPartitionOwned, err)
	case isStatus(err, statusInvalidOffset):
		return fmt.Errorf("%w (%w)", api.ErrOffsetOutOfRange, err)
	}
	return err
}
