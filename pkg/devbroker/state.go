package devbroker

import (
	"sort"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// The in-memory data model: streams hold topics, topics hold partitions and
// consumer groups, partitions hold message batches and consumer offsets.
//
// Locking, always taken in this order:
//   - store.mu guards the entity tree (streams, topics, partition lists, ids).
//   - store.groupMu guards consumer groups: their members, assignments and cursors.
//   - partition.mu guards one partition's messages and stored offsets.

// Defaults the real server resolves when CreateTopic sends 0.
const (
	neverExpire   = ^uint64(0)
	unlimitedSize = ^uint64(0)
	minTopicSize  = 1 << 30 // the default segment size: a smaller max_topic_size is rejected
	maxPartitions = 1000
)

type store struct {
	mu            sync.RWMutex
	streams       []*stream // index = stream id; nil = free slot
	freeStreamIDs []uint32  // freed ids, reused most recently freed first
	streamsByName map[string]*stream

	groupMu sync.Mutex

	clock       func() uint64 // µs since the Unix epoch; tests pin it
	retainBytes uint64        // per partition, see Config.RetainBytesPerPartition
}

type stream struct {
	id           uint32
	name         string
	createdAt    uint64
	topics       []*topic
	freeTopicIDs []uint32
	topicsByName map[string]*topic
}

type topic struct {
	id                uint32
	name              string
	createdAt         uint64
	compression       uint8
	messageExpiry     uint64
	maxTopicSize      uint64
	replicationFactor uint8
	options           []byte       // the 0.9 options block the creator set (nil over 0.8)
	partitions        []*partition // index = partition id

	balancedCounter uint64 // guarded by balancedMu; next partition for Balanced sends
	balancedMu      sync.Mutex

	groups       []*group // guarded by store.groupMu; index = group id
	freeGroupIDs []uint32
}

type group struct {
	id         uint32
	name       string
	generation uint64   // bumped by every change of membership or assignment (0.9 Sync reports it)
	partitions []uint32 // the partitions the group covers
	members    []*member
	polls      uint64 // polls served to its members, both protocols (GroupPolls)
}

type member struct {
	id         uint32
	clientID   uint32
	partitions []uint32 // including those pending revocation
	cursor     int      // round-robin position for polls without a partition id
	pending    []revocation
}

// revocation is a partition a member keeps until its commit catches up with what the group polled
// there (or the rebalancing timeout passes), then hands to the member that joined idle.
type revocation struct {
	partition uint32
	target    uint32 // the client id of the member that takes it
	since     time.Time
}

// offsetKey names whose offset is stored: a single consumer (kind 1) or a
// consumer group (kind 2). The two kinds do not share a namespace.
type offsetKey struct {
	kind uint8
	id   uint32
}

type partition struct {
	id        uint32
	createdAt uint64

	retainBytes uint64 // 0 keeps everything; otherwise the oldest batches go beyond this size

	mu            sync.RWMutex
	batches       []batch // retained batches in offset order; each holds one SendMessages request
	spare         []batch // dropped batches whose memory the next appends reuse
	nextOffset    uint64
	sizeBytes     uint64 // of the retained batches
	messages      uint64 // retained messages
	lastTimestamp uint64
	offsets       map[offsetKey]uint64
	lastPolled    map[uint32]uint64 // group id -> last offset a poll of that group returned
}

// releasedFor is partitionReleased for group g on topic t (callers hold store.mu).
func (t *topic) releasedFor(g *group) partitionReleased {
	return func(id uint32) bool {
		p := lookupSlot(t.partitions, id)
		return p == nil || p.released(g.id)
	}
}

// released reports whether group g has committed everything it polled from p (or never polled
// it): the condition under which Iggy 0.8 completes a partition's revocation.
func (p *partition) released(g uint32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	polled, ok := p.lastPolled[g]
	if !ok {
		return true
	}
	committed, ok := p.offsets[offsetKey{kind: consumerGroup, id: g}]
	return ok && committed >= polled
}

// batch is the messages of one SendMessages request as stored, in the format of
// the protocol that sent it, so each protocol serves its own sends unconverted:
//   - 0.8: the wire messages with id, offset, timestamp and checksum filled in;
//   - 0.9 (record): the stamped batch record, 256-byte header then 48-byte frames.
//
// ends[i] is where message i ends inside data.
type batch struct {
	firstOffset uint64
	timestamp   uint64
	record      bool
	data        []byte
	ends        []uint32
}

// messageBytes is the batch's size as 0.8 messages (64-byte headers), so stats
// read the same whichever protocol sent it.
func (b *batch) messageBytes() uint64 {
	if b.record {
		return uint64(len(b.data)) - recordHeaderSize + uint64(len(b.ends))*(wire08.MessageHeaderSize-frameHdrSize)
	}
	return uint64(len(b.data))
}

// messageStart is where message i starts inside data.
func (b *batch) messageStart(i int) uint32 {
	if i > 0 {
		return b.ends[i-1]
	}
	if b.record {
		return recordHeaderSize
	}
	return 0
}

func newStore() *store {
	return &store{streamsByName: map[string]*stream{}, clock: nowMicros}
}

func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }

// allocID hands out the lowest never-used id unless a freed one is waiting; freed
// ids are reused last-freed-first, as the real server's slab does.
func allocID[T any](slots *[]*T, free *[]uint32) uint32 {
	if n := len(*free); n > 0 {
		id := (*free)[n-1]
		*free = (*free)[:n-1]
		return id
	}
	*slots = append(*slots, nil)
	return uint32(len(*slots) - 1)
}

