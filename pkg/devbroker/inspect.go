package devbroker

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// StoredMessage is one message as the broker holds it, with the fields the
// server filled in (offset, timestamp, id, checksum).
type StoredMessage struct {
	Partition       uint32
	Offset          uint64
	ID              [16]byte
	Checksum        uint64
	Timestamp       uint64 // server append time, µs since the Unix epoch
	OriginTimestamp uint64 // as the client sent it
	Payload         []byte
	UserHeaders     []byte // the raw user-header bytes (docs/iggy-protocol-0.8.md §5.2), nil when none
}

// CreateStream creates a stream for test setup and returns its id.
func (s *Server) CreateStream(name string) (uint32, error) {
	if err := validName(name); err != nil {
		return 0, fmt.Errorf("create stream %q: %w", name, err)
	}
	st, err := s.currentData().createStream(name)
	if err != nil {
		return 0, fmt.Errorf("create stream %q: %w", name, err)
	}
	return st.id, nil
}

// CreateTopic creates a topic with the given number of partitions in the named
// stream, for test setup, and returns its id.
func (s *Server) CreateTopic(streamName, name string, partitions uint32) (uint32, error) {
	if err := validName(name); err != nil {
		return 0, fmt.Errorf("create topic %q in stream %q: %w", name, streamName, err)
	}
	t, err := s.currentData().createTopic(iggywire.NamedID(streamName), name, topicSettings{partitions: partitions, compression: 1}, nil)
	if errors.Is(err, iggywire.StatusStreamIDNotFound) {
		err = ErrStreamNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("create topic %q in stream %q: %w", name, streamName, err)
	}
	return t.id, nil
}

// GroupPolls is how many polls the broker has served to the members of a consumer group (over
// either protocol, empty ones included): tests count an idle consumer's polls with it.
func (s *Server) GroupPolls(streamName, topicName, groupName string) (uint64, error) {
	data := s.currentData()
	data.mu.RLock()
	defer data.mu.RUnlock()
	st := data.streamsByName[streamName]
	if st == nil {
		return 0, fmt.Errorf("polls of group %q on %s/%s: %w", groupName, streamName, topicName, ErrStreamNotFound)
	}
	t := st.topicsByName[topicName]
	if t == nil {
		return 0, fmt.Errorf("polls of group %q on %s/%s: %w", groupName, streamName, topicName, ErrTopicNotFound)
	}
	data.groupMu.Lock()
	defer data.groupMu.Unlock()
	g := t.findGroup(iggywire.NamedID(groupName))
	if g == nil {
		return 0, fmt.Errorf("polls of group %q on %s/%s: %w", groupName, streamName, topicName, ErrGroupNotFound)
	}
	return g.polls, nil
}

// LastPolled is the last offset a poll of the consumer group returned from a partition (what a
// member fetched, stored or not); ok is false when no poll of the group returned one there. A
// test sees with it that a consumer fetched ahead of what it stored.
func (s *Server) LastPolled(streamName, topicName, groupName string, partitionID uint32) (offset uint64, ok bool, err error) {
	data := s.currentData()
	data.mu.RLock()
	defer data.mu.RUnlock()
	st := data.streamsByName[streamName]
	if st == nil {
		return 0, false, fmt.Errorf("last polled by group %q on %s/%s: %w", groupName, streamName, topicName, ErrStreamNotFound)
	}
	t := st.topicsByName[topicName]
	if t == nil {
		return 0, false, fmt.Errorf("last polled by group %q on %s/%s: %w", groupName, streamName, topicName, ErrTopicNotFound)
	}
	data.groupMu.Lock()
	g := t.findGroup(iggywire.NamedID(groupName))
	data.groupMu.Unlock()
	if g == nil {
		return 0, false, fmt.Errorf("last polled by group %q on %s/%s: %w", groupName, streamName, topicName, ErrGroupNotFound)
	}
	p := lookupSlot(t.partitions, partitionID)
	if p == nil {
		return 0, false, fmt.Errorf("last polled by group %q on %s/%s partition %d: %w", groupName, streamName, topicName, partitionID, ErrTopicNotFound)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	offset, ok = p.lastPolled[g.id]
	return offset, ok, nil
}

// Messages returns copies of every message a topic holds, partition by
// partition in offset order.
func (s *Server) Messages(streamName, topicName string) ([]StoredMessage, error) {
	data := s.currentData()
	data.mu.RLock()
	defer data.mu.RUnlock()
	st := data.streamsByName[streamName]
	if st == nil {
		return nil, fmt.Errorf("messages of %s/%s: %w", streamName, topicName, ErrStreamNotFound)
	}
	t := st.topicsByName[topicName]
	if t == nil {
		return nil, fmt.Errorf("messages of %s/%s: %w", streamName, topicName, ErrTopicNotFound)
	}
	var out []StoredMessage
	for _, p := range t.partitions {
		p.mu.RLock()
		for _, b := range p.batches {
			if b.record {
				out = append(out, parseRecord(p.id, &b)...)
				continue
			}
			start := uint32(0)
			for _, end := range b.ends {
				out = append(out, parseStored(p.id, b.data[start:end]))
				start = end
			}
		}
		p.mu.RUnlock()
	}
	return out, nil
}

// parseStored copies one stored 0.8 message.
func parseStored(partitionID uint32, msg []byte) StoredMessage {
	h := wire08.DecodeMessageHeader(msg)
	body := msg[wire08.MessageHeaderSize:]
	m := StoredMessage{Partition: partitionID, Checksum: h.Checksum, Offset: h.Offset, Timestamp: h.Timestamp,
		OriginTimestamp: h.OriginTimestamp, ID: h.ID, Payload: append([]byte(nil), body[:h.PayloadLength]...)}
	if h.HeadersLength > 0 {
		m.UserHeaders = append([]byte(nil), body[h.PayloadLength:]...)
	}
	return m
}

// parseRecord copies the messages of a stored 0.9 batch record (docs/iggy-protocol-0.9.md §11.2).
func parseRecord(partitionID uint32, b *batch) []StoredMessage {
	var out []StoredMessage
	it, _ := wire09.NewPollIterator(append(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{MessagesCount: uint32(len(b.ends))}), b.data...))
	var m iggywire.PolledMessage
	for it.Next(&m) {
		sm := StoredMessage{Partition: partitionID, Offset: m.Offset, ID: m.ID, Checksum: m.Checksum,
			Timestamp: m.Timestamp, OriginTimestamp: m.OriginTimestamp, Payload: append([]byte(nil), m.Payload...)}
		if len(m.Headers) > 0 {
			sm.UserHeaders = append([]byte(nil), m.Headers...)
		}
		out = append(out, sm)
	}
	return out
}

// Client is one connection the broker serves, as tests see it.
type Client struct {
	ID       uint32
	Address  string // the peer's address
	Protocol string // Protocol08 or Protocol09
}

// Clients lists the connections the broker serves now, by id: a client that reconnects shows up
// under a new id.
func (s *Server) Clients() []Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Client, 0, len(s.clients))
	for id, sess := range s.clients {
		p := Protocol08
		if sess.v09.Load() {
			p = Protocol09
		}
		out = append(out, Client{ID: id, Address: sess.address, Protocol: p})
	}
	slices.SortFunc(out, func(a, b Client) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
