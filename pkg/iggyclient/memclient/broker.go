package memclient

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Broker is the in-memory server: streams of topics of partitions holding messages, consumer
// groups with members and stored offsets. Every Client dialled from it is one connection, and
// its own group membership. Safe for concurrent use.
type Broker struct {
	mu      sync.Mutex
	streams []*stream
	clients uint32 // client ids handed out so far
	ids     atomic.Uint64
	now     func() time.Time

	// OnRequest, when set, sees every request before it is served, with the broker unlocked; a
	// non-nil error fails the request with it, unserved (a test's injected fault). It must be
	// set before the first client is dialled.
	OnRequest func(Request) error
	// OnServed, when set, hears every store and send once the broker holds it (a test waits on
	// it for what it made). Set it before the first client is dialled, like OnRequest.
	OnServed func(Request)
}

// Request is what Broker.OnRequest sees: the client, the kind of request and what it names.
type Request struct {
	Client               uint32
	Kind                 Kind
	Stream, Topic, Group string
	Partition            uint32 // a store's, or the partition a poll names (At, PollPartition)
	Offset               uint64 // a store's
	At                   bool   // a poll that names its partition (PollRequest.At)
}

// Kind names a request.
type Kind string

// The kinds of Request.
const (
	KindPoll       Kind = "poll"
	KindStore      Kind = "store"
	KindSend       Kind = "send"
	KindTopic      Kind = "topic" // TopicInfo, EnsureTopic
	KindGroup      Kind = "group" // EnsureConsumerGroup, Assignment, OwnsPartition
	KindPartitions Kind = "partition poll"
)

type stream struct {
	id     uint32
	name   string
	topics []*topic
}

type topic struct {
	id         uint32
	name       string
	partitions []*partition // partition i has id i, as Iggy 0.8 numbers them
	balanced   int          // the next partition of a balanced send
	groups     []*group
}

type partition struct {
	messages []api.InMessage
}

// group is a consumer group: its members in join order, what each owns (partition i belongs to
// member i mod n: every join, leave or partition change deals them anew), and the stored offsets.
type group struct {
	name       string
	members    []uint32
	assigned   map[uint32][]uint32 // client -> partitions
	cursor     map[uint32]int      // client -> round-robin position
	offsets    map[uint32]uint64   // partition -> stored offset
	generation uint64
}

// NewBroker starts an empty broker.
func NewBroker() *Broker { return &Broker{now: time.Now} }

// Dial opens a connection: a Client with a client id of its own.
func (b *Broker) Dial() *Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clients++
	return &Client{b: b, id: b.clients, lifetime: api.NewLifetime()}
}

// CreateTopic makes the stream (when missing) and the topic with n partitions; an existing topic
// is left as it is.
func (b *Broker) CreateTopic(streamName, topicName string, n uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.createTopic(streamName, topicName, n)
}

func (b *Broker) createTopic(streamName, topicName string, n uint32) *topic {
	s := b.findStream(streamName)
	if s == nil {
		s = &stream{id: uint32(len(b.streams)) + 1, name: streamName}
		b.streams = append(b.streams, s)
	}
	t := s.findTopic(topicName)
	if t == nil {
		t = &topic{id: uint32(len(s.topics)) + 1, name: topicName}
		s.topics = append(s.topics, t)
		t.resize(n)
	}
	return t
}

// AddPartitions appends n partitions to a topic (as CreatePartitions does); its groups deal
// their partitions anew.
func (b *Broker) AddPartitions(streamName, topicName string, n uint32) error {
	return b.changePartitions(streamName, topicName, int(n))
}

// DeletePartitions removes the topic's last n partitions with their messages and stored offsets
// (as DeletePartitions does); its groups deal their partitions anew.
func (b *Broker) DeletePartitions(streamName, topicName string, n uint32) error {
	return b.changePartitions(streamName, topicName, -int(n))
}

func (b *Broker) changePartitions(streamName, topicName string, by int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.topicOf(streamName, topicName)
	if err != nil {
		return err
	}
	if len(t.partitions)+by < 0 {
		return fmt.Errorf("delete %d partitions of a topic with %d", -by, len(t.partitions))
	}
	t.resize(uint32(len(t.partitions) + by))
	return nil
}

// Append stores payloads in one partition and returns the first one's offset.
func (b *Broker) Append(streamName, topicName string, partitionID uint32, payloads ...[]byte) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.topicOf(streamName, topicName)
	if err != nil {
		return 0, err
	}
	if int(partitionID) >= len(t.partitions) {
		return 0, fmt.Errorf("partition %d: %w", partitionID, api.ErrNotFound)
	}
	msgs := make([]api.OutMessage, len(payloads))
	for i, p := range payloads {
		msgs[i].Payload = p
	}
	return b.appendLocked(t.partitions[partitionID], msgs), nil
}

