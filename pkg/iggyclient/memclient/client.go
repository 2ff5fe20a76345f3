package memclient

import (
	"context"
	"fmt"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Client is one connection to a Broker: an api.Client whose group memberships are its own and
// end with Close.
type Client struct {
	b        *Broker
	id       uint32
	lifetime *api.Lifetime
}

var _ api.Client = (*Client)(nil)

// ID is the connection's client id (what Request.Client names).
func (c *Client) ID() uint32 { return c.id }

// begin checks the call may run and lets Broker.OnRequest fail it.
func (c *Client) begin(ctx context.Context, r Request) error {
	if err := c.lifetime.Stopped(ctx); err != nil {
		return err
	}
	r.Client = c.id
	if hook := c.b.OnRequest; hook != nil {
		return hook(r)
	}
	return nil
}

// served tells Broker.OnServed about a request that changed the broker.
func (c *Client) served(r Request) {
	r.Client = c.id
	if hook := c.b.OnServed; hook != nil {
		hook(r)
	}
}

// Close leaves every group (they deal their partitions anew); later calls return ErrClosed.
func (c *Client) Close() error {
	c.lifetime.End()
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	for _, s := range c.b.streams {
		for _, t := range s.topics {
			for _, g := range t.groups {
				if i := slices.Index(g.members, c.id); i >= 0 {
					g.members = slices.Delete(g.members, i, i+1)
					g.deal(uint32(len(t.partitions)))
				}
			}
		}
	}
	return nil
}

// member resolves the group and makes the client a member (as the real client rejoins by itself).
func (c *Client) member(streamName, topicName, groupName string) (*topic, *group, error) {
	t, err := c.b.topicOf(streamName, topicName)
	if err != nil {
		return nil, nil, err
	}
	if groupName == "" || len(groupName) > api.MaxHeaderFieldLen {
		return nil, nil, fmt.Errorf("consumer group %q: %w", groupName, api.ErrInvalidIdentifier)
	}
	g := t.findGroup(groupName)
	if g == nil {
		g = &group{name: groupName, assigned: map[uint32][]uint32{}, cursor: map[uint32]int{}, offsets: map[uint32]uint64{}}
		t.groups = append(t.groups, g)
	}
	if !slices.Contains(g.members, c.id) {
		g.members = append(g.members, c.id)
		g.deal(uint32(len(t.partitions)))
	}
	return t, g, nil
}

// EnsureConsumerGroup implements api.Client.
func (c *Client) EnsureConsumerGroup(ctx context.Context, stream, topic, group string) error {
	if err := c.begin(ctx, Request{Kind: KindGroup, Stream: stream, Topic: topic, Group: group}); err != nil {
		return err
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	_, _, err := c.member(stream, topic, group)
	return err
}

// Assignment implements api.Client: the member's partitions, always known; the epoch is the
// group's generation, which every deal moves.
func (c *Client) Assignment(ctx context.Context, stream, topic, group string) (api.Assignment, error) {
	if err := c.begin(ctx, Request{Kind: KindGroup, Stream: stream, Topic: topic, Group: group}); err != nil {
		return api.Assignment{}, err
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	_, g, err := c.member(stream, topic, group)
	if err != nil {
		return api.Assignment{}, err
	}
	return api.Assignment{Known: true, Partitions: slices.Clone(g.assigned[c.id]), Epoch: g.generation}, nil
}

// OwnsPartition implements api.Client.
func (c *Client) OwnsPartition(ctx context.Context, stream, topic, group string, partitionID uint32) (bool, error) {
	if err := c.begin(ctx, Request{Kind: KindGroup, Stream: stream, Topic: topic, Group: group, Partition: partitionID}); err != nil {
		return false, err
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	_, g, err := c.member(stream, topic, group)
	if err != nil {
		return false, err
	}
	return slices.Contains(g.assigned[c.id], partitionID), nil
}

// StoreOffset implements api.Client. Only the member that owns the partition may store its
// offset (api.ErrPartitionOwned otherwise), and only up to the partition's last message.
func (c *Client) StoreOffset(ctx context.Context, stream, topic, group string, partitionID uint32, offset uint64) error {
	req := Request{Kind: KindStore, Stream: stream, Topic: topic, Group: group, Partition: partitionID, Offset: offset}
	if err := c.begin(ctx, req); err != nil {
		return err
	}
	c.b.mu.Lock()
	err := c.store(stream, topic, group, partitionID, offset)
	c.b.mu.Unlock()
	if err == nil {
		c.served(req)
	}
	return err
}

func (c *Client) store(stream, topic, group string, partitionID uint32, offset uint64) error {
	t, g, err := c.member(stream, topic, group)
	if err == nil && !slices.Contains(g.assigned[c.id], partitionID) {
		err = api.ErrPartitionOwned
	}
	if err == nil && offset >= uint64(len(t.partitions[partitionID].messages)) {
		err = api.ErrOffsetOutOfRange
	}
	if err != nil {
		return fmt.Errorf("store offset %d of group %q on partition %d: %w", offset, group, partitionID, err)
	}
	g.offsets[partitionID] = offset
	return nil
}

// Poll implements api.Client. Without At the member polls its partitions round robin from the
// group's stored offset + 1 ("next"), moving on from an empty one; a member without partitions
// gets an empty batch. With At it polls the partition named, NotOwned when it is not the
// member's. StoreFirst is stored first and heard by OnStored; Reuse is accepted and unused (a
// batch owns its memory).
func (c *Client) Poll(ctx context.Context, r api.PollRequest) (api.Batch, error) {
	req := Request{Kind: KindPoll, Stream: r.Stream, Topic: r.Topic, Group: r.Group}
	if r.At != nil {
		req.Partition, req.At = r.At.PartitionID, true
	}
	if err := c.begin(ctx, req); err != nil {
		return api.Batch{}, err
	}
	var storeErr error
	if s := r.StoreFirst; s != nil {
		store := Request{Kind: KindStore, Stream: r.Stream, Topic: r.Topic, Group: r.Group, Partition: s.PartitionID, Offset: s.Offset}
		if err := c.begin(ctx, store); err != nil {
			return api.Batch{}, err // a lost request: the store's outcome is unknown
		}
		c.b.mu.Lock()
		storeErr = c.store(r.Stream, r.Topic, r.Group, s.PartitionID, s.Offset)
		c.b.mu.Unlock()
		if storeErr == nil {
			c.served(store)
		}
		if r.OnStored != nil {
			r.OnStored(storeErr)
		}
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	t, g, err := c.member(r.Stream, r.Topic, r.Group)
	if err != nil {
		return api.Batch{}, err
	}
	own := g.assigned[c.id]
	read := func(p uint32, from uint64) api.Batch {
		msgs, current := t.partitions[p].read(from, r.Count)
		if r.AutoCommit && len(msgs) > 0 {
			g.offsets[p] = msgs[len(msgs)-1].Offset
		}
		return api.Batch{PartitionID: p, CurrentOffset: current, Messages: msgs, StoreErr: storeErr}
	}
	next := func(p uint32) uint64 {
		if o, ok := g.offsets[p]; ok {
			return o + 1
		}
		return 0
	}
	if at := r.At; at != nil {
		if !slices.Contains(own, at.PartitionID) {
			return api.Batch{PartitionID: at.PartitionID, NotOwned: true, StoreErr: storeErr}, nil
		}
		from := at.Offset
		if at.AfterStored {
			from = next(at.PartitionID)
		}
		return read(at.PartitionID, from), nil
	}
	b := api.Batch{StoreErr: storeErr}
	for range own {
		p := own[g.cursor[c.id]%len(own)]
		g.cursor[c.id]++
		if b = read(p, next(p)); len(b.Messages) > 0 {
			break
		}
	}
	return b, nil
}

// PollPartition implements api.Client: a standalone read that stores nothing.
func (c *Client) PollPartition(ctx context.Context, r api.PartitionPoll) (api.Batch, error) {
	if err := c.begin(ctx, Request{Kind: KindPartitions, Stream: r.Stream, Topic: r.Topic, Partition: r.Partition}); err != nil {
		return api.Batch{}, err
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	t, err := c.b.topicOf(r.Stream, r.Topic)
	if err != nil {
		return api.Batch{}, err
	}
	if int(r.Partition) >= len(t.partitions) {
		return api.Batch{}, fmt.Errorf("partition %d: %w", r.Partition, api.ErrNotFound)
	}
	p := t.partitions[r.Partition]
	var from uint64
	switch r.From {
	case api.PollFirst:
	case api.PollLast:
		from = uint64(len(p.messages)) - min(uint64(len(p.messages)), uint64(r.Count))
	case api.PollOffset:
		from = r.Offset
	default:
		return api.Batch{}, fmt.Errorf("poll partition: unknown start %q", r.From)
	}
	msgs, current := p.read(from, r.Count)
	return api.Batch{PartitionID: r.Partition, CurrentOffset: current, Messages: msgs}, nil
}

// Send implements api.Client: balanced sends go round robin over the partitions, keyed ones to
// XXH32(key) mod the partition count, as the server places them.
func (c *Client) Send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	req := Request{Kind: KindSend, Stream: stream, Topic: topic, Partition: p.PartitionID}
	if err := c.begin(ctx, req); err != nil {
		return err
	}
	if err := c.send(stream, topic, p, msgs); err != nil {
		return err
	}
	c.served(req)
	return nil
}

func (c *Client) send(stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no messages", api.ErrInvalidMessage)
	}
	for _, m := range msgs {
		if len(m.Payload) == 0 || len(m.Payload) > api.MaxPayloadSize {
			return fmt.Errorf("%w: payload of %d bytes", api.ErrInvalidMessage, len(m.Payload))
		}
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	t, err := c.b.topicOf(stream, topic)
	if err != nil {
		return err
	}
	if len(t.partitions) == 0 {
		return fmt.Errorf("topic %q has no partitions: %w", topic, api.ErrNotFound)
	}
	var to uint32
	switch p.Kind {
	case api.PartitionByID:
		to = p.PartitionID
	case api.PartitionByMessageKey:
		to = iggywire.XXH32(p.Key) % uint32(len(t.partitions))
	case api.PartitionBalanced, "":
		to = uint32(t.balanced % len(t.partitions))
		t.balanced++
	default:
		return fmt.Errorf("%w: partitioning %q", api.ErrInvalidMessage, p.Kind)
	}
	if int(to) >= len(t.partitions) {
		return fmt.Errorf("partition %d: %w", to, api.ErrNotFound)
	}
	c.b.appendLocked(t.partitions[to], msgs)
	return nil
}

// TopicInfo implements api.Client.
func (c *Client) TopicInfo(ctx context.Context, stream, topic string) (api.TopicInfo, error) {
	if err := c.begin(ctx, Request{Kind: KindTopic, Stream: stream, Topic: topic}); err != nil {
		return api.TopicInfo{}, err
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	t, err := c.b.topicOf(stream, topic)
	if err != nil {
		return api.TopicInfo{}, err
	}
	return api.TopicInfo{Partitions: uint32(len(t.partitions))}, nil
}

// EnsureTopic implements api.Client.
func (c *Client) EnsureTopic(ctx context.Context, stream, topic string, partitions uint32) error {
	return c.EnsureTopicWith(ctx, stream, topic, api.TopicSpec{Partitions: partitions})
}

// EnsureTopicWith implements api.Client (retention is not modelled). As on a server, only names
// can be created: a missing numeric id is ErrNotFound.
func (c *Client) EnsureTopicWith(ctx context.Context, stream, topic string, spec api.TopicSpec) error {
	if err := c.begin(ctx, Request{Kind: KindTopic, Stream: stream, Topic: topic}); err != nil {
		return err
	}
	if spec.Partitions == 0 || spec.Partitions > api.MaxPartitions {
		return fmt.Errorf("partition count %d is out of range 1..%d", spec.Partitions, api.MaxPartitions)
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if _, err := c.b.topicOf(stream, topic); err == nil {
		return nil
	}
	for _, name := range []string{stream, topic} {
		if _, numeric, err := api.ParseIdentifier(name); err != nil {
			return err
		} else if numeric {
			return fmt.Errorf("%q is an id: only a name can be created: %w", name, api.ErrNotFound)
		}
	}
	c.b.createTopic(stream, topic, spec.Partitions)
	return nil
}
