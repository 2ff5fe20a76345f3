package devbroker

import (
	"crypto/subtle"
	"net"
	"strconv"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// 0.8 handlers of the session (ping, logins, cluster metadata, clients), streams, topics and
// partitions. Get commands answer an empty OK for what is missing, as the
// real server does; the others the status of what did not resolve.

const rootUserID = 0

func (c *connection) ping08([]byte) ([]byte, iggywire.Status) {
	c.sess.lastPing.Store(time.Now().UnixNano())
	return nil, iggywire.StatusOK
}

func equalSecret(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// loginUser08 checks the root user's credentials: username 3..50 and password 3..100 bytes
// (43, 44), then both (42). Version and context are ignored, as the server does.
func (c *connection) loginUser08(payload []byte) ([]byte, iggywire.Status) {
	l, err := wire08.DecodeLoginUser(payload)
	if err != nil {
		return nil, statusOf(err)
	}
	if len(l.Username) < 3 || len(l.Username) > 50 {
		return nil, iggywire.StatusInvalidUsername
	}
	if len(l.Password) < 3 || len(l.Password) > 100 {
		return nil, iggywire.StatusInvalidPassword
	}
	cfg := &c.srv.cfg
	userOK := equalSecret(string(l.Username), cfg.RootUsername)
	passOK := equalSecret(string(l.Password), cfg.RootPassword)
	if !userOK || !passOK {
		return nil, iggywire.StatusInvalidCredentials
	}
	return c.loggedIn08(), iggywire.StatusOK
}

// loginWithToken08 accepts a configured token: an unknown one is 20, as in server 0.8.0, an
// expired one 54.
func (c *connection) loginWithToken08(payload []byte) ([]byte, iggywire.Status) {
	token, err := wire08.DecodeLoginToken(payload)
	if err != nil {
		return nil, statusOf(err)
	}
	for _, pat := range c.srv.cfg.PersonalAccessTokens {
		if !equalSecret(string(token), pat.Token) {
			continue
		}
		if !pat.ExpiresAt.IsZero() && time.Now().After(pat.ExpiresAt) {
			return nil, iggywire.StatusPersonalAccessTokenExpired
		}
		return c.loggedIn08(), iggywire.StatusOK
	}
	return nil, iggywire.StatusResourceNotFound
}

func (c *connection) loggedIn08() []byte {
	c.sess.authenticated = true
	c.sess.userID.Store(rootUserID)
	c.out = wire08.AppendLoginReply(c.out[:0], rootUserID)
	return c.out
}

func (c *connection) logout08([]byte) ([]byte, iggywire.Status) {
	if st := c.decoded08(nil); st != iggywire.StatusOK {
		return nil, st
	}
	c.sess.authenticated = false
	return nil, iggywire.StatusOK
}

// clusterMetadata08 answers like a server with clustering disabled: one healthy leader node at
// the listen address, so the client never redirects.
func (c *connection) clusterMetadata08([]byte) ([]byte, iggywire.Status) {
	if st := c.decoded08(nil); st != iggywire.StatusOK {
		return nil, st
	}
	host, port := c.srv.nodeAddress()
	c.out = wire08.AppendClusterMetadata(c.out[:0], wire08.ClusterMetadata{Name: []byte("single-node"),
		Nodes: []wire08.ClusterNode{{Name: []byte("iggy-node"), IP: []byte(host), TCPPort: port, QUICPort: 8080,
			HTTPPort: 3000, WSPort: 8092, Role: wire08.RoleLeader, Status: wire08.NodeHealthy}}})
	return c.out, iggywire.StatusOK
}

// nodeAddress is the ip and port the cluster metadata names: the listen address.
func (s *Server) nodeAddress() (string, uint16) {
	host, port := "127.0.0.1", uint16(8090)
	if h, p, err := net.SplitHostPort(s.Addr()); err == nil {
		host = h
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			port = uint16(n)
		}
	}
	return host, port
}

func (c *connection) getMe08([]byte) ([]byte, iggywire.Status) {
	if st := c.decoded08(nil); st != iggywire.StatusOK {
		return nil, st
	}
	return c.clientDetails08(c.sess), iggywire.StatusOK
}

// getClient08 describes a connection by client id: 0 is invalid (101), an unknown id an empty OK.
func (c *connection) getClient08(payload []byte) ([]byte, iggywire.Status) {
	id, err := wire08.DecodeClientID(payload)
	if st := c.decoded08(err); st != iggywire.StatusOK {
		return nil, st
	}
	if id == 0 {
		return nil, iggywire.StatusInvalidClientID
	}
	c.srv.mu.Lock()
	target := c.srv.clients[id]
	c.srv.mu.Unlock()
	if target == nil {
		return nil, iggywire.StatusOK
	}
	return c.clientDetails08(target), iggywire.StatusOK
}

func (c *connection) clientDetails08(sess *session) []byte {
	c.out = wire08.AppendClientDetails(c.out[:0], wire08.ClientDetails{ClientID: sess.clientID, UserID: sess.userID.Load(),
		Transport: wire08.TransportTCP, Address: []byte(sess.address), Groups: c.data.groupsOf(sess.clientID)})
	return c.out
}

// --- streams ---

func streamRecord08(s streamInfo) wire08.Stream {
	return wire08.Stream{ID: s.id, CreatedAt: s.createdAt, TopicsCount: s.topicsCount, SizeBytes: s.size, MessagesCount: s.messages, Name: []byte(s.name)}
}

func topicRecord08(t topicInfo) wire08.Topic {
	return wire08.Topic{ID: t.id, CreatedAt: t.createdAt, PartitionsCount: t.partitionsCount, MessageExpiry: t.expiry,
		Compression: t.compression, MaxTopicSize: t.maxSize, ReplicationFactor: t.replication, SizeBytes: t.size,
		MessagesCount: t.messages, Name: []byte(t.name)}
}

func appendTopic08(dst []byte, t topicInfo) []byte { return wire08.AppendTopic(dst, topicRecord08(t)) }

func appendPartition08(dst []byte, p partitionInfo, segments uint32) []byte {
	return wire08.AppendPartition(dst, wire08.Partition{ID: p.id, CreatedAt: p.createdAt, SegmentsCount: segments,
		CurrentOffset: p.current, SizeBytes: p.size, MessagesCount: p.messages})
}

// getStream08 answers the stream record and its topics' records, or an empty OK.
func (c *connection) getStream08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, wire08.DecodeStreamID, func(id iggywire.Identifier) ([]byte, iggywire.Status) {
		info, ok := c.data.streamInfo(id)
		if !ok {
			return nil, iggywire.StatusOK
		}
		c.out = wire08.AppendStream(c.out[:0], streamRecord08(info))
		return c.appendTopics08(info.topics), iggywire.StatusOK
	})
}

