package devbroker

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// 0.9 handlers of cluster metadata, streams, topics and partitions (docs/iggy-protocol-0.9.md
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

func appendTopic09(dst []byte, t topicInfo) []byte { return wire09.AppendTopic(dst, topicElement09(t)) }

func appendPartition09(dst []byte, p partitionInfo, segments uint32) []byte {
	return wire09.AppendPartition(dst, wire09.Partition{ID: p.id, CreatedAt: p.createdAt, SegmentsCount: segments,
		CurrentOffset: p.current, SizeBytes: p.size, MessagesCount: p.messages})
}

// getStream09 answers the stream and its topics, empty when absent.
func (c *connection) getStream09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, wire09.DecodeIdentifier, func(id iggywire.Identifier) ([]byte, iggywire.Status) {
		c.out = c.out[:0]
		if info, ok := c.data.streamInfo(id); ok {
			c.out = wire09.AppendStream(c.out, streamElement09(info))
			for _, t := range info.topics {
				c.out = appendTopic09(c.out, t)
			}
		}
		return c.out, 0
	})
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
	return request09(body, wire09.DecodeCreateStream, func(req wire09.CreateStream) ([]byte, iggywire.Status) {
		if len(req.Options) > 0 {
			return nil, iggywire.StatusUnsupportedOptionKey // streams have no option keys
		}
		info, err := c.data.createStream(string(req.Name))
		return c.committed(err, func() []byte {
			c.out = wire09.AppendStream(c.framed(), streamElement09(info))
			return c.out
		})
	})
}

// getTopic09 answers the topic and its partitions, empty when absent.
func (c *connection) getTopic09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, iggywire.DecodeTopicRef, func(ref iggywire.TopicRef) ([]byte, iggywire.Status) {
		c.out = c.out[:0]
		if info, ok := c.data.topicInfo(ref); ok {
			c.out = info.appendDetails(c.out, 1, appendTopic09, appendPartition09)
		}
		return c.out, 0
	})
}

// getTopics09 answers a count, then the stream's topics (0 for a missing stream).
func (c *connection) getTopics09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, wire09.DecodeIdentifier, func(id iggywire.Identifier) ([]byte, iggywire.Status) {
		topics, _ := c.data.topicInfos(id)
		c.out = binary.LittleEndian.AppendUint32(c.out[:0], uint32(len(topics)))
		for _, t := range topics {
			c.out = appendTopic09(c.out, t)
		}
		return c.out, 0
	})
}

// createTopic09 creates a topic from its partitions count, name and options.
func (c *connection) createTopic09(body []byte) ([]byte, iggywire.Status) {
	return request09(body, wire09.DecodeCreateTopic, c.createTopicFrom09)
}

func (c *connection) createTopicFrom09(req wire09.CreateTopic) ([]byte, iggywire.Status) {
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
		c.out = info.appendDetails(c.framed(), 0, appendTopic09, appendPartition09)
		return c.out
	})
}
