package devbroker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
	"github.com/zeebo/xxh3"
)

// The Iggy 0.9 side of a connection (docs/iggy-protocol-0.9.md §13): 256-byte frames, §3.5
// validation, the session gate, request numbers and metadata deduplication.
//
// A connection holds at most one session, the u128 client id bound by its
// last Register. Group membership and the dedup state belong to that session:
// they end with a new Register, a Logout or the connection (the real server's
// client table is keyed by the client id, which a client draws anew for every
// connection and login, so per-connection state is the same thing).

// serverVersion is what the login reply names as the server's version.
const serverVersion = "0.9.0-dev"

// errEvicted ends a connection after an eviction frame went out.
var errEvicted = errors.New("session evicted")

// state09 is a 0.9 connection's session.
type state09 struct {
	bound     bool
	client    wire09.U128
	session   uint64
	watermark uint64 // highest metadata request number executed

	cachedRequest  uint64 // the request number whose reply is cached (0: none)
	cachedChecksum wire09.U128
	cachedStatus   iggywire.Status
	cachedBody     []byte

	header [wire09.HeaderSize]byte // reused reply header
	parts  []uint32                // reused partition list
}

// serve09 reads 0.9 frames until the peer goes away, a frame cannot be
// trusted (bad size or frame type: the connection closes without a reply) or
// the session is evicted.
func (c *connection) serve09() error {
	for {
		frame, err := wire09.ReadFrame(c.r, c.request)
		c.request = frame[:0]
		if err != nil {
			if c.sess.stale.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
				return c.evict(c.s09.client, wire09.EvictStaleClient)
			}
			if errors.Is(err, wire09.ErrFrameSize) || errors.Is(err, wire09.ErrFrameType) || errors.Is(err, io.ErrUnexpectedEOF) {
				c.srv.log.Warn("0.9 connection closed: bad frame", "client_id", c.sess.clientID, "address", c.sess.address, "error", err)
			}
			return err
		}
		c.sess.lastPing.Store(time.Now().UnixNano()) // every request counts as liveness in 0.9
		if c.sess.stale.Load() {
			return c.evict(c.s09.client, wire09.EvictStaleClient)
		}
		if err := wire09.ValidateRequest(frame); err != nil {
			// The real server drops these silently; the client times out.
			c.srv.log.Warn("0.9 request dropped", "client_id", c.sess.clientID, "address", c.sess.address, "error", err)
			continue
		}
		h, _ := wire09.DecodeRequestHeader(frame)
		if err := c.handle09(&h, wire09.Body(frame)); err != nil {
			return err
		}
		if err := c.finishRequest(); err != nil {
			return err
		}
	}
}

