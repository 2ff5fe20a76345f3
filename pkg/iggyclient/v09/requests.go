package v09

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// call builds one request in the scratch buffer (build appends the body after the header space)
// and exchanges it. The reply's payload is valid until the next exchange on cn.
func (c *client) call(ctx context.Context, cn *conn, op wire09.Operation, code wire09.Command, build func([]byte) ([]byte, error)) (reply, error) {
	frame, err := build(c.request())
	if err != nil {
		return reply{}, err
	}
	c.req = frame
	return cn.exchange(ctx, frame, op, code, nil)
}

// read is a NonReplicated request with the command code.
func (c *client) read(ctx context.Context, cn *conn, code wire09.Command, build func([]byte) ([]byte, error)) ([]byte, error) {
	rep, err := c.call(ctx, cn, wire09.OpNonReplicated, code, build)
	return rep.payload, err
}

// topicDetails is the GetTopic (300) reply decoded: found is false for an empty reply (§6.3).
type topicDetails struct {
	topic      wire09.Topic
	partitions []wire09.Partition
}

// getTopic reads a topic. A missing stream or topic is (false, nil), whichever way the server
// says it (empty body, or status 1009 / 2010).
func (c *client) getTopic(ctx context.Context, cn *conn, ref iggywire.TopicRef) (topicDetails, bool, error) {
	body, err := c.read(ctx, cn, wire09.CmdGetTopic, func(b []byte) ([]byte, error) { return iggywire.AppendTopicRef(b, ref) })
	if err != nil {
		if isMissingTopic(err) {
			return topicDetails{}, false, nil
		}
		return topicDetails{}, false, err
	}
	if len(body) == 0 {
		return topicDetails{}, false, nil
	}
	t, rest, err := wire09.DecodeTopic(body)
	if err != nil {
		return topicDetails{}, false, cn.breakWith(fmt.Errorf("%w: topic reply: %w", errProtocol, err))
	}
	d := topicDetails{topic: t}
	for len(rest) > 0 {
		var p wire09.Partition
		if p, rest, err = wire09.DecodePartition(rest); err != nil {
			return topicDetails{}, false, cn.breakWith(fmt.Errorf("%w: topic reply: %w", errProtocol, err))
		}
		d.partitions = append(d.partitions, p)
	}
	d.topic.Name, d.topic.Options, d.topic.DerivedOptions = nil, nil, nil // they alias the read buffer
	return d, true, nil
}

// streamExists reads a stream (GetStream, 200): an empty reply or 1009 is a missing stream.
func (c *client) streamExists(ctx context.Context, cn *conn, id iggywire.Identifier) (bool, error) {
	body, err := c.read(ctx, cn, wire09.CmdGetStream, func(b []byte) ([]byte, error) { return iggywire.AppendIdentifier(b, id) })
	if err != nil {
		if isMissingStream(err) {
			return false, nil
		}
		return false, err
	}
	return len(body) > 0, nil
}

// groupExists reads a consumer group (GetConsumerGroup, 600): an empty reply or 5000/5003 is a
// missing group. A missing stream or topic is the caller's error.
func (c *client) groupExists(ctx context.Context, cn *conn, g iggywire.GroupRef) (bool, error) {
	body, err := c.read(ctx, cn, wire09.CmdGetConsumerGroup, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	if err != nil {
		if isMembershipLost(err) {
			return false, nil
		}
		return false, err
	}
	return len(body) > 0, nil
}

// groupCall runs a metadata group request (Join 148, Leave 149, Delete 140) on g.
func (c *client) groupCall(ctx context.Context, cn *conn, op wire09.Operation, g iggywire.GroupRef) error {
	_, err := c.call(ctx, cn, op, 0, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	return err
}

// createGroup creates g (CreateConsumerGroup, 602 -> 139); an existing name is fine.
func (c *client) createGroup(ctx context.Context, cn *conn, g iggywire.GroupRef) error {
	_, err := c.call(ctx, cn, wire09.OpCreateConsumerGroup, 0, func(b []byte) ([]byte, error) {
		return wire09.AppendCreateConsumerGroup(b, wire09.CreateConsumerGroup{TopicRef: g.TopicRef, Name: g.GroupID.Name})
	})
	if isStatus(err, iggywire.StatusConsumerGroupNameAlreadyExists) {
		return nil
	}
	return err
}

// offsetRequest is a group offset write on one partition: a store (161) with the offset, or a
// delete (162). Both carry the ack byte (§10.4).
func (c *client) offsetRequest(ctx context.Context, cn *conn, op wire09.Operation, g iggywire.GroupRef, partition uint32, offset uint64) error {
	ref := iggywire.ConsumerOffsetRef{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g.GroupID},
		StreamID: g.StreamID, TopicID: g.TopicID, Partition: iggywire.SomePartition(partition),
	}
	_, err := c.call(ctx, cn, op, 0, func(b []byte) ([]byte, error) {
		if op == wire09.OpDeleteConsumerOffset {
			return wire09.AppendDeleteConsumerOffset(b, wire09.DeleteConsumerOffset{ConsumerOffsetRef: ref, Ack: wire09.AckQuorum})
		}
		return wire09.AppendStoreConsumerOffset(b, wire09.StoreConsumerOffset{ConsumerOffsetRef: ref, Offset: offset, Ack: wire09.AckQuorum})
	})
	return err
}

// sync reads this connection's assignment in the group (SyncConsumerGroup, 606). An empty reply
// (not a member) is StatusConsumerGroupMemberNotFound, as wire09 decodes it.
func (c *client) sync(ctx context.Context, cn *conn, g iggywire.GroupRef, dst []uint32) (uint64, []uint32, error) {
	body, err := c.read(ctx, cn, wire09.CmdSyncConsumerGroup, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	if err != nil {
		return 0, dst, err
	}
	a, err := wire09.DecodeGroupAssignment(body)
	if err != nil {
		if isStatus(err, iggywire.StatusConsumerGroupMemberNotFound) {
			return 0, dst, err
		}
		return 0, dst, cn.breakWith(fmt.Errorf("%w: sync reply: %w", errProtocol, err))
	}
	return a.Generation, a.Partitions.AppendTo(dst), nil
}

func isMissingStream(err error) bool {
	return isStatus(err, iggywire.StatusStreamIDNotFound) || isStatus(err, iggywire.StatusStreamNameNotFound)
}

func isMissingTopic(err error) bool {
	return isMissingStream(err) || isStatus(err, iggywire.StatusTopicIDNotFound) || isStatus(err, statusTopicNameNotFound)
}