// Messages is a copy of what a partition holds.
func (b *Broker) Messages(streamName, topicName string, partitionID uint32) ([]api.InMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.topicOf(streamName, topicName)
	if err != nil {
		return nil, err
	}
	if int(partitionID) >= len(t.partitions) {
		return nil, fmt.Errorf("partition %d: %w", partitionID, api.ErrNotFound)
	}
	return slices.Clone(t.partitions[partitionID].messages), nil
}

// Stored is the group's stored offset on a partition; ok is false when none is stored.
func (b *Broker) Stored(streamName, topicName, groupName string, partitionID uint32) (offset uint64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.topicOf(streamName, topicName)
	if err != nil {
		return 0, false
	}
	g := t.findGroup(groupName)
	if g == nil {
		return 0, false
	}
	offset, ok = g.offsets[partitionID]
	return offset, ok
}

// Members lists each member's partitions, in join order.
func (b *Broker) Members(streamName, topicName, groupName string) [][]uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.topicOf(streamName, topicName)
	if err != nil {
		return nil
	}
	g := t.findGroup(groupName)
	if g == nil {
		return nil
	}
	var out [][]uint32
	for _, m := range g.members {
		out = append(out, slices.Clone(g.assigned[m]))
	}
	return out
}

// --- lookups and rules, with b.mu held

func (b *Broker) findStream(name string) *stream {
	return find(b.streams, name, func(s *stream) (string, uint32) { return s.name, s.id })
}

func (s *stream) findTopic(name string) *topic {
	return find(s.topics, name, func(t *topic) (string, uint32) { return t.name, t.id })
}

// find looks an entity up by name, or by id when name is numeric (a stream or topic string).
func find[T any](items []T, name string, key func(T) (string, uint32)) T {
	for _, it := range items {
		if n, _ := key(it); n == name {
			return it
		}
	}
	if n, numeric, err := api.ParseIdentifier(name); err == nil && numeric {
		for _, it := range items {
			if _, id := key(it); id == n {
				return it
			}
		}
	}
	var none T
	return none
}

func (b *Broker) topicOf(streamName, topicName string) (*topic, error) {
	s := b.findStream(streamName)
	if s == nil {
		return nil, fmt.Errorf("stream %q %w", streamName, api.ErrNotFound)
	}
	t := s.findTopic(topicName)
	if t == nil {
		return nil, fmt.Errorf("topic %q of stream %q %w", topicName, streamName, api.ErrNotFound)
	}
	return t, nil
}

func (t *topic) findGroup(name string) *group {
	for _, g := range t.groups {
		if g.name == name {
			return g
		}
	}
	return nil
}

// resize makes the topic hold n partitions and deals every group anew. A removed partition's
// stored offsets go with it.
func (t *topic) resize(n uint32) {
	for uint32(len(t.partitions)) < n {
		t.partitions = append(t.partitions, &partition{})
	}
	t.partitions = t.partitions[:n]
	for _, g := range t.groups {
		for p := range g.offsets {
			if p >= n {
				delete(g.offsets, p)
			}
		}
		g.deal(n)
	}
}

// deal gives partition i to member i mod n.
func (g *group) deal(partitions uint32) {
	g.generation++
	clear(g.assigned)
	clear(g.cursor)
	for i := range partitions {
		if len(g.members) > 0 {
			m := g.members[int(i)%len(g.members)]
			g.assigned[m] = append(g.assigned[m], i)
		}
	}
}

// appendLocked stores msgs at the partition's end, stamping offsets, timestamps and missing ids.
func (b *Broker) appendLocked(p *partition, msgs []api.OutMessage) uint64 {
	first := uint64(len(p.messages))
	now := uint64(b.now().UnixMicro())
	for i, m := range msgs {
		in := api.InMessage{ID: m.ID, Offset: first + uint64(i), Timestamp: now, OriginTimestamp: now, Payload: slices.Clone(m.Payload)}
		if in.ID == ([16]byte{}) {
			binary.LittleEndian.PutUint64(in.ID[:8], b.ids.Add(1)) // distinct and non-zero, as the server's UUIDs
		}
		if len(m.Headers) > 0 {
			in.Headers = make([]api.HeaderEntry, len(m.Headers))
			for j, h := range m.Headers {
				kk := h.KeyKind
				if kk == 0 {
					kk = iggywire.KindString
				}
				in.Headers[j] = api.HeaderEntry{Kind: h.Kind, KeyKind: kk, Key: slices.Clone(h.Key), Value: slices.Clone(h.Value)}
			}
		}
		p.messages = append(p.messages, in)
	}
	return first
}

// read returns up to count messages of p from offset, copied, and the partition's current
// offset (its last message's, 0 when empty).
func (p *partition) read(from uint64, count uint32) ([]api.InMessage, uint64) {
	var current uint64
	if n := len(p.messages); n > 0 {
		current = uint64(n - 1)
	}
	if from >= uint64(len(p.messages)) {
		return nil, current
	}
	to := min(uint64(len(p.messages)), from+uint64(count))
	out := make([]api.InMessage, 0, to-from)
	for _, m := range p.messages[from:to] {
		m.Payload = slices.Clone(m.Payload)
		out = append(out, m)
	}
	return out, current
}
