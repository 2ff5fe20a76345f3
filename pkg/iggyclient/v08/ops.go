package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// Poll implements api.Client.
func (c *sdkClient) Poll(ctx context.Context, r api.PollRequest) (api.Batch, error) {
	streamID, topicID, groupID, err := c.groupIdentifiers(r.Stream, r.Topic, r.Group)
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll: %w", err)
	}
	consumer := iggcon.NewGroupConsumer(groupID)
	var (
		polled   *iggcon.PolledMessage
		reused   api.Batch
		raw      bool
		storeErr error
	)
	err = c.runInGroup(ctx, groupKey{r.Stream, r.Topic, r.Group}, func(sdk *tcp.IggyTcpClient) error {
		var err error
		if r.Reuse != nil {
			if reused, raw, err = pollInto(sdk, r.Reuse, streamID, topicID, consumer, r.Count, r.AutoCommit, r.StoreFirst, c.log.Debug); raw {
				storeErr = reused.StoreErr
				return err
			}
		}
		if s := r.StoreFirst; s != nil {
			storeErr = sdk.StoreConsumerOffset(consumer, streamID, topicID, s.Offset, &s.PartitionID)
			if isConnectionLoss(storeErr) || isGroupMembershipLost(storeErr) {
				return storeErr // retried whole: store, then poll
			}
		}
		polled, err = sdk.PollMessages(streamID, topicID, consumer, iggcon.NextPollingStrategy(), r.Count, r.AutoCommit, nil)
		return err
	})
	if err != nil {
		return api.Batch{}, fmt.Errorf("poll stream %q topic %q group %q: %w", r.Stream, r.Topic, r.Group, err)
	}
	var b api.Batch
	if raw {
		b = reused
	} else {
		b = c.toBatch(polled)
	}
	if s := r.StoreFirst; s != nil && storeErr != nil {
		b.StoreErr = storeOffsetError(classify(storeErr), r.Group, r.Stream, r.Topic, s.PartitionID, s.Offset)
	}
	return b, nil
}

// toBatch converts the SDK's reply. Payloads alias the reply buffer, which
// the SDK allocates afresh for every call, so the batch owns them.
func (c *sdkClient) toBatch(p *iggcon.PolledMessage) api.Batch {
	b := api.Batch{PartitionID: p.PartitionId, CurrentOffset: p.CurrentOffset}
	if len(p.Messages) == 0 {
		return b
	}
	b.Messages = make([]api.InMessage, len(p.Messages))
	// All headers of the batch share one backing slice; ranges are
	// assigned after parsing because appends may move it.
	type span struct{ msg, from, to int }
	var (
		headers []api.HeaderEntry
		spans   []span
	)
	for i := range p.Messages {
		m := &p.Messages[i]
		out := &b.Messages[i]
		out.ID = m.Header.Id
		out.Offset = m.Header.Offset
		out.Checksum = m.Header.Checksum
		out.Timestamp = m.Header.Timestamp
		out.OriginTimestamp = m.Header.OriginTimestamp
		out.Payload = m.Payload
		if len(m.UserHeaders) == 0 {
			continue
		}
		from := len(headers)
		parsed, err := api.ParseUserHeaders(headers, m.UserHeaders)
		if err != nil {
			// Upstream passes such a message on without headers.
			c.log.Debug("dropping unparsable user headers", "offset", m.Header.Offset, "error", err)
			continue
		}
		headers = parsed
		spans = append(spans, span{i, from, len(headers)})
	}
	for _, s := range spans {
		b.Messages[s.msg].Headers = headers[s.from:s.to:s.to]
	}
	return b
}

// StoreOffset implements api.Client.
func (c *sdkClient) StoreOffset(ctx context.Context, stream, topic, group string, partitionID uint32, offset uint64) error {
	streamID, topicID, groupID, err := c.groupIdentifiers(stream, topic, group)
	if err != nil {
		return fmt.Errorf("store offset: %w", err)
	}
	consumer := iggcon.NewGroupConsumer(groupID)
	err = c.runInGroup(ctx, groupKey{stream, topic, group}, func(sdk *tcp.IggyTcpClient) error {
		return sdk.StoreConsumerOffset(consumer, streamID, topicID, offset, &partitionID)
	})
	if err != nil {
		return storeOffsetError(err, group, stream, topic, partitionID, offset)
	}
	return nil
}

