package devbroker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Connection buffers.
const (
	bufferSize    = 64 << 10
	keepBufferCap = 16 << 20 // a larger request or reply buffer is dropped after use
)

// session is one connection's identity and login state. Only the
// connection's goroutine touches authenticated; GetClient on another
// connection reads userID, hence the atomic.
type session struct {
	clientID      uint32
	userID        atomic.Uint32
	authenticated bool
	address       string
	lastPing      atomic.Int64 // unix nanoseconds of the connect or the last ping (0.9: last request)
	stale         atomic.Bool  // dropped by the heartbeat check; every command answers 30 (0.9: evicted)
	v09           atomic.Bool  // the connection speaks Iggy 0.9
	wake          func()       // interrupts the connection's read, for a 0.9 eviction
}

// connection serves one client: a sequential request/response loop.
type connection struct {
	srv  *Server
	data *store
	sess *session
	r    *bufio.Reader
	w    *bufio.Writer

	request []byte   // reused request buffer
	out     []byte   // reused reply body (metadata answers)
	head    []byte   // reused 0.8 reply head
	ends    []uint32 // reused message boundaries of a SendMessages request
	polled  []byte   // reused poll reply: the prefix, then a copy of the messages

	s09 state09 // the 0.9 session, on a 0.9 connection
}

func (s *Server) serveConn(conn net.Conn, data *store) {
	defer conn.Close()
	sess := &session{clientID: s.nextClientID.Add(1), address: conn.RemoteAddr().String(),
		wake: func() { _ = conn.SetReadDeadline(time.Now()) }}
	sess.lastPing.Store(time.Now().UnixNano())
	s.mu.Lock()
	s.clients[sess.clientID] = sess
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.clients, sess.clientID)
		s.mu.Unlock()
		data.dropClient(sess.clientID)
	}()
	c := &connection{srv: s, data: data, sess: sess, r: bufio.NewReaderSize(conn, bufferSize), w: bufio.NewWriterSize(conn, bufferSize)}
	s.log.Debug("client connected", "client_id", sess.clientID, "address", sess.address)
	v09, err := c.speaks09()
	if err == nil && v09 {
		sess.v09.Store(true)
		err = c.serve09()
	} else if err == nil {
		err = c.serve08()
	}
	switch {
	case v09:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errEvicted) {
			s.log.Debug("client connection closed", "client_id", sess.clientID, "protocol", Protocol09, "error", err)
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && s.isStopping():
		// Stop woke us between requests: say goodbye like the real server.
		c.reply08(nil, iggywire.StatusDisconnected)
		_ = c.w.Flush()
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
		s.log.Debug("client connection closed", "client_id", sess.clientID, "error", err)
	}
}

// finishRequest sends the replies written and lets go of a request or poll buffer grown past
// keepBufferCap.
func (c *connection) finishRequest() error {
	if cap(c.request) > keepBufferCap {
		c.request = nil
	}
	if cap(c.polled) > keepBufferCap {
		c.polled = nil
	}
	return c.w.Flush()
}

// handler answers one request of either protocol: the reply body, or the status of a refusal.
// A 0.9 metadata handler puts a committed rejection in the body's result section instead.
type handler func(c *connection, body []byte) ([]byte, iggywire.Status)

// statusOf is the status a handler answers an error with: its iggywire.Status, else 1 (error).
func statusOf(err error) iggywire.Status {
	var status iggywire.Status
	if errors.As(err, &status) {
		return status
	}
	return iggywire.StatusError
}

// speaks09 tells which protocol the connection speaks: the configured one, or
// the one its first bytes show (a 0.9 request starts with a zero checksum, a
// 0.8 frame with its non-zero length).
func (c *connection) speaks09() (bool, error) {
	switch c.srv.cfg.Protocol {
	case Protocol08:
		return false, nil
	case Protocol09:
		return true, nil
	}
	head, err := c.r.Peek(4)
	if err != nil {
		return false, err
	}
	return binary.LittleEndian.Uint32(head) == 0, nil
}

// readPayload reads n bytes into the reused buffer. It grows the buffer only
// as bytes actually arrive, so a frame that lies about its length cannot make
// the server allocate memory the client never sent.
func (c *connection) readPayload(n int) ([]byte, error) {
	if n <= cap(c.request) {
		c.request = c.request[:n]
		_, err := io.ReadFull(c.r, c.request)
		return c.request, err
	}
	buf := c.request[:0]
	for len(buf) < n {
		step := min(n-len(buf), max(len(buf), bufferSize))
		buf = slices.Grow(buf, step)
		got, err := io.ReadFull(c.r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+got]
		if err != nil {
			c.request = buf[:0]
			return nil, err
		}
	}
	c.request = buf
	return buf, nil
}