// handle09 answers one validated request. It returns an error only when the
// connection must end.
func (c *connection) handle09(h *wire09.RequestHeader, body []byte) error {
	st := &c.s09
	if !h.RequestChecksum.IsZero() && h.RequestChecksum != (wire09.U128{Lo: xxh3.Hash(body)}) {
		c.reply09(h, iggywire.StatusInvalidFormat, nil)
		return nil
	}
	switch h.Operation {
	case wire09.OpRegister:
		return c.register09(h, body)
	case wire09.OpNonReplicated:
		switch {
		case h.Code == wire09.CmdLoginUser || h.Code == wire09.CmdLoginWithPAT:
			return c.evict(h.Client, wire09.EvictMalformedLogin)
		case h.Code == wire09.CmdPing:
			c.reply09(h, 0, nil)
		case !st.bound:
			c.reply09(h, iggywire.StatusUnauthenticated, nil)
		default:
			reply, status := c.route(route09{wire09.OpNonReplicated, h.Code}, body)
			c.reply09(h, status, reply)
		}
		return nil
	}
	if !st.bound {
		return c.evict(h.Client, wire09.EvictNoSession)
	}
	switch {
	case h.Session < st.session:
		return c.evict(h.Client, wire09.EvictSessionTooLow)
	case h.Session > st.session:
		c.srv.log.Warn("0.9 request dropped: session newer than any issued", "client_id", c.sess.clientID, "session", h.Session)
		return nil
	}
	switch {
	case h.Operation == wire09.OpLogout:
		c.endSession()
		c.reply09(h, 0, nil)
	case h.Operation.PartitionPlane():
		reply, status := c.route(route09{op: h.Operation}, body)
		c.reply09(h, status, reply)
	case h.Request == st.cachedRequest && !h.RequestChecksum.IsZero() && !st.cachedChecksum.IsZero() && h.RequestChecksum != st.cachedChecksum:
		// The same number for another body: a client bug the server drops.
		c.srv.log.Warn("0.9 request dropped: request number reused for another body", "client_id", c.sess.clientID, "request", h.Request)
	case h.Request == st.cachedRequest:
		c.reply09(h, st.cachedStatus, st.cachedBody) // a replay: the same answer, not run again
	case h.Request <= st.watermark:
		c.reply09(h, 0, wire09.AppendResultRejection(c.out[:0], iggywire.StatusRequestAlreadyApplied))
	default:
		reply, status := c.route(route09{op: h.Operation}, body)
		st.watermark = h.Request
		st.cachedRequest, st.cachedChecksum, st.cachedStatus = h.Request, h.RequestChecksum, status
		st.cachedBody = append(st.cachedBody[:0], reply...)
		c.reply09(h, status, reply)
	}
	return nil
}

// reply09 writes a reply echoing the request's number, operation, timestamp
// and checksum. A non-zero status goes with an empty body.
func (c *connection) reply09(h *wire09.RequestHeader, status iggywire.Status, body []byte) {
	client := h.Client
	if c.s09.bound {
		client = c.s09.client
	}
	if status != 0 {
		body = nil
	}
	rh := wire09.ReplyHeader{
		Size: uint32(wire09.HeaderSize + len(body)), Client: client, RequestChecksum: h.RequestChecksum,
		Timestamp: h.Timestamp, Request: h.Request, Operation: h.Operation, Status: status,
	}
	if h.Operation == wire09.OpRegister && status == 0 {
		rh.Op = c.s09.session // login replies carry the session id here
	}
	_, _ = c.w.Write(wire09.AppendReplyHeader(c.s09.header[:0], &rh))
	_, _ = c.w.Write(body)
}

// evict sends an eviction frame; the session, and the connection, end.
func (c *connection) evict(client wire09.U128, reason wire09.EvictionReason) error {
	h := wire09.EvictionHeader{Client: client, Reason: reason}
	if reason == wire09.EvictIncompatibleProtocol {
		h.VersionMax, h.VersionMin = wire09.ProtocolVersion, wire09.ProtocolVersion
	}
	if client.IsZero() {
		h.Client = wire09.U128{Lo: 1} // an eviction names a non-zero client
	}
	c.srv.log.Info("0.9 client evicted", "client_id", c.sess.clientID, "address", c.sess.address, "reason", reason.String())
	_, _ = c.w.Write(wire09.AppendEviction(c.s09.header[:0], &h))
	_ = c.w.Flush()
	return errEvicted
}

