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
func (c *connection) clusterMetadata09([]byte) ([]byte, iggywire.Status) {
	host, port := c.srv.nodeAddress()
	c.out = wire09.AppendClusterMetadata(c.out[:0], wire09.ClusterMetadata{
		Name: []byte("single-node"),
		Nodes: []wire09.ClusterNode{{Name: []byte("iggy-node"), IP: []byte(host), TCPPort: port, QUICPort: 8080,
			HTTPPort: 3000, WSPort: 8092, Role: wire09.RoleLeader, Status: wire09.NodeHealthy}},
	})
	return c.out, 0
}

func streamElement09(s streamInfo) wire09.Stream {
	return wire09.Stream{ID: s.id, CreatedAt: s.createdAt, TopicsCount: s.topicsCount, SizeBytes: s.size, MessagesCount: s.messages, Name: []byte(s.name)}
}

func topicElement09(t topicInfo) wire09.Topic {
	return wire09.Topic{ID: t.id, CreatedAt: t.createdAt, PartitionsCount: t.partitionsCount, MessageExpiry: t.expiry,
		Compression: t.compression, MaxTopicSize: t.maxSize, SizeBytes: t.size, MessagesCount: t.messages,
		Name: []byte(t.name), Options: t.options}
}

// appendTopicDetails09 appends the topic element and its partition elements,
// with the segment count the command's reply gives (create 0, get 1).
func appendTopicDetails09(dst []byte, t topicInfo, segments uint32) []byte {
	dst = wire09.AppendTopic(dst, topicElement09(t))
	for _, p := range t.partitions {
		dst = wire09.AppendPartition(dst, wire09.Partition{ID: p.id, CreatedAt: p.createdAt, SegmentsCount: segments,
			CurrentOffset: p.current, SizeBytes: p.size, MessagesCount: p.messages})
	}
	return dst
}

// getStream09 answers the stream and its topics, empty when absent.
func (c *connection) getStream09(body []byte) ([]byte, iggywire.Status) {
	id, err := wire09.DecodeIdentifier(body)
	if err != nil {
		return nil, statusOf(err)
	}
	c.out = c.out[:0]
	if info, ok := c.data.streamInfo(id); ok {
		c.out = wire09.AppendStream(c.out, streamElement09(info))
		for _, t := range info.topics {
			c.out = wire09.AppendTopic(c.out, topicElement09(t))
		}
	}
	return c.out, 0
}

// getStreams09 answers every stream, concatenated.
func (c *connection) getStreams09([]byte) ([]byte, iggywire.Status) {
	c.out = c.out[:0]
	for _, s := range c.data.streamInfos() {
		c.out = wire09.AppendStream(c.out, streamElement09(s))
	}
	return c.out, 0
}

func (c *connection) createStream09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeCreateStream(body)
	if err != nil {
		return nil, statusOf(err)
	}
	if len(req.Options) > 0 {
		return nil, iggywire.StatusUnsupportedOptionKey // streams have no option keys
	}
	info, err := c.data.createStream(string(req.Name))
	return c.committed(err, func() []byte {
		c.out = wire09.AppendStream(c.framed(), streamElement09(info))
		return c.out
	})
}

func (c *connection) deleteStream09(body []byte) ([]byte, iggywire.Status) {
	id, err := wire09.DecodeIdentifier(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.committed(c.data.deleteStream(id), nil)
}

// getTopic09 answers the topic and its partitions, empty when absent.
func (c *connection) getTopic09(body []byte) ([]byte, iggywire.Status) {
	ref, err := iggywire.DecodeTopicRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	c.out = c.out[:0]
	if info, ok := c.data.topicInfo(ref); ok {
		c.out = appendTopicDetails09(c.out, info, 1)
	}
	return c.out, 0
}

// getTopics09 answers a count, then the stream's topics (0 for a missing stream).
func (c *connection) getTopics09(body []byte) ([]byte, iggywire.Status) {
	id, err := wire09.DecodeIdentifier(body)
	if err != nil {
		return nil, statusOf(err)
	}
	topics, _ := c.data.topicInfos(id)
	c.out = binary.LittleEndian.AppendUint32(c.out[:0], uint32(len(topics)))
	for _, t := range topics {
		c.out = wire09.AppendTopic(c.out, topicElement09(t))
	}
	return c.out, 0
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
	compression := opts.Compression
	if compression == 0 {
		compression = wire09.CompressionNone
	}
	info, err := c.data.createTopic(req.StreamID, string(req.Name), topicSettings{partitions: req.PartitionsCount,
		compression: compression, messageExpiry: opts.MessageExpiry, maxTopicSize: opts.MaxTopicSize}, req.Options)
	return c.committed(err, func() []byte {
		c.out = appendTopicDetails09(c.framed(), info, 0)
		return c.out
	})
}

func (c *connection) deleteTopic09(body []byte) ([]byte, iggywire.Status) {
	ref, err := iggywire.DecodeTopicRef(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.committed(c.data.deleteTopic(ref), nil)
}

func (c *connection) createPartitions09(body []byte) ([]byte, iggywire.Status) {
	req, err := wire09.DecodeCreatePartitions(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return c.committed(c.data.createPartitions(req.TopicRef, req.PartitionsCount), nil)
}
