package devbroker

import (
	"crypto/subtle"
	"net"
	"strconv"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Command codes (spec §3).
const (
	codePing                 = 1
	codeGetClusterMetadata   = 12
	codeGetMe                = 20
	codeGetClient            = 21
	codeLoginUser            = 38
	codeLogoutUser           = 39
	codeLoginWithToken       = 44
	codePollMessages         = 100
	codeSendMessages         = 101
	codeGetConsumerOffset    = 120
	codeStoreConsumerOffset  = 121
	codeDeleteConsumerOffset = 122
	codeGetStream            = 200
	codeGetStreams           = 201
	codeCreateStream         = 202
	codeDeleteStream         = 203
	codeGetTopic             = 300
	codeGetTopics            = 301
	codeCreateTopic          = 302
	codeDeleteTopic          = 303
	codeCreatePartitions     = 402
	codeGetConsumerGroup     = 600
	codeGetConsumerGroups    = 601
	codeCreateConsumerGroup  = 602
	codeDeleteConsumerGroup  = 603
	codeJoinConsumerGroup    = 604
	codeLeaveConsumerGroup   = 605
)

const rootUserID = 0

// dispatch runs one command. It writes OK replies itself and returns the
// error status otherwise. Like the real server it decodes the payload first
// (errors 3 and 4), then checks the login (40), then resolves entities.
func (c *connection) dispatch(code uint32, payload []byte) error {
	if c.sess.stale.Load() {
		return iggywire.StatusStaleClient // the session is gone; the client must connect again
	}
	switch code {
	case codePing:
		c.sess.lastPing.Store(time.Now().UnixNano())
		c.ok(nil)
		return nil
	case codeLoginUser:
		return c.loginUser(payload)
	case codeLoginWithToken:
		return c.loginWithToken(payload)
	case codeSendMessages:
		// The real server checks the login before reading the payload.
		if !c.sess.authenticated {
			return iggywire.StatusUnauthenticated
		}
		return c.sendMessages(payload)
	case codePollMessages:
		return c.pollMessages(payload)
	case codeGetClusterMetadata, codeGetMe, codeLogoutUser, codeGetStreams:
		if !c.sess.authenticated {
			return iggywire.StatusUnauthenticated
		}
		switch code {
		case codeGetClusterMetadata:
			c.clusterMetadata()
		case codeGetMe:
			c.clientDetails(c.sess)
		case codeLogoutUser:
			c.sess.authenticated = false
			c.ok(nil)
		case codeGetStreams:
			c.getStreams()
		}
		return nil
	case codeGetClient:
		return c.getClient(payload)
	case codeGetConsumerOffset, codeStoreConsumerOffset, codeDeleteConsumerOffset:
		return c.consumerOffset(code, payload)
	case codeGetStream, codeCreateStream, codeDeleteStream:
		return c.streamCommand(code, payload)
	case codeGetTopic, codeGetTopics, codeDeleteTopic:
		return c.topicCommand(code, payload)
	case codeCreateTopic:
		return c.createTopic(payload)
	case codeCreatePartitions:
		return c.createPartitions(payload)
	case codeGetConsumerGroup, codeGetConsumerGroups, codeCreateConsumerGroup,
		codeDeleteConsumerGroup, codeJoinConsumerGroup, codeLeaveConsumerGroup:
		return c.groupCommand(code, payload)
	default:
		return iggywire.StatusInvalidCommand
	}
}

func (c *connection) requireLogin(err error) error {
	if err != nil {
		return err
	}
	if !c.sess.authenticated {
		return iggywire.StatusUnauthenticated
	}
	return nil
}

func equalSecret(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// loginUser: [u8 len][username][u8 len][password][u32 len][version][u32 len][context].
// Version and context are read when present and ignored, as the server does.
func (c *connection) loginUser(payload []byte) error {
	d := decoder{buf: payload}
	username := string(d.take(int(d.u8())))
	password := string(d.take(int(d.u8())))
	if d.pos < len(d.buf) {
		d.take(int(d.u32()))
		d.take(int(d.u32()))
	}
	if d.err != nil {
		return d.err
	}
	if len(username) < 3 || len(username) > 50 {
		return iggywire.StatusInvalidUsername
	}
	if len(password) < 3 || len(password) > 100 {
		return iggywire.StatusInvalidPassword
	}
	cfg := &c.srv.cfg
	userOK := equalSecret(username, cfg.RootUsername)
	passOK := equalSecret(password, cfg.RootPassword)
	if !userOK || !passOK {
		return iggywire.StatusInvalidCredentials
	}
	c.loggedIn(rootUserID)
	return nil
}

// loginWithToken: [u8 len][token]. An unknown token is 20, as in server 0.8.0.
func (c *connection) loginWithToken(payload []byte) error {
	d := decoder{buf: payload}
	token := string(d.take(int(d.u8())))
	if d.err != nil {
		return d.err
	}
	if token == "" {
		return iggywire.StatusInvalidFormat
	}
	for _, pat := range c.srv.cfg.PersonalAccessTokens {
		if !equalSecret(token, pat.Token) {
			continue
		}
		if !pat.ExpiresAt.IsZero() && time.Now().After(pat.ExpiresAt) {
			return iggywire.StatusPersonalAccessTokenExpired
		}
		c.loggedIn(rootUserID)
		return nil
	}
	return iggywire.StatusResourceNotFound
}

func (c *connection) loggedIn(userID uint32) {
	c.sess.authenticated = true
	c.sess.userID.Store(userID)
	e := c.newReply()
	e.u32(userID)
	c.ok(e.buf)
}

// clusterMetadata answers like a server with clustering disabled: one healthy
// leader node at the listen address, so the SDK never redirects.
func (c *connection) clusterMetadata() {
	host, port := c.srv.nodeAddress()
	e := c.newReply()
	e.string32("single-node")
	e.u32(1)
	e.string32("iggy-node")
	e.string32(host)
	e.u16(port) // tcp
	e.u16(8080) // quic
	e.u16(3000) // http
	e.u16(8092) // websocket
	e.u8(0)     // leader
	e.u8(0)     // healthy
	c.ok(e.buf)
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

// getClient: [u32 client_id]. Id 0 is invalid; an unknown id is an empty OK.
func (c *connection) getClient(payload []byte) error {
	d := decoder{buf: payload}
	id := d.u32()
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	if id == 0 {
		return iggywire.StatusInvalidClientID
	}
	c.srv.mu.Lock()
	target := c.srv.clients[id]
	c.srv.mu.Unlock()
	if target == nil {
		c.ok(nil)
		return nil
	}
	c.clientDetails(target)
	return nil
}

func (c *connection) clientDetails(sess *session) {
	memberships := c.data.groupsOf(sess.clientID)
	e := c.newReply()
	e.u32(sess.clientID)
	e.u32(sess.userID.Load())
	e.u8(1) // tcp
	e.string32(sess.address)
	e.u32(uint32(len(memberships)))
	for _, m := range memberships {
		e.u32(m[0])
		e.u32(m[1])
		e.u32(m[2])
	}
	c.ok(e.buf)
}

// groupsOf lists (stream, topic, group) ids of every group the client is a member of.
func (s *store) groupsOf(clientID uint32) [][3]uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	var out [][3]uint32
	for _, st := range s.streams {
		if st == nil {
			continue
		}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			for _, g := range t.groups {
				if g != nil && g.member(clientID) != nil {
					out = append(out, [3]uint32{st.id, t.id, g.id})
				}
			}
		}
	}
	return out
}

// dropClient removes a closed connection from every group it joined.
func (s *store) dropClient(clientID uint32) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	for _, st := range s.streams {
		if st == nil {
			continue
		}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			for _, g := range t.groups {
				if g != nil {
					g.leave(clientID)
				}
			}
		}
	}
}