// register09 logs in (docs/iggy-protocol-0.9.md §5.1): version gate, then password or token.
func (c *connection) register09(h *wire09.RequestHeader, body []byte) error {
	prefix, _, err := wire09.DecodeLoginPrefix(body)
	if err != nil {
		return c.evict(h.Client, wire09.EvictMalformedLogin)
	}
	if !wire09.VersionAccepted(prefix.ProtocolVersion) {
		return c.evict(h.Client, wire09.EvictIncompatibleProtocol)
	}
	login, err := wire09.DecodeLogin(body)
	if err != nil {
		return c.evict(h.Client, wire09.EvictMalformedLogin)
	}
	if login.IsToken() {
		if !c.tokenValid(string(login.Token)) {
			return c.evict(h.Client, wire09.EvictInvalidToken)
		}
	} else {
		cfg := &c.srv.cfg
		userOK := equalSecret(string(login.Username), cfg.RootUsername)
		passOK := equalSecret(string(login.Password), cfg.RootPassword)
		if !userOK || !passOK {
			return c.evict(h.Client, wire09.EvictInvalidCredentials)
		}
	}
	c.endSession()
	st := &c.s09
	st.bound, st.client, st.session = true, h.Client, c.srv.nextSession09.Add(1)
	c.sess.authenticated = true
	c.sess.userID.Store(rootUserID)
	c.out = wire09.AppendResultOK(c.out[:0])
	c.out = wire09.AppendLoginReply(c.out, wire09.LoginReply{UserID: rootUserID, Session: st.session,
		ProtocolVersion: wire09.ProtocolVersion, ServerVersion: []byte(serverVersion)})
	c.reply09(h, 0, c.out)
	return nil
}

// tokenValid reports whether a personal access token is configured and unexpired.
func (c *connection) tokenValid(token string) bool {
	for _, pat := range c.srv.cfg.PersonalAccessTokens {
		if equalSecret(token, pat.Token) {
			return pat.ExpiresAt.IsZero() || time.Now().Before(pat.ExpiresAt)
		}
	}
	return false
}

// endSession unbinds the session: its group memberships and dedup state go.
func (c *connection) endSession() {
	st := &c.s09
	if !st.bound {
		return
	}
	c.data.dropClient(c.sess.clientID)
	st.bound, st.client, st.session, st.watermark = false, wire09.U128{}, 0, 0
	st.cachedRequest, st.cachedChecksum, st.cachedStatus, st.cachedBody = 0, wire09.U128{}, 0, st.cachedBody[:0]
	c.sess.authenticated = false
}

// route09 names what a 0.9 request asks for: its operation, and the command of a NonReplicated one.
type route09 struct {
	op   wire09.Operation
	code wire09.Command
}

// handlers09 answers the requests of a bound session: reads (NonReplicated commands), metadata
// operations (each returns its result-framed reply) and partition-plane operations.
var handlers09 = map[route09]handler{
	{wire09.OpNonReplicated, wire09.CmdGetClusterMetadata}: (*connection).clusterMetadata09,
	{wire09.OpNonReplicated, wire09.CmdPollMessages}:       (*connection).poll09,
	{wire09.OpNonReplicated, wire09.CmdGetConsumerOffset}:  (*connection).getOffset09,
	{wire09.OpNonReplicated, wire09.CmdGetStream}:          (*connection).getStream09,
	{wire09.OpNonReplicated, wire09.CmdGetStreams}:         (*connection).getStreams09,
	{wire09.OpNonReplicated, wire09.CmdGetTopic}:           (*connection).getTopic09,
	{wire09.OpNonReplicated, wire09.CmdGetTopics}:          (*connection).getTopics09,
	{wire09.OpNonReplicated, wire09.CmdGetConsumerGroup}:   (*connection).getGroup09,
	{wire09.OpNonReplicated, wire09.CmdGetConsumerGroups}:  (*connection).getGroups09,
	{wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup}:  (*connection).syncGroup09,
	{wire09.OpCreateStream, 0}:                             (*connection).createStream09,
	{wire09.OpCreateTopic, 0}:                              (*connection).createTopic09,
	{wire09.OpCreateConsumerGroup, 0}:                      (*connection).createGroup09,
	{wire09.OpSendMessages, 0}:                             (*connection).send09,
	{wire09.OpStoreConsumerOffset, 0}:                      (*connection).storeOffset09,
	{wire09.OpDeleteConsumerOffset, 0}:                     (*connection).deleteOffset09,
	{wire09.OpDeleteStream, 0}: commit09(wire09.DecodeIdentifier, func(c *connection, id iggywire.Identifier) error {
		return c.data.deleteStream(id)
	}),
	{wire09.OpDeleteTopic, 0}: commit09(iggywire.DecodeTopicRef, func(c *connection, ref iggywire.TopicRef) error {
		return c.data.deleteTopic(ref)
	}),
	{wire09.OpCreatePartitions, 0}: commit09(wire09.DecodeCreatePartitions, func(c *connection, req wire09.CreatePartitions) error {
		return c.data.createPartitions(req.TopicRef, req.PartitionsCount)
	}),
	{wire09.OpDeletePartitions, 0}: commit09(wire09.DecodeCreatePartitions, func(c *connection, req wire09.CreatePartitions) error {
		return c.data.deletePartitions(req.TopicRef, req.PartitionsCount)
	}),
	{wire09.OpDeleteConsumerGroup, 0}: commit09(iggywire.DecodeGroupRef, func(c *connection, g iggywire.GroupRef) error {
		return c.data.deleteGroup(g)
	}),
	{wire09.OpJoinConsumerGroup, 0}: commit09(iggywire.DecodeGroupRef, func(c *connection, g iggywire.GroupRef) error {
		return c.data.joinGroup(g, c.sess.clientID)
	}),
	{wire09.OpLeaveConsumerGroup, 0}: commit09(iggywire.DecodeGroupRef, func(c *connection, g iggywire.GroupRef) error {
		return c.data.leaveGroup(g, c.sess.clientID)
	}),
}

