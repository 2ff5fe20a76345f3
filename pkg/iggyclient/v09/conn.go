package v09

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// requestTimeout bounds one exchange when the caller's context has no earlier deadline: the
// server drops some requests silently (§1, §6.4), and both SDKs wait 30 s.
const requestTimeout = 30 * time.Second

// maxKeptReply keeps a rare huge reply from pinning the connection's read buffer.
const maxKeptReply = 4 << 20

// conn is one TCP (or TLS) connection with its 0.9 session state (§4.3): a random client id,
// the session id of its login and the request counter. It runs lock-step: the client's wire
// token is held across every exchange, so it needs no lock of its own.
type conn struct {
	nc      net.Conn
	addr    string
	seq     uint64 // the client's connection number, which keys per-connection caches
	client  wire09.U128
	session uint64 // 0 until logged in
	counter uint64 // the next request number; starts at 1
	in      []byte // the read buffer of replies nobody asked to keep
	broken  error  // set once the stream is out of step; the connection is then only closed

	interrupt func() // ends the exchange in flight (made once: watch runs on every call)
}

func newConn(nc net.Conn, addr string, seq uint64) *conn {
	cn := &conn{nc: nc, addr: addr, seq: seq, client: newClientID(), counter: 1}
	cn.interrupt = func() { _ = cn.nc.SetDeadline(time.Unix(1, 0)) }
	return cn
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

// stamp writes the request header into frame[:256] (the body follows it) and numbers the request
// as §4.3 says: Register 0/0, metadata and Logout consume the counter, partition and
// non-replicated requests peek at it. It returns the request number the reply must echo.
func (cn *conn) stamp(frame []byte, op wire09.Operation, code wire09.Command) uint64 {
	h := wire09.RequestHeader{Client: cn.client, Operation: op}
	if op != wire09.OpRegister {
		h.Request, h.Session = cn.counter, cn.session
		if op.MetadataPlane() || op == wire09.OpDeleteSegments {
			cn.counter++
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

// watch makes the end of ctx interrupt whatever exchange runs on cn, for one call: stop ends the
// watch and reports false when ctx ended first (the connection is then out of step).
func (cn *conn) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return true }
	}
	return context.AfterFunc(ctx, cn.interrupt)
}

// roundTrip writes one stamped frame and reads its reply into *buf (cn.in when nil), checked in
// the §6.1 order: eviction, framing, request echo, status, operation, send body, result section.
// A status or a committed rejection is returned as a iggywire.Status (transient ones included;
// exchange replays those). Anything that leaves the stream out of step breaks the connection.
// The socket deadline is the caller's, at most requestTimeout away; watch interrupts it when the
// context ends, which is checked after setting it so that an end in between is not missed.
func (cn *conn) roundTrip(ctx context.Context, frame []byte, request uint64, op wire09.Operation, buf *[]byte) (reply, error) {
	if cn.broken != nil {
		return reply{}, cn.broken
	}
	deadline := time.Now().Add(requestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = cn.nc.SetDeadline(deadline)
	if err := ctx.Err(); err != nil {
		return reply{}, err
	}
	rep, err := cn.writeRead(frame, request, op, buf)
	if err != nil && cn.broken != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
	}
	return rep, err
}

func (cn *conn) writeRead(frame []byte, request uint64, op wire09.Operation, buf *[]byte) (reply, error) {
	if _, err := cn.nc.Write(frame); err != nil {
		return reply{}, cn.breakWith(fmt.Errorf("write %s request: %w", opName(op), err))
	}
	if buf == nil {
		buf = &cn.in
	}
	in, err := wire09.ReadFrame(cn.nc, *buf)
	if cap(in) <= maxKeptReply || buf != &cn.in {
		*buf = in[:0]
	}
	if err != nil {
		if errors.Is(err, wire09.ErrFrameSize) || errors.Is(err, wire09.ErrFrameType) {
			err = fmt.Errorf("%w: %w", errProtocol, err)
		}
		return reply{}, cn.breakWith(fmt.Errorf("read the %s reply: %w", opName(op), err))
	}
	switch wire09.FrameTypeOf(in) {
	case wire09.FrameEviction:
		ev, _ := wire09.DecodeEviction(in)
		return reply{}, cn.breakWith(&wire09.EvictionError{EvictionHeader: ev})
	case wire09.FrameReply:
	default:
		return reply{}, cn.breakWith(fmt.Errorf("%w: frame type %d answers a %s request", errProtocol, wire09.FrameTypeOf(in), opName(op)))
	}
	h, err := wire09.DecodeReplyHeader(in)
	if err != nil {
		return reply{}, cn.breakWith(fmt.Errorf("%w: %w", errProtocol, err))
	}
	if h.Request != request {
		return reply{}, cn.breakWith(fmt.Errorf("%w: reply echoes request %d, %d was sent", errProtocol, h.Request, request))
	}
	if h.Status != iggywire.StatusOK {
		return reply{}, h.Status
	}
	if h.Operation != op {
		return reply{}, cn.breakWith(fmt.Errorf("%w: reply echoes operation %d to a %s request", errProtocol, h.Operation, opName(op)))
	}
	body := wire09.Body(in)
	if op == wire09.OpSendMessages && len(body) == 0 {
		return reply{}, cn.breakWith(fmt.Errorf("%w: send reply without confirmations", errProtocol))
	}
	if !op.ResultFramed() || (op == wire09.OpRegister && len(body) == 0) {
		return reply{op: op, payload: body}, nil
	}
	payload, rejection, err := wire09.StripResult(body)
	if err != nil {
		return reply{}, cn.breakWith(fmt.Errorf("%w: %s reply: %w", errProtocol, opName(op), err))
	}
	if rejection != iggywire.StatusOK {
		return reply{}, rejection
	}
	return reply{op: op, payload: payload}, nil
}

// breakWith marks the connection unusable (its stream is out of step or gone) and closes it.
func (cn *conn) breakWith(err error) error {
	if cn.broken == nil {
		cn.broken = err
		_ = cn.nc.Close()
	}
	return err
}

func (cn *conn) close() { cn.breakWith(net.ErrClosed) }

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
