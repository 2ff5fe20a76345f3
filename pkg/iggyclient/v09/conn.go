package v09

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// maxKeptReply keeps a rare huge reply from pinning the connection's read buffer.
const maxKeptReply = 4 << 20

// conn is one connection with its 0.9 session state (§4.3): a random client id, the session id
// of its login and the request counter, on the engine's link.
type conn struct {
	*engine.Link
	client  wire09.U128
	session uint64 // 0 until logged in
	counter uint64 // the next request number; starts at 1
	req     []byte // the request being built: header space, then body
	in      []byte // the read buffer of replies nobody asked to keep

	it  wire09.PollIterator    // the poll reply being decoded
	msg iggywire.PolledMessage // its current message
}

// newClientID draws a random non-zero u128 (§3.2).
func newClientID() wire09.U128 {
	var b [16]byte
	for {
		_, _ = rand.Read(b[:])
		id := wire09.U128{Lo: binary.LittleEndian.Uint64(b[:]), Hi: binary.LittleEndian.Uint64(b[8:])}
		if !id.IsZero() {
			return id
		}
	}
}

// request starts a request in the scratch buffer: 256 bytes of header space, stamped when sent.
func (c *conn) request() []byte {
	c.req = append(c.req[:0], make([]byte, wire09.HeaderSize)...)
	return c.req
}

// stamp writes the request header into frame[:256] (the body follows it) and numbers the request
// as §4.3 says: Register 0/0, metadata and Logout consume the counter, partition and
// non-replicated requests peek at it. It returns the request number the reply must echo.
func (c *conn) stamp(frame []byte, op wire09.Operation, code wire09.Command) uint64 {
	h := wire09.RequestHeader{Client: c.client, Operation: op}
	if op != wire09.OpRegister {
		h.Request, h.Session = c.counter, c.session
		if op.MetadataPlane() || op == wire09.OpDeleteSegments {
			c.counter++
		}
	}
	if op == wire09.OpNonReplicated {
		h.Code = code
	}
	wire09.AppendRequestHeader(frame[:0], &h)
	wire09.SetFrameSize(frame)
	return h.Request
}

// reply is one decoded answer: its body with the result section stripped.
type reply struct {
	op      wire09.Operation
	payload []byte
}

// roundTrip writes one stamped frame and reads its reply into *buf (c.in when nil), checked in
// the §6.1 order: eviction, framing, request echo, status, operation, send body, result section.
// A status or a committed rejection is returned as an iggywire.Status (transient ones included;
// exchange replays those). Anything that leaves the stream out of step breaks the connection.
func (c *conn) roundTrip(ctx context.Context, frame []byte, request uint64, op wire09.Operation, buf *[]byte) (reply, error) {
	if err := c.Begin(ctx); err != nil {
		return reply{}, err
	}
	if err := c.Write(frame, opName(op)); err != nil {
		return reply{}, err
	}
	if buf == nil {
		buf = &c.in
	}
	in, err := wire09.ReadFrame(c.Reader(), *buf)
	if cap(in) <= maxKeptReply || buf != &c.in {
		*buf = in[:0]
	}
	if err != nil {
		if errors.Is(err, wire09.ErrFrameSize) {
			err = fmt.Errorf("%w: %w", api.ErrReplyTooLarge, err)
		} else if errors.Is(err, wire09.ErrFrameType) {
			err = fmt.Errorf("%w: %w", engine.ErrMalformed, err)
		}
		return reply{}, c.Fail(err, "read the "+opName(op)+" reply")
	}
	return c.check(in, request, op)
}

// check reads a frame as the reply to request.
func (c *conn) check(in []byte, request uint64, op wire09.Operation) (reply, error) {
	switch wire09.FrameTypeOf(in) {
	case wire09.FrameEviction:
		ev, _ := wire09.DecodeEviction(in)
		return reply{}, c.Break(&wire09.EvictionError{EvictionHeader: ev})
	case wire09.FrameReply:
	default:
		return reply{}, c.Malformed("frame type %d answers a %s request", wire09.FrameTypeOf(in), opName(op))
	}
	h, err := wire09.DecodeReplyHeader(in)
	if err != nil {
		return reply{}, c.Malformed("%v", err)
	}
	if h.Request != request {
		return reply{}, c.Malformed("reply echoes request %d, %d was sent", h.Request, request)
	}
	if h.Status != iggywire.StatusOK {
		return reply{}, h.Status
	}
	if h.Operation != op {
		return reply{}, c.Malformed("reply echoes operation %d to a %s request", h.Operation, opName(op))
	}
	body := wire09.Body(in)
	if op == wire09.OpSendMessages && len(body) == 0 {
		return reply{}, c.Malformed("send reply without confirmations")
	}
	if !op.ResultFramed() || (op == wire09.OpRegister && len(body) == 0) {
		return reply{op: op, payload: body}, nil
	}
	payload, rejection, err := wire09.StripResult(body)
	if err != nil {
		return reply{}, c.Malformed("%s reply: %v", opName(op), err)
	}
	if rejection != iggywire.StatusOK {
		return reply{}, rejection
	}
	return reply{op: op, payload: payload}, nil
}

// opName names an operation in errors.
func opName(op wire09.Operation) string {
	switch op {
	case wire09.OpRegister:
		return "login"
	case wire09.OpNonReplicated:
		return "read"
	case wire09.OpLogout:
		return "logout"
	case wire09.OpSendMessages:
		return "send"
	case wire09.OpStoreConsumerOffset:
		return "store offset"
	case wire09.OpDeleteConsumerOffset:
		return "delete offset"
	}
	return fmt.Sprintf("operation %d", op)
}
