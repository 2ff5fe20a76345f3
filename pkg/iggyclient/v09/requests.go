package v09

import (
	"context"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// call builds one request in the scratch buffer (build appends the body after the header space)
// and exchanges it. The reply's payload is valid until the next exchange on c.
func (c *conn) call(ctx context.Context, op wire09.Operation, code wire09.Command, build func([]byte) ([]byte, error)) (reply, error) {
	frame, err := build(c.request())
	if err != nil {
		return reply{}, err
	}
	c.req = frame
	return c.exchange(ctx, frame, op, code, nil)
}

// read is a NonReplicated request with the command code.
func (c *conn) read(ctx context.Context, code wire09.Command, build func([]byte) ([]byte, error)) ([]byte, error) {
	rep, err := c.call(ctx, wire09.OpNonReplicated, code, build)
	return rep.payload, err
}

// StreamExists implements engine.Protocol: GetStream (200); an empty reply or 1009 is a missing
// stream.
func (p *protocol) StreamExists(ctx context.Context, c *conn, id iggywire.Identifier) (bool, error) {
	body, err := c.read(ctx, wire09.CmdGetStream, func(b []byte) ([]byte, error) { return iggywire.AppendIdentifier(b, id) })
	if isMissingStream(err) {
		return false, nil
	}
	return len(body) > 0, err
}

// CreateStream implements engine.Protocol: CreateStream (202 -> op 128).
func (p *protocol) CreateStream(ctx context.Context, c *conn, name []byte) error {
	_, err := c.call(ctx, wire09.OpCreateStream, 0, func(b []byte) ([]byte, error) {
		return wire09.AppendCreateStream(b, wire09.CreateStream{Name: name})
	})
	return err
}

// Topic implements engine.Protocol: GetTopic (300). A missing stream or topic is not found,
// whichever way the server says it (an empty body, or status 1009 / 2010).
func (p *protocol) Topic(ctx context.Context, c *conn, ref iggywire.TopicRef) ([]api.PartitionInfo, bool, error) {
	body, err := c.read(ctx, wire09.CmdGetTopic, func(b []byte) ([]byte, error) { return iggywire.AppendTopicRef(b, ref) })
	if err != nil {
		if isMissingStream(err) || isStatus(err, iggywire.StatusTopicIDNotFound, iggywire.StatusTopicNameNotFound) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return engine.Partitions(c.Link, body, wire09.DecodeTopic, wire09.DecodePartition, func(p wire09.Partition) api.PartitionInfo {
		return api.PartitionInfo{ID: p.ID, CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount}
	})
}

// CreateTopic implements engine.Protocol: CreateTopic (302 -> op 132). The retention travels in
// the options block (§10.3): message_expiry in µs and max_topic_size in bytes, left out when
// zero (the server's defaults).
func (p *protocol) CreateTopic(ctx context.Context, c *conn, stream iggywire.Identifier, name []byte, spec api.TopicSpec) error {
	_, err := c.call(ctx, wire09.OpCreateTopic, 0, func(b []byte) ([]byte, error) {
		opts, err := wire09.AppendTopicOptions(nil, wire09.TopicOptions{
			MessageExpiry: uint64(spec.MessageExpiry.Microseconds()), MaxTopicSize: spec.MaxTopicSize})
		if err != nil {
			return b, err
		}
		return wire09.AppendCreateTopic(b, wire09.CreateTopic{StreamID: stream, PartitionsCount: spec.Partitions, Name: name, Options: opts})
	})
	return err
}

// GroupExists implements engine.Protocol: GetConsumerGroup (600); an empty reply or 5000/5003
// is a missing group. A missing stream or topic is the caller's error.
func (p *protocol) GroupExists(ctx context.Context, c *conn, g iggywire.GroupRef) (bool, error) {
	body, err := c.read(ctx, wire09.CmdGetConsumerGroup, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	if isStatus(err, iggywire.StatusConsumerGroupIDNotFound, iggywire.StatusConsumerGroupNameNotFound) {
		return false, nil
	}
	return len(body) > 0, err
}

// CreateGroup implements engine.Protocol: CreateConsumerGroup (602 -> op 139).
func (p *protocol) CreateGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	_, err := c.call(ctx, wire09.OpCreateConsumerGroup, 0, func(b []byte) ([]byte, error) {
		return wire09.AppendCreateConsumerGroup(b, wire09.CreateConsumerGroup{TopicRef: g.TopicRef, Name: g.GroupID.Name})
	})
	return err
}

// JoinGroup implements engine.Protocol: JoinConsumerGroup (op 148).
func (p *protocol) JoinGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	return c.groupCall(ctx, wire09.OpJoinConsumerGroup, g)
}

// LeaveGroup implements engine.Protocol: LeaveConsumerGroup (op 149).
func (p *protocol) LeaveGroup(ctx context.Context, c *conn, g iggywire.GroupRef) error {
	return c.groupCall(ctx, wire09.OpLeaveConsumerGroup, g)
}

func (c *conn) groupCall(ctx context.Context, op wire09.Operation, g iggywire.GroupRef) error {
	_, err := c.call(ctx, op, 0, func(b []byte) ([]byte, error) { return iggywire.AppendGroupRef(b, g) })
	return err
}

func isStatus(err error, ss ...iggywire.Status) bool { return engine.IsStatus(err, ss...) }

func isMissingStream(err error) bool {
	return isStatus(err, iggywire.StatusStreamIDNotFound, iggywire.StatusStreamNameNotFound)
}
