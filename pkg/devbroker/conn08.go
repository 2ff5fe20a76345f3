package devbroker

import (
	"errors"
	"io"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// The Iggy 0.8 side of a connection: length-prefixed frames served in order, one
// reply each, [status u32][length u32][payload].

// Frame limits.
const maxSendPayload = 1 << 30 // SendMessages; far above what the SDK can send

// handlers08 answers each 0.8 command; an unknown code is InvalidCommand.
var handlers08 = map[wire08.Command]handler{
	wire08.CmdPing:               (*connection).ping08,
	wire08.CmdLoginUser:          (*connection).loginUser08,
	wire08.CmdLoginWithToken:     (*connection).loginWithToken08,
	wire08.CmdLogoutUser:         (*connection).logout08,
	wire08.CmdGetClusterMetadata: (*connection).clusterMetadata08,
	wire08.CmdGetMe:              (*connection).getMe08,
	wire08.CmdGetClient:          (*connection).getClient08,
	wire08.CmdSendMessages:       (*connection).send08,
	wire08.CmdPollMessages:       (*connection).poll08,
	wire08.CmdGetConsumerOffset:  (*connection).getOffset08,
	wire08.CmdStoreConsumerOffset: do08(offsetRequest08(wire08.CmdStoreConsumerOffset), func(c *connection, req wire08.OffsetRequest) error {
		return c.data.storeOffset(req.ConsumerOffsetRef, c.sess.clientID, req.Offset)
	}),
	wire08.CmdDeleteConsumerOffset: do08(offsetRequest08(wire08.CmdDeleteConsumerOffset), func(c *connection, req wire08.OffsetRequest) error {
		return c.data.deleteOffset(req.ConsumerOffsetRef, c.sess.clientID)
	}),
	wire08.CmdGetStream:    (*connection).getStream08,
	wire08.CmdGetStreams:   (*connection).getStreams08,
	wire08.CmdCreateStream: (*connection).createStream08,
	wire08.CmdDeleteStream: do08(wire08.DecodeStreamID, func(c *connection, id iggywire.Identifier) error {
		return c.data.deleteStream(id)
	}),
	wire08.CmdGetTopic:    (*connection).getTopic08,
	wire08.CmdGetTopics:   (*connection).getTopics08,
	wire08.CmdCreateTopic: (*connection).createTopic08,
	wire08.CmdDeleteTopic: do08(wire08.DecodeTopicRef, func(c *connection, ref iggywire.TopicRef) error {
		return c.data.deleteTopic(ref)
	}),
	wire08.CmdCreatePartitions: do08(wire08.DecodePartitions, func(c *connection, req wire08.Partitions) error {
		return c.data.createPartitions(req.TopicRef, req.Count)
	}),
	wire08.CmdDeletePartitions: do08(wire08.DecodePartitions, func(c *connection, req wire08.Partitions) error {
		return c.data.deletePartitions(req.TopicRef, req.Count)
	}),
	wire08.CmdGetConsumerGroup:    (*connection).getGroup08,
	wire08.CmdGetConsumerGroups:   (*connection).getGroups08,
	wire08.CmdCreateConsumerGroup: (*connection).createGroup08,
	wire08.CmdDeleteConsumerGroup: do08(groupRequest08(wire08.CmdDeleteConsumerGroup), func(c *connection, req wire08.GroupRequest) error {
		return c.data.deleteGroup(groupRef08(req))
	}),
	wire08.CmdJoinConsumerGroup: do08(groupRequest08(wire08.CmdJoinConsumerGroup), func(c *connection, req wire08.GroupRequest) error {
		return c.data.joinGroup(groupRef08(req), c.sess.clientID)
	}),
	wire08.CmdLeaveConsumerGroup: do08(groupRequest08(wire08.CmdLeaveConsumerGroup), func(c *connection, req wire08.GroupRequest) error {
		return c.data.leaveGroup(groupRef08(req), c.sess.clientID)
	}),
}

var errFrameTooLarge = errors.New("request frame above the size limit")

// serve08 reads frames until the peer goes away or a frame cannot be trusted; it returns the
// reason the connection ends.
func (c *connection) serve08() error {
	head := make([]byte, wire08.RequestHeadSize)
	for {
		if _, err := io.ReadFull(c.r, head); err != nil {
			return err
		}
		length, code := wire08.DecodeRequestHead(head)
		if length < 4 {
			// The frame has no extent; like the real server, answer and read on.
			c.reply08(nil, iggywire.StatusInvalidCommand)
			if err := c.w.Flush(); err != nil {
				return err
			}
			continue
		}
		size := uint64(length - 4)
		limit := uint64(wire08.MaxCommandPayload)
		if code == wire08.CmdSendMessages {
			limit = maxSendPayload
		}
		if size > limit {
			// The real server would answer without draining and then read the
			// payload as frames; closing is the only way to stay in sync.
			c.reply08(nil, iggywire.StatusInvalidCommand)
			_ = c.w.Flush()
			return errFrameTooLarge
		}
		payload, err := c.readPayload(int(size))
		if err != nil {
			return err
		}
		c.reply08(c.dispatch08(code, payload))
		if err := c.finishRequest(); err != nil {
			return err
		}
	}
}

// dispatch08 runs one command. Like the real server, a handler decodes the payload first
// (errors 3 and 4), then checks the login (40), then resolves entities.
func (c *connection) dispatch08(code wire08.Command, payload []byte) ([]byte, iggywire.Status) {
	if c.sess.stale.Load() {
		return nil, iggywire.StatusStaleClient // the session is gone; the client must connect again
	}
	h, ok := handlers08[code]
	if !ok {
		return nil, iggywire.StatusInvalidCommand
	}
	return h(c, payload)
}

// reply08 writes one reply: the payload with status OK, or the error status alone. A 1-byte
// payload would make the SDK skip it and desync, and no reply here has one.
func (c *connection) reply08(payload []byte, status iggywire.Status) {
	if status != iggywire.StatusOK {
		payload = nil
	}
	c.head = wire08.AppendReplyHead(c.head[:0], status, len(payload))
	_, _ = c.w.Write(c.head)
	_, _ = c.w.Write(payload)
}

// decoded08 is the status of a request: its decode error, else Unauthenticated (40) before a
// login, else OK.
func (c *connection) decoded08(err error) iggywire.Status {
	if err != nil {
		return statusOf(err)
	}
	if !c.sess.authenticated {
		return iggywire.StatusUnauthenticated
	}
	return iggywire.StatusOK
}

// request08 answers a command: its payload decoded with decode and the login checked
// (decoded08), then fn.
func request08[R any](c *connection, payload []byte, decode func([]byte) (R, error), fn func(R) ([]byte, iggywire.Status)) ([]byte, iggywire.Status) {
	req, err := decode(payload)
	if st := c.decoded08(err); st != iggywire.StatusOK {
		return nil, st
	}
	return fn(req)
}

// do08 is the handler of a command that decodes its payload with decode and does op: an empty
// OK, or op's status.
func do08[R any](decode func([]byte) (R, error), op func(c *connection, req R) error) handler {
	return func(c *connection, payload []byte) ([]byte, iggywire.Status) {
		return request08(c, payload, decode, func(req R) ([]byte, iggywire.Status) { return answer08(op(c, req), nil) })
	}
}

// answer08 is the answer of a command that did what err says: its status, or OK with the reply
// (an empty one without reply).
func answer08(err error, reply func() []byte) ([]byte, iggywire.Status) {
	switch {
	case err != nil:
		return nil, statusOf(err)
	case reply == nil:
		return nil, iggywire.StatusOK
	}
	return reply(), iggywire.StatusOK
}
