package v08

import (
	"context"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// The entity and offset commands. Get commands answer an empty payload for
// what is missing.

// StreamExists implements engine.Protocol: GetStream (200).
func (p *protocol) StreamExists(ctx context.Context, c *conn, id iggywire.Identifier) (bool, error) {
	reply, err := c.call(ctx, "get stream", wire08.CmdGetStream, maxMetadataReply, func(b []byte) ([]byte, error) {
		return iggywire.AppendIdentifier(b, id)
	})
	return len(reply) > 0, err
}

// CreateStream implements engine.Protocol: CreateStream (202).
func (p *protocol) CreateStream(ctx context.Context, c *conn, name []byte) error {
	_, err := c.call(ctx, "create stream", wire08.CmdCreateStream, maxMetadataReply, func(b []byte) ([]byte, error) {
		return wire08.AppendCreateStream(b, name)
	})
	return err
}

// Topic implements engine.Protocol: GetTopic (300), the topic record then its partitions'.
func (p *protocol) Topic(ctx context.Context, c *conn, ref iggywire.TopicRef) ([]api.PartitionInfo, bool, error) {
	reply, err := c.call(ctx, "get topic", wire08.CmdGetTopic, maxMetadataReply, func(b []byte) ([]byte, error) {
		return iggywire.AppendTopicRef(b, ref)
	})
	if err != nil {
		return nil, false, err
	}
	return engine.Partitions(c.Link, reply, wire08.DecodeTopic, wire08.DecodePartition, func(p wire08.Partition) api.PartitionInfo {
		return api.PartitionInfo{ID: p.ID, CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount}
	})
}

// CreateTopic implements engine.Protocol: CreateTopic (302), uncompressed, expiry in µs and
// maximum size 0 meaning the server's defaults.
func (p *protocol) CreateTopic(ctx context.Context, c *conn, stream iggywire.Identifier, name []byte, spec api.TopicSpec) error {
	_, err := c.call(ctx, "create topic", wire08.CmdCreateTopic, maxMetadataReply, func(b []byte) ([]byte, error) {
		return wire08.AppendCreateTopic(b, wire08.CreateTopic{StreamID: stream, PartitionsCount: spec.Partitions,
			Compression: wire08.CompressionNone, MessageExpiry: uint64(spec.MessageExpiry.Microseconds()),
			MaxTopicSize: spec.MaxTopicSize, Name: name})
	})
	return err
}

// GroupExists implements engine.Protocol: GetConsumerGroup (600).
func (p *protocol) GroupExists(ctx context.Context, c *conn, g iggywire.GroupRef) (bool, error) {
	reply, err := c.call(ctx, "get consumer group", wire08.CmdGetConsumerGroup, maxMetadataReply, func(b []byte) ([]byte, error) {
		return iggywire.AppendGroupRef(b, g)
	})
	return len(reply) > 0, err
}

// CreateGroup implements engine.Protocol: CreateConsumerGroup (602), by name.
func (p *protocol) CreateGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	_, err := c.call(ctx, "create consumer group", wire08.CmdCreateConsumerGroup, maxMetadataReply, func(b []byte) ([]byte, error) {
		return wire08.AppendCreateConsumerGroup(b, g.TopicRef, g.GroupID.Name)
	})
	return err
}

// JoinGroup implements engine.Protocol: JoinConsumerGroup (604).
func (p *protocol) JoinGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	return c.groupCall(ctx, "join consumer group", wire08.CmdJoinConsumerGroup, g)
}

// LeaveGroup implements engine.Protocol: LeaveConsumerGroup (605).
func (p *protocol) LeaveGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	return c.groupCall(ctx, "leave consumer group", wire08.CmdLeaveConsumerGroup, g)
}

func (c *conn) groupCall(ctx context.Context, what string, code wire08.Command, g iggywire.GroupRef) error {
	_, err := c.call(ctx, what, code, 0, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	return err
}

// groupOffsetRef names the group's offset on one partition.
func groupOffsetRef(g iggywire.GroupRef, partition uint32) iggywire.ConsumerOffsetRef {
	return iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.GroupID},
		StreamID: g.StreamID, TopicID: g.TopicID, Partition: iggywire.SomePartition(partition)}
}

// StoreOffset implements engine.Protocol: StoreConsumerOffset (121) naming the partition.
func (p *protocol) StoreOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32, offset uint64) error {
	_, err := c.call(ctx, "store offset", wire08.CmdStoreConsumerOffset, 0, func(b []byte) ([]byte, error) {
		return wire08.AppendStoreConsumerOffset(b, groupOffsetRef(g, partition), offset)
	})
	return err
}

// DeleteOffset implements engine.Protocol: DeleteConsumerOffset (122).
func (p *protocol) DeleteOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32) error {
	_, err := c.call(ctx, "delete offset", wire08.CmdDeleteConsumerOffset, 0, func(b []byte) ([]byte, error) {
		return wire08.AppendConsumerOffsetRef(b, groupOffsetRef(g, partition))
	})
	return err
}

// GroupOffset implements engine.Protocol: GetConsumerOffset (120), empty when nothing is stored.
func (p *protocol) GroupOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32) (uint64, bool, error) {
	reply, err := c.call(ctx, "get offset", wire08.CmdGetConsumerOffset, wire08.ConsumerOffsetSize, func(b []byte) ([]byte, error) {
		return wire08.AppendConsumerOffsetRef(b, groupOffsetRef(g, partition))
	})
	var o wire08.ConsumerOffset
	found := false
	if err == nil {
		if o, found, err = wire08.DecodeConsumerOffset(reply); err != nil {
			err = c.Malformed("offset reply: %v", err)
		}
	}
	return o.StoredOffset, found, err
}