// storeOffsetError names the store that failed.
func storeOffsetError(err error, group, stream, topic string, partitionID uint32, offset uint64) error {
	if errors.Is(err, ierror.ErrError) {
		// The SDK reports codes it does not know as a bare "error"; here
		// that is nearly always 3022, a partition this member does not own.
		err = fmt.Errorf("%w (is the partition assigned to another group member?)", err)
	}
	return fmt.Errorf("store offset %d of group %q on stream %q topic %q partition %d: %w", offset, group, stream, topic, partitionID, err)
}

// runInGroup runs a group operation; when the server says this connection
// is not (or no longer) a member, it rejoins (re-creating a deleted group)
// once and retries.
func (c *sdkClient) runInGroup(ctx context.Context, g groupKey, fn func(*tcp.IggyTcpClient) error) error {
	err := c.run(ctx, fn)
	if err == nil || !isGroupMembershipLost(err) {
		return err
	}
	c.log.Info("not a member of the consumer group, joining again", "stream", g.stream, "topic", g.topic, "group", g.group)
	if err := c.EnsureConsumerGroup(ctx, g.stream, g.topic, g.group); err != nil {
		return err
	}
	return c.run(ctx, fn)
}

// EnsureConsumerGroup implements api.Client.
func (c *sdkClient) EnsureConsumerGroup(ctx context.Context, stream, topic, group string) error {
	if _, _, _, err := c.groupIdentifiers(stream, topic, group); err != nil {
		return fmt.Errorf("ensure consumer group: %w", err)
	}
	g := groupKey{stream, topic, group}
	// Registered before the call so that a reconnect in the middle of it
	// already rejoins.
	c.mu.Lock()
	_, known := c.groups[g]
	c.groups[g] = struct{}{}
	c.mu.Unlock()
	err := c.run(ctx, func(sdk *tcp.IggyTcpClient) error { return c.ensureGroup(sdk, g) })
	if err != nil {
		if !known {
			c.mu.Lock()
			delete(c.groups, g)
			c.mu.Unlock()
		}
		return fmt.Errorf("ensure consumer group %q on stream %q topic %q: %w", group, stream, topic, err)
	}
	return nil
}

// ensureGroup creates the group unless it exists, then joins it (joining
// twice is a no-op on the server).
func (c *sdkClient) ensureGroup(sdk *tcp.IggyTcpClient, g groupKey) error {
	streamID, topicID, groupID, err := c.groupIdentifiers(g.stream, g.topic, g.group)
	if err != nil {
		return err
	}
	if _, err := sdk.GetConsumerGroup(streamID, topicID, groupID); err != nil {
		if !errors.Is(err, ierror.ErrConsumerGroupIdNotFound) {
			return err
		}
		_, err := sdk.CreateConsumerGroup(streamID, topicID, g.group)
		if err != nil && !errors.Is(err, ierror.ErrConsumerGroupNameAlreadyExists) {
			return err
		}
	}
	return sdk.JoinConsumerGroup(streamID, topicID, groupID)
}

// topicIdentifiers are the SDK identifiers of stream and topic.
func (c *sdkClient) topicIdentifiers(stream, topic string) (streamID, topicID iggcon.Identifier, err error) {
	if streamID, err = c.identifier("stream", stream); err != nil {
		return
	}
	topicID, err = c.identifier("topic", topic)
	return
}