// request09 answers a request whose body decode decodes: its decode error's status, or fn's answer.
func request09[R any](body []byte, decode func([]byte) (R, error), fn func(R) ([]byte, iggywire.Status)) ([]byte, iggywire.Status) {
	req, err := decode(body)
	if err != nil {
		return nil, statusOf(err)
	}
	return fn(req)
}

// commit09 is the handler of a metadata operation that decodes its body with decode and does op,
// with an empty result section when it succeeds (committed).
func commit09[R any](decode func([]byte) (R, error), op func(c *connection, req R) error) handler {
	return func(c *connection, body []byte) ([]byte, iggywire.Status) {
		return request09(body, decode, func(req R) ([]byte, iggywire.Status) { return c.committed(op(c, req), nil) })
	}
}

// route runs the handler of r. What has none is FeatureUnavailable: a replicated command sent as
// NonReplicated, a flush, an operation the dev broker does not do; an unknown command is
// InvalidCommand.
func (c *connection) route(r route09, body []byte) ([]byte, iggywire.Status) {
	if h, ok := handlers09[r]; ok {
		return h(c, body)
	}
	switch {
	case r.op != wire09.OpNonReplicated:
		c.srv.log.Warn("0.9 operation not supported by the dev broker", "operation", fmt.Sprint(r.op))
	case r.code != wire09.CmdFlushUnsavedBuffer && wire09.OperationOf(r.code) == wire09.OpNonReplicated:
		return nil, iggywire.StatusInvalidCommand
	}
	return nil, iggywire.StatusFeatureUnavailable
}

// committed answers a metadata operation: a pre-commit refusal (a decode error, or an argument
// the store refuses before it looks anything up) in the header status, any other error as a
// committed rejection in the result section, success as reply (which starts with the result
// section, framed).
func (c *connection) committed(err error, reply func() []byte) ([]byte, iggywire.Status) {
	var inv invalidArgument
	switch {
	case errors.As(err, &inv):
		return nil, inv.status
	case err != nil:
		c.out = wire09.AppendResultRejection(c.out[:0], statusOf(err))
		return c.out, 0
	case reply != nil:
		return reply(), 0
	}
	return c.framed(), 0
}

// framed starts a successful result-framed reply body.
func (c *connection) framed() []byte {
	c.out = wire09.AppendResultOK(c.out[:0])
	return c.out
}