// freeSlot empties slot id for reuse and forgets its name.
func freeSlot[T any](slots []*T, free *[]uint32, byName map[string]*T, id uint32, name string) {
	slots[id] = nil
	*free = append(*free, id)
	delete(byName, name)
}

func lookupSlot[T any](slots []*T, id uint32) *T {
	if uint64(id) < uint64(len(slots)) {
		return slots[id]
	}
	return nil
}

// findStream resolves an identifier; callers hold store.mu.
func (s *store) findStream(id iggywire.Identifier) *stream {
	if id.IsNumeric() {
		return lookupSlot(s.streams, id.ID)
	}
	return s.streamsByName[string(id.Name)]
}

func (st *stream) findTopic(id iggywire.Identifier) *topic {
	if id.IsNumeric() {
		return lookupSlot(st.topics, id.ID)
	}
	return st.topicsByName[string(id.Name)]
}

// findGroup resolves a group; callers hold store.groupMu.
func (t *topic) findGroup(id iggywire.Identifier) *group {
	if id.IsNumeric() {
		return lookupSlot(t.groups, id.ID)
	}
	for _, g := range t.groups {
		if g != nil && g.name == string(id.Name) {
			return g
		}
	}
	return nil
}

// resolveTopic finds stream and topic, answering 1009 or 2010; callers hold store.mu.
func (s *store) resolveTopic(ref iggywire.TopicRef) (*stream, *topic, error) {
	streamID, topicID := ref.StreamID, ref.TopicID
	st := s.findStream(streamID)
	if st == nil {
		return nil, nil, iggywire.StatusStreamIDNotFound
	}
	t := st.findTopic(topicID)
	if t == nil {
		return st, nil, iggywire.StatusTopicIDNotFound
	}
	return st, t, nil
}

// addPartitions appends count partitions with the next ids; callers hold store.mu.
func (t *topic) addPartitions(count uint32, now, retainBytes uint64) {
	for range count {
		id := uint32(len(t.partitions))
		t.partitions = append(t.partitions, &partition{id: id, createdAt: now, retainBytes: retainBytes, offsets: map[offsetKey]uint64{}, lastPolled: map[uint32]uint64{}})
	}
}

// nextBalancedPartition picks the partition for a Balanced send: one step of a
// per-topic counter per request.
func (t *topic) nextBalancedPartition() uint32 {
	t.balancedMu.Lock()
	defer t.balancedMu.Unlock()
	id := uint32(t.balancedCounter % uint64(len(t.partitions)))
	t.balancedCounter++
	return id
}

// stats sums size and message count over a topic's partitions.
func (t *topic) stats() (sizeBytes, messages uint64) {
	for _, p := range t.partitions {
		size, count, _ := p.snapshot()
		sizeBytes += size
		messages += count
	}
	return sizeBytes, messages
}

func (st *stream) stats() (topics uint32, sizeBytes, messages uint64) {
	for _, t := range st.topics {
		if t == nil {
			continue
		}
		topics++
		size, count := t.stats()
		sizeBytes += size
		messages += count
	}
	return topics, sizeBytes, messages
}

// snapshot returns size, message count and current offset (the last message's
// offset, 0 when empty) under the partition's read lock.
func (p *partition) snapshot() (sizeBytes, messages, currentOffset uint64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.sizeBytes, p.messages, p.currentOffsetLocked()
}

func (p *partition) currentOffsetLocked() uint64 {
	if p.nextOffset == 0 {
		return 0
	}
	return p.nextOffset - 1
}

// batchIndexLocked returns the index of the batch holding offset.
func (p *partition) batchIndexLocked(offset uint64) int {
	return sort.Search(len(p.batches), func(i int) bool {
		b := &p.batches[i]
		return b.firstOffset+uint64(len(b.ends)) > offset
	})
}

// firstOffsetAtLocked returns the offset of the first message stored at or after
// timestamp, and false when there is none.
func (p *partition) firstOffsetAtLocked(timestamp uint64) (uint64, bool) {
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].timestamp >= timestamp })
	if i == len(p.batches) {
		return 0, false
	}
	return p.batches[i].firstOffset, true
}

// firstRetainedLocked is the oldest offset still held (nextOffset when none is).
func (p *partition) firstRetainedLocked() uint64 {
	if len(p.batches) == 0 {
		return p.nextOffset
	}
	return p.batches[0].firstOffset
}

// maxPollBytes bounds one poll reply (checked between batches), so a huge
// count cannot build a reply whose length overflows the u32 frame field.
var maxPollBytes = 64 << 20 // a variable so tests can shrink it

// readLocked appends to dst the stored bytes of the messages [from, to), which
// must be retained, and returns the offset after the last one copied (less
// than to when the reply grew past maxPollBytes). It copies: dropped batches'
// memory is reused, so stored bytes must not be read outside the lock.
func (p *partition) readLocked(from, to uint64, dst []byte) ([]byte, uint64) {
	for i := p.batchIndexLocked(from); i < len(p.batches) && from < to && len(dst) < maxPollBytes; i++ {
		b := &p.batches[i]
		first := from - b.firstOffset
		last := min(to-b.firstOffset, uint64(len(b.ends))) // exclusive, relative to the batch
		if b.record {
			dst = appendRecordAsMessages(dst, b, int(first), int(last))
		} else {
			dst = append(dst, b.data[b.messageStart(int(first)):b.ends[last-1]]...)
		}
		from = b.firstOffset + last
	}
	return dst, from
}
