package testkit

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Raw09 is a hand-driven Iggy 0.9 connection for protocol tests: it builds
// frames with pkg/wire09, numbers requests as the SDKs do (docs/iggy-protocol-0.9.md §4.3) and
// reads replies and evictions. It checks nothing beyond the framing; tests
// assert on what comes back.
type Raw09 struct {
	tb      testing.TB
	conn    net.Conn
	Client  wire09.U128 // the client id of the next requests
	Session uint64      // bound by Login
	Counter uint64      // the next request number of a numbered request
	buf     []byte
}

// Reply09 is one frame read from a Raw09: a reply or an eviction.
type Reply09 struct {
	Frame    []byte
	Header   wire09.ReplyHeader
	Body     []byte
	Eviction *wire09.EvictionHeader
}

var rawClientIDs atomic.Uint64

// replyTimeout bounds every read, so a missing reply fails the test instead of hanging it.
const replyTimeout = 10 * time.Second

// DialRaw09 connects to addr with a fresh non-zero client id; the connection
// closes when the test ends.
func DialRaw09(tb testing.TB, addr string) *Raw09 {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial %s: %v", addr, err)
	}
	return NewRaw09(tb, conn)
}

// NewRaw09 drives conn (for instance a TLS client connection) as DialRaw09
// does; it is closed when the test ends.
func NewRaw09(tb testing.TB, conn net.Conn) *Raw09 {
	tb.Cleanup(func() { _ = conn.Close() })
	return &Raw09{tb: tb, conn: conn, Client: wire09.U128{Lo: 0x1000 + rawClientIDs.Add(1), Hi: 0x0909}, Counter: 1}
}

// Frame builds a request numbered as the SDKs number it, without sending it
// or moving the counter: Register 0/0, everything else the counter and the
// bound session.
func (c *Raw09) Frame(op wire09.Operation, code wire09.Command, body []byte) []byte {
	h := wire09.RequestHeader{Client: c.Client, Operation: op, Request: c.Counter, Session: c.Session}
	if op == wire09.OpNonReplicated {
		h.Code = code
	}
	if op == wire09.OpRegister {
		h.Request, h.Session = 0, 0
	}
	return wire09.AppendRequest(nil, &h, body)
}

// Do sends a request and reads its answer; metadata operations and Logout
// then consume a request number.
func (c *Raw09) Do(op wire09.Operation, code wire09.Command, body []byte) Reply09 {
	c.tb.Helper()
	c.Write(c.Frame(op, code, body))
	if op.MetadataPlane() {
		c.Counter++
	}
	return c.Read()
}

// Login registers with username and password and binds the session; it fails
// the test unless the server accepts.
func (c *Raw09) Login(username, password string) wire09.LoginReply {
	c.tb.Helper()
	body, err := wire09.AppendLoginPassword(nil, wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion,
		SDKName: []byte("testkit"), SDKVersion: []byte("0.9.0")}, []byte(username), []byte(password))
	if err != nil {
		c.tb.Fatal(err)
	}
	r := c.Do(wire09.OpRegister, 0, body)
	login, err := wire09.DecodeLoginReply(r.Payload(c.tb))
	if err != nil {
		c.tb.Fatalf("login reply: %v", err)
	}
	c.Session, c.Counter = login.Session, 1
	return login
}

// Write sends raw bytes.
func (c *Raw09) Write(b []byte) {
	c.tb.Helper()
	if _, err := c.conn.Write(b); err != nil {
		c.tb.Fatalf("write: %v", err)
	}
}

// Read reads the next frame: a reply or an eviction.
func (c *Raw09) Read() Reply09 {
	c.tb.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(replyTimeout))
	frame, err := wire09.ReadFrame(c.conn, c.buf)
	if err != nil {
		c.tb.Fatalf("read a 0.9 reply: %v", err)
	}
	c.buf = frame[:0]
	frame = append([]byte(nil), frame...)
	if wire09.FrameTypeOf(frame) == wire09.FrameEviction {
		ev, _ := wire09.DecodeEviction(frame)
		return Reply09{Frame: frame, Eviction: &ev}
	}
	h, err := wire09.DecodeReplyHeader(frame)
	if err != nil {
		c.tb.Fatalf("read a 0.9 reply: %v", err)
	}
	return Reply09{Frame: frame, Header: h, Body: wire09.Body(frame)}
}

// ReadInto reads the next frame into buf (reused when large enough) without
// copying or decoding it, for benchmarks.
func (c *Raw09) ReadInto(buf []byte) []byte {
	c.tb.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(replyTimeout))
	frame, err := wire09.ReadFrame(c.conn, buf)
	if err != nil {
		c.tb.Fatalf("read a 0.9 frame: %v", err)
	}
	return frame
}

// ExpectClosed fails the test unless the server closes the connection (after
// any frames it still sends, which are discarded).
func (c *Raw09) ExpectClosed() {
	c.tb.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(replyTimeout))
	buf := make([]byte, 4096)
	for {
		_, err := c.conn.Read(buf)
		var netErr net.Error
		switch {
		case err == nil:
			continue
		case errors.As(err, &netErr) && netErr.Timeout():
			c.tb.Fatal("the server kept the connection open")
		case errors.Is(err, io.EOF):
			return
		default:
			return // reset by peer is a close too
		}
	}
}

// Close closes the connection.
func (c *Raw09) Close() { _ = c.conn.Close() }

// Status is the reply's header status (0 for an eviction).
func (r Reply09) Status() iggywire.Status { return r.Header.Status }

// Payload strips the result section of a result-framed reply (or returns the
// body of any other reply) and fails the test on an eviction, a status or a
// rejection.
func (r Reply09) Payload(tb testing.TB) []byte {
	tb.Helper()
	if r.Eviction != nil {
		tb.Fatalf("evicted: %v", &wire09.EvictionError{EvictionHeader: *r.Eviction})
	}
	if r.Header.Status != 0 {
		tb.Fatalf("operation %d denied: %v", r.Header.Operation, r.Header.Status)
	}
	if !r.Header.Operation.ResultFramed() || (r.Header.Operation == wire09.OpRegister && len(r.Body) == 0) {
		return r.Body
	}
	payload, rejection, err := wire09.StripResult(r.Body)
	if err != nil {
		tb.Fatalf("operation %d: %v", r.Header.Operation, err)
	}
	if rejection != 0 {
		tb.Fatalf("operation %d rejected: %v", r.Header.Operation, rejection)
	}
	return payload
}

// Rejection is the code of a committed rejection (0 for a success), failing
// the test on anything that is not a result-framed reply.
func (r Reply09) Rejection(tb testing.TB) iggywire.Status {
	tb.Helper()
	if r.Eviction != nil || r.Header.Status != 0 {
		tb.Fatalf("want a result-framed reply, got eviction %v status %v", r.Eviction, r.Header.Status)
	}
	_, rejection, err := wire09.StripResult(r.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return rejection
}