// groupIdentifiers resolves the three identifiers of a group operation.
// Groups are always addressed by name: the server assigns their ids.
func (c *sdkClient) groupIdentifiers(stream, topic, group string) (streamID, topicID, groupID iggcon.Identifier, err error) {
	if streamID, topicID, err = c.topicIdentifiers(stream, topic); err != nil {
		return
	}
	if v, ok := c.groupIDs.Load(group); ok {
		return streamID, topicID, v.(iggcon.Identifier), nil
	}
	if group == "" || len(group) > 255 {
		err = fmt.Errorf("consumer group %q: %w: a name must be 1..255 bytes", group, api.ErrInvalidIdentifier)
		return
	}
	if groupID, err = iggcon.NewIdentifier(group); err != nil {
		return
	}
	c.groupIDs.Store(group, groupID)
	return streamID, topicID, groupID, nil
}

// api.TopicInfo implements api.Client.
func (c *sdkClient) TopicInfo(ctx context.Context, stream, topic string) (api.TopicInfo, error) {
	details, err := c.topicDetails(ctx, stream, topic)
	if err != nil {
		return api.TopicInfo{}, fmt.Errorf("topic info of stream %q topic %q: %w", stream, topic, err)
	}
	return api.TopicInfo{Partitions: details.PartitionsCount}, nil
}

// topicDetails is the SDK's GetTopic.
func (c *sdkClient) topicDetails(ctx context.Context, stream, topic string) (*iggcon.TopicDetails, error) {
	streamID, topicID, err := c.topicIdentifiers(stream, topic)
	if err != nil {
		return nil, err
	}
	var details *iggcon.TopicDetails
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		var err error
		details, err = sdk.GetTopic(streamID, topicID)
		return err
	})
	return details, err
}

// EnsureTopic implements api.Client.
func (c *sdkClient) EnsureTopic(ctx context.Context, stream, topic string, partitions uint32) error {
	return c.EnsureTopicWith(ctx, stream, topic, api.TopicSpec{Partitions: partitions})
}

// EnsureTopicWith implements api.Client.
func (c *sdkClient) EnsureTopicWith(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if err := c.ensureTopic(ctx, stream, topic, spec); err != nil {
		return fmt.Errorf("ensure stream %q topic %q: %w", stream, topic, err)
	}
	return nil
}

func (c *sdkClient) ensureTopic(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	partitions := spec.Partitions
	if partitions == 0 || partitions > api.MaxPartitions {
		return fmt.Errorf("partition count %d is out of range 1..%d", partitions, api.MaxPartitions)
	}
	streamID, topicID, err := c.topicIdentifiers(stream, topic)
	if err != nil {
		return err
	}
	return c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		if _, err := sdk.GetStream(streamID); err != nil {
			if !errors.Is(err, ierror.ErrStreamIdNotFound) {
				return err
			}
			if streamID.Kind == iggcon.NumericId {
				return fmt.Errorf("stream %w: the server assigns ids, so only a stream given by name can be created", api.ErrNotFound)
			}
			if _, err := sdk.CreateStream(stream); err != nil && !errors.Is(err, ierror.ErrStreamNameAlreadyExists) {
				return err
			}
			c.log.Info("created stream", "stream", stream)
		}
		if _, err := sdk.GetTopic(streamID, topicID); err != nil {
			if !errors.Is(err, ierror.ErrTopicIdNotFound) {
				return err
			}
			if topicID.Kind == iggcon.NumericId {
				return fmt.Errorf("topic %w: the server assigns ids, so only a topic given by name can be created", api.ErrNotFound)
			}
			// Expiry and maximum size 0 mean the server's defaults.
			expiry := iggcon.Duration(spec.MessageExpiry.Microseconds())
			_, err := sdk.CreateTopic(streamID, topic, partitions, iggcon.CompressionAlgorithmNone, expiry, spec.MaxTopicSize, nil)
			if err != nil && !errors.Is(err, ierror.ErrTopicNameAlreadyExists) {
				return err
			}
			c.log.Info("created topic", "stream", stream, "topic", topic, "partitions", partitions)
		}
		return nil
	})
}

// sendBuffers recycles the SDK message slices of Send.
var sendBuffers = sync.Pool{New: func() any { return new([]iggcon.IggyMessage) }}

// Send implements api.Client.
func (c *sdkClient) Send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if err := c.send(ctx, stream, topic, p, msgs); err != nil {
		return fmt.Errorf("send %d messages to stream %q topic %q: %w", len(msgs), stream, topic, err)
	}
	return nil
}