// --- streams ---

func (c *connection) streamCommand(code uint32, payload []byte) error {
	d := decoder{buf: payload}
	var id ident
	var name string
	if code == codeCreateStream {
		name = d.name()
	} else {
		id = d.ident()
	}
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	s := c.data
	switch code {
	case codeGetStream:
		s.mu.RLock()
		defer s.mu.RUnlock()
		st := s.findStream(id)
		if st == nil {
			c.ok(nil) // the real server's "not found" for Get commands
			return nil
		}
		e := c.newReply()
		encodeStream(e, st)
		encodeTopicsOf(e, st)
		c.ok(e.buf)
	case codeCreateStream:
		s.mu.Lock()
		defer s.mu.Unlock()
		st, err := s.createStream(name)
		if err != nil {
			return err
		}
		e := c.newReply()
		encodeStream(e, st)
		c.ok(e.buf)
	case codeDeleteStream:
		s.mu.Lock()
		defer s.mu.Unlock()
		st := s.findStream(id)
		if st == nil {
			return iggywire.StatusStreamIDNotFound
		}
		s.deleteStream(st)
		c.ok(nil)
	}
	return nil
}

func (c *connection) getStreams() {
	s := c.data
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := c.newReply()
	for _, st := range s.streams {
		if st != nil {
			encodeStream(e, st)
		}
	}
	c.ok(e.buf)
}