// appendTopics08 appends topic records to c.out.
func (c *connection) appendTopics08(topics []topicInfo) []byte {
	for _, t := range topics {
		c.out = appendTopic08(c.out, t)
	}
	return c.out
}

func (c *connection) getStreams08([]byte) ([]byte, iggywire.Status) {
	if st := c.decoded08(nil); st != iggywire.StatusOK {
		return nil, st
	}
	c.out = c.out[:0]
	for _, s := range c.data.streamInfos() {
		c.out = wire08.AppendStream(c.out, streamRecord08(s))
	}
	return c.out, iggywire.StatusOK
}

func (c *connection) createStream08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, wire08.DecodeCreateStream, func(name []byte) ([]byte, iggywire.Status) {
		info, err := c.data.createStream(string(name))
		return answer08(err, func() []byte {
			c.out = wire08.AppendStream(c.out[:0], streamRecord08(info))
			return c.out
		})
	})
}

// --- topics and partitions ---

func (c *connection) getTopic08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, wire08.DecodeTopicRef, func(ref iggywire.TopicRef) ([]byte, iggywire.Status) {
		if info, ok := c.data.topicInfo(ref); ok {
			c.out = info.appendDetails(c.out[:0], 1, appendTopic08, appendPartition08)
			return c.out, iggywire.StatusOK
		}
		return nil, iggywire.StatusOK
	})
}

// getTopics08 answers the stream's topic records (none for a missing stream).
func (c *connection) getTopics08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, wire08.DecodeStreamID, func(id iggywire.Identifier) ([]byte, iggywire.Status) {
		topics, _ := c.data.topicInfos(id)
		c.out = c.out[:0]
		return c.appendTopics08(topics), iggywire.StatusOK
	})
}

func (c *connection) createTopic08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, wire08.DecodeCreateTopic, func(req wire08.CreateTopic) ([]byte, iggywire.Status) {
		info, err := c.data.createTopic(req.StreamID, string(req.Name), topicSettings{partitions: req.PartitionsCount,
			compression: req.Compression, messageExpiry: req.MessageExpiry, maxTopicSize: req.MaxTopicSize,
			replicationFactor: req.ReplicationFactor}, nil)
		return answer08(err, func() []byte {
			c.out = info.appendDetails(c.out[:0], 0, appendTopic08, appendPartition08)
			return c.out
		})
	})
}
