package v09

import (
	"context"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// groupOffsetRef names the group's offset on one partition.
func groupOffsetRef(g iggywire.GroupRef, partition uint32) iggywire.ConsumerOffsetRef {
	return iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.GroupID},
		StreamID: g.StreamID, TopicID: g.TopicID, Partition: iggywire.SomePartition(partition)}
}

// StoreOffset implements engine.Protocol: StoreConsumerOffset (121 -> op 161) with the ack
// byte. 0.9 fences group offset writes by ownership: a partition this member does not own is
// refused (status 20).
func (p *protocol) StoreOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32, offset uint64) error {
	_, err := c.call(ctx, wire09.OpStoreConsumerOffset, 0, func(b []byte) ([]byte, error) {
		return wire09.AppendStoreConsumerOffset(b, wire09.StoreConsumerOffset{ConsumerOffsetRef: groupOffsetRef(g, partition), Offset: offset, Ack: wire09.AckQuorum})
	})
	return err
}

// DeleteOffset implements engine.Protocol: DeleteConsumerOffset (122 -> op 162).
func (p *protocol) DeleteOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32) error {
	_, err := c.call(ctx, wire09.OpDeleteConsumerOffset, 0, func(b []byte) ([]byte, error) {
		return wire09.AppendDeleteConsumerOffset(b, wire09.DeleteConsumerOffset{ConsumerOffsetRef: groupOffsetRef(g, partition), Ack: wire09.AckQuorum})
	})
	return err
}

// GroupOffset implements engine.Protocol: GetConsumerOffset (120) for the group, which needs no
// membership.
func (p *protocol) GroupOffset(ctx context.Context, c *conn, g iggywire.GroupRef, partition uint32) (uint64, bool, error) {
	body, err := c.read(ctx, wire09.CmdGetConsumerOffset, func(b []byte) ([]byte, error) {
		return wire09.AppendGetConsumerOffset(b, groupOffsetRef(g, partition))
	})
	if err != nil {
		return 0, false, err
	}
	o, found, err := wire09.DecodeConsumerOffset(body)
	if err != nil {
		return 0, false, c.Malformed("offset reply: %v", err)
	}
	return o.StoredOffset, found, nil
}