// encodeStream writes the 33+n byte stream record.
func encodeStream(e *encoder, st *stream) {
	topics, size, messages := st.stats()
	e.u32(st.id)
	e.u64(st.createdAt)
	e.u32(topics)
	e.u64(size)
	e.u64(messages)
	e.name8(st.name)
}

// --- topics ---

func (c *connection) topicCommand(code uint32, payload []byte) error {
	d := decoder{buf: payload}
	streamID := d.ident()
	var topicID ident
	if code != codeGetTopics {
		topicID = d.ident()
	}
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	s := c.data
	switch code {
	case codeGetTopic:
		s.mu.RLock()
		defer s.mu.RUnlock()
		_, t, err := s.resolveTopic(streamID, topicID)
		if err != nil {
			c.ok(nil)
			return nil
		}
		e := c.newReply()
		encodeTopicDetails(e, t, 1)
		c.ok(e.buf)
	case codeGetTopics:
		s.mu.RLock()
		defer s.mu.RUnlock()
		st := s.findStream(streamID)
		e := c.newReply()
		if st != nil {
			encodeTopicsOf(e, st)
		}
		c.ok(e.buf)
	case codeDeleteTopic:
		s.mu.Lock()
		defer s.mu.Unlock()
		st, t, err := s.resolveTopic(streamID, topicID)
		if err != nil {
			return err
		}
		st.deleteTopic(t)
		c.ok(nil)
	}
	return nil
}

// createTopic: [Id stream][u32 partitions][u8 compression][u64 expiry][u64 max size][u8 replication][u8 len][name].
func (c *connection) createTopic(payload []byte) error {
	d := decoder{buf: payload}
	streamID := d.ident()
	var cfg topicSettings
	cfg.partitions = d.u32()
	cfg.compression = d.u8()
	cfg.messageExpiry = d.u64()
	cfg.maxTopicSize = d.u64()
	cfg.replicationFactor = d.u8()
	name := d.name()
	if d.err == nil && cfg.compression != 1 && cfg.compression != 2 {
		d.fail(iggywire.StatusInvalidCommand)
	}
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	s := c.data
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findStream(streamID)
	if st == nil {
		return iggywire.StatusStreamIDNotFound
	}
	t, err := s.createTopic(st, name, cfg)
	if err != nil {
		return err
	}
	e := c.newReply()
	encodeTopicDetails(e, t, 0)
	c.ok(e.buf)
	return nil
}

// encodeTopic writes the 51+n byte topic record.
func encodeTopic(e *encoder, t *topic) {
	size, messages := t.stats()
	e.u32(t.id)
	e.u64(t.createdAt)
	e.u32(uint32(len(t.partitions)))
	e.u64(t.messageExpiry)
	e.u8(t.compression)
	e.u64(t.maxTopicSize)
	e.u8(t.replicationFactor)
	e.u64(size)
	e.u64(messages)
	e.name8(t.name)
}

// encodeTopicsOf writes the topic record of each of st's topics (deleted ones leave a nil slot).
func encodeTopicsOf(e *encoder, st *stream) {
	for _, t := range st.topics {
		if t != nil {
			encodeTopic(e, t)
		}
	}
}

// encodeTopicDetails writes the topic record followed by its partitions' records, each
// with the segment count the command's reply gives (CreateTopic 0, GetTopic 1).
func encodeTopicDetails(e *encoder, t *topic, segments uint32) {
	encodeTopic(e, t)
	for _, p := range t.partitions {
		encodePartition(e, p, segments)
	}
}

// encodePartition writes the 40-byte partition record.
func encodePartition(e *encoder, p *partition, segments uint32) {
	size, messages, current := p.snapshot()
	e.u32(p.id)
	e.u64(p.createdAt)
	e.u32(segments)
	e.u64(current)
	e.u64(size)
	e.u64(messages)
}

// createPartitions: [Id stream][Id topic][u32 count], count 1..1000.
func (c *connection) createPartitions(payload []byte) error {
	d := decoder{buf: payload}
	streamID := d.ident()
	topicID := d.ident()
	count := d.u32()
	if err := c.requireLogin(d.err); err != nil {
		return err
	}
	s := c.data
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return err
	}
	if count == 0 || count > maxPartitions {
		return iggywire.StatusTooManyPartitions
	}
	s.growTopic(t, count)
	c.ok(nil)
	return nil
}

// growTopic adds count partitions to t and deals every group's partitions
// anew; callers hold store.mu for writing.
func (s *store) growTopic(t *topic, count uint32) {
	t.addPartitions(count, s.clock(), s.retainBytes)
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	for _, g := range t.groups {
		if g != nil {
			g.resetPartitions(uint32(len(t.partitions)))
		}
	}
}