func (c *sdkClient) send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no messages", api.ErrInvalidMessage)
	}
	streamID, topicID, err := c.topicIdentifiers(stream, topic)
	if err != nil {
		return err
	}
	partitioning, err := toSDKPartitioning(p)
	if err != nil {
		return err
	}
	now := uint64(time.Now().UnixMicro())
	if direct, err := c.sendDirect(ctx, streamID, topicID, partitioning, msgs, now); direct || err != nil {
		return err
	}
	return c.sendThroughSDK(ctx, streamID, topicID, partitioning, msgs, now)
}

// sendThroughSDK is Send by the SDK's own SendMessages, for an SDK whose socket or request lock
// sendDirect cannot find.
func (c *sdkClient) sendThroughSDK(ctx context.Context, streamID, topicID iggcon.Identifier, partitioning iggcon.Partitioning, msgs []api.OutMessage, now uint64) error {
	bufp := sendBuffers.Get().(*[]iggcon.IggyMessage)
	batch, err := sdkMessages((*bufp)[:0], msgs, now)
	defer func() {
		clear(batch) // drop references to the caller's payloads
		*bufp = batch[:0]
		sendBuffers.Put(bufp)
	}()
	if err != nil {
		return err
	}
	return c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		return sdk.SendMessages(streamID, topicID, partitioning, batch)
	})
}

// sdkMessages appends msgs to batch as the SDK's messages, stamped with origin timestamp now.
func sdkMessages(batch []iggcon.IggyMessage, msgs []api.OutMessage, now uint64) ([]iggcon.IggyMessage, error) {
	// One exact-size buffer holds every message's encoded headers, so the
	// per-message sub-slices stay valid while it is filled.
	headerBytes := 0
	for i := range msgs {
		for _, h := range msgs[i].Headers {
			headerBytes += 10 + len(h.Key) + len(h.Value)
		}
	}
	var headerBuf []byte
	if headerBytes > 0 {
		headerBuf = make([]byte, 0, headerBytes)
	}
	for i := range msgs {
		m := &msgs[i]
		if len(m.Payload) == 0 || len(m.Payload) > api.MaxPayloadSize {
			return batch, fmt.Errorf("%w: message %d: payload is %d bytes, want 1..%d", api.ErrInvalidMessage, i, len(m.Payload), api.MaxPayloadSize)
		}
		var userHeaders []byte
		if len(m.Headers) > 0 {
			from := len(headerBuf)
			var err error
			if headerBuf, err = api.AppendUserHeaders(headerBuf, m.Headers); err != nil {
				return batch, fmt.Errorf("message %d: %w", i, err)
			}
			userHeaders = headerBuf[from:len(headerBuf):len(headerBuf)]
		}
		batch = append(batch, iggcon.IggyMessage{
			Header: iggcon.MessageHeader{
				Id:               m.ID,
				OriginTimestamp:  now,
				PayloadLength:    uint32(len(m.Payload)),
				UserHeaderLength: uint32(len(userHeaders)),
			},
			Payload:     m.Payload,
			UserHeaders: userHeaders,
		})
	}
	return batch, nil
}

func toSDKPartitioning(p api.Partitioning) (iggcon.Partitioning, error) {
	switch p.Kind {
	case "", api.PartitionBalanced:
		return iggcon.None(), nil
	case api.PartitionByID:
		return iggcon.PartitionId(p.PartitionID), nil
	case api.PartitionByMessageKey:
		if len(p.Key) == 0 || len(p.Key) > 255 {
			return iggcon.Partitioning{}, fmt.Errorf("%w: messages key is %d bytes, want 1..255", api.ErrInvalidMessage, len(p.Key))
		}
		return iggcon.EntityIdBytes(p.Key)
	}
	return iggcon.Partitioning{}, fmt.Errorf("%w: unknown partitioning kind %q (want %q, %q or %q)",
		api.ErrInvalidMessage, p.Kind, api.PartitionBalanced, api.PartitionByID, api.PartitionByMessageKey)
}
