package devbroker

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 handlers of cluster metadata, streams, topics and partitions (spec 0.9
// §10.1–§10.3). Metadata operations answer committed outcomes in the result
// section (a rejection code) and pre-commit denials in the header status.

// clusterMetadata09 answers with one healthy leader at the listen address, so
// clients never redirect.
func (c *connection) clusterMetadata09() []byte {
	host, port := c.srv.nodeAddress()
	c.s09.out = wire09.AppendClusterMetadata(c.s09.out[:0], wire09.ClusterMetadata{
		Name: []byte("single-node"),
		Nodes: []wire09.ClusterNode{{Name: []byte("iggy-node"), IP: []byte(host), TCPPort: port, QUICPort: 8080,
			HTTPPort: 3000, WSPort: 8092, Role: wire09.RoleLeader, Status: wire09.NodeHealthy}},
	})
	return c.s09.out
}

func streamElement(st *stream) wire09.Stream {
	topics, size, messages := st.stats()
	return wire09.Stream{ID: st.id, CreatedAt: st.createdAt, TopicsCount: topics, SizeBytes: size, MessagesCount: messages, Name: []byte(st.name)}
}

func topicElement(t *topic) wire09.Topic {
	size, messages := t.stats()
	return wire09.Topic{ID: t.id, CreatedAt: t.createdAt, PartitionsCount: uint32(len(t.partitions)), MessageExpiry: t.messageExpiry,
		Compression: t.compression, MaxTopicSize: t.maxTopicSize, SizeBytes: size, MessagesCount: messages,
		Name: []byte(t.name), Options: t.options}
}

// appendTopicDetails appends the topic element and its partition elements,
// with the segment count the command's reply gives (create 0, get 1).
func appendTopicDetails(dst []byte, t *topic, segments uint32) []byte {
	dst = wire09.AppendTopic(dst, topicElement(t))
	for _, p := range t.partitions {
		size, messages, current := p.snapshot()
		dst = wire09.AppendPartition(dst, wire09.Partition{ID: p.id, CreatedAt: p.createdAt, SegmentsCount: segments,
			CurrentOffset: current, SizeBytes: size, MessagesCount: messages})
	}
	return dst
}

// appendStreamTopics appends the topic elements of a stream and counts them.
func appendStreamTopics(dst []byte, st *stream) ([]byte, uint32) {
	n := uint32(0)
	for _, t := range st.topics {
		if t != nil {
			dst = wire09.AppendTopic(dst, topicElement(t))
			n++
		}
	}
	return dst, n
}

// getStreams09 answers GetStream (stream and its topics, empty when absent)
// and GetStreams (every stream, concatenated).
func (c *connection) getStreams09(code wire09.Command, body []byte) ([]byte, iggywire.Status) {
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := c.s09.out[:0]
	if code == wire09.CmdGetStreams {
		for _, st := range s.streams {
			if st != nil {
				out = wire09.AppendStream(out, streamElement(st))
			}
		}
		c.s09.out = out
		return out, 0
	}
	id, err := wire09.DecodeIdentifier(body)
	if err != nil {
		return nil, statusOf(err)
	}
	if st := s.findStream(toIdent(id)); st != nil {
		out, _ = appendStreamTopics(wire09.AppendStream(out, streamElement(st)), st)
	}
	c.s09.out = out
	return out, 0
}

// streamOp09 creates or deletes a stream.
func (c *connection) streamOp09(op wire09.Operation, body []byte) ([]byte, iggywire.Status) {
	s := c.data
	if op == wire09.OpCreateStream {
		req, err := wire09.DecodeCreateStream(body)
		if err != nil {
			return nil, statusOf(err)
		}
		if len(req.Options) > 0 {
			return nil, iggywire.StatusUnsupportedOptionKey // streams have no option keys
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		st, err := s.createStream(string(req.Name))
		if err != nil {
			return c.rejected(err)
		}
		c.s09.out = wire09.AppendStream(c.framed(), streamElement(st))
		return c.s09.out, 0
	}
	id, err := wire09.DecodeIdentifier(body)
	if err != nil {
		return nil, statusOf(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findStream(toIdent(id))
	if st == nil {
		return c.rejected(iggywire.StatusStreamIDNotFound)
	}
	s.deleteStream(st)
	return c.framed(), 0
}

// getTopics09 answers GetTopic (topic and partitions, empty when absent) and
// GetTopics (a count, then the topics; 0 for a missing stream).
func (c *connection) getTopics09(code wire09.Command, body []byte) ([]byte, iggywire.Status) {
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := c.s09.out[:0]
	if code == wire09.CmdGetTopics {
		id, err := wire09.DecodeIdentifier(body)
		if err != nil {
			return nil, statusOf(err)
		}
		out = append(out, 0, 0, 0, 0)
		if st := s.findStream(toIdent(id)); st != nil {
			var count uint32
			out, count = appendStreamTopics(out, st)
			binary.LittleEndian.PutUint32(out, count)
		}
		c.s09.out = out
		return out, 0
	}
	ref, err := iggywire.DecodeTopicRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	if _, t, err := s.resolveTopic(toIdent(ref.StreamID), toIdent(ref.TopicID)); err == nil {
		out = appendTopicDetails(out, t, 1)
	}
	c.s09.out = out
	return out, 0
}

// createTopic09 creates a topic from its partitions count, name and options.
func (c *connection) createTopic09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeCreateTopic(body)
	if err != nil {
		return nil, statusOf(err)
	}
	opts, err := wire09.ParseTopicOptions(req.Options)
	if err != nil {
		return nil, statusOf(err)
	}
	// Bounds are checked before commit, as the real server does.
	if req.PartitionsCount > maxPartitions {
		return nil, iggywire.Status(iggywire.StatusTooManyPartitions)
	}
	if opts.MaxTopicSize != 0 && opts.MaxTopicSize != unlimitedSize && opts.MaxTopicSize < minTopicSize {
		return nil, iggywire.Status(iggywire.StatusInvalidTopicSize)
	}
	compression := opts.Compression
	if compression == 0 {
		compression = wire09.CompressionNone
	}
	s := c.data
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findStream(toIdent(req.StreamID))
	if st == nil {
		return c.rejected(iggywire.StatusStreamIDNotFound)
	}
	t, err := s.createTopic(st, string(req.Name), topicSettings{partitions: req.PartitionsCount, compression: compression,
		messageExpiry: opts.MessageExpiry, maxTopicSize: opts.MaxTopicSize})
	if err != nil {
		return c.rejected(err)
	}
	if len(req.Options) > 0 {
		t.options = append([]byte(nil), req.Options...)
	}
	c.s09.out = appendTopicDetails(c.framed(), t, 0)
	return c.s09.out, 0
}

func (c *connection) deleteTopic09(body []byte) ([]byte, iggywire.Status) {
	ref, err := iggywire.DecodeTopicRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	s := c.data
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.resolveTopic(toIdent(ref.StreamID), toIdent(ref.TopicID))
	if err != nil {
		return c.rejected(err)
	}
	st.deleteTopic(t)
	return c.framed(), 0
}

func (c *connection) createPartitions09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeCreatePartitions(body)
	if err != nil {
		return nil, statusOf(err)
	}
	if req.PartitionsCount == 0 || req.PartitionsCount > maxPartitions {
		return nil, iggywire.Status(iggywire.StatusTooManyPartitions)
	}
	s := c.data
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.resolveTopic(toIdent(req.StreamID), toIdent(req.TopicID))
	if err != nil {
		return c.rejected(err)
	}
	s.growTopic(t, req.PartitionsCount)
	return c.framed(), 0
}
