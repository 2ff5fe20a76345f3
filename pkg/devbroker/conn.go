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

// Frame limits (spec §1.4).
const (
	maxControlPayload = 10 << 20 // any command but SendMessages
	maxSendPayload    = 1 << 30  // SendMessages; far above what the SDK can send
	bufferSize        = 64 << 10
	keepBufferCap     = 16 << 20 // a larger request buffer is dropped after use
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
	reply   encoder  // reused response payload buffer
	ends    []uint32 // reused message boundaries of a SendMessages request
	polled  []byte   // reused copy of the messages of a poll reply

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
		err = c.serve()
	}
	switch {
	case v09:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errEvicted) {
			s.log.Debug("client connection closed", "client_id", sess.clientID, "protocol", Protocol09, "error", err)
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && s.isStopping():
		// Stop woke us between requests: say goodbye like the real server.
		c.writeStatus(iggywire.StatusDisconnected)
		_ = c.w.Flush()
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
		s.log.Debug("client connection closed", "client_id", sess.clientID, "error", err)
	}
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

// serve reads frames until the peer goes away or a frame cannot be trusted;
// it returns the reason the connection ends.
func (c *connection) serve() error {
	var header [8]byte
	for {
		if _, err := io.ReadFull(c.r, header[:]); err != nil {
			return err
		}
		length := binary.LittleEndian.Uint32(header[0:4])
		code := binary.LittleEndian.Uint32(header[4:8])
		if length < 4 {
			// The frame has no extent; like the real server, answer and read on.
			if err := c.finish(iggywire.StatusInvalidCommand); err != nil {
				return err
			}
			continue
		}
		size := uint64(length - 4)
		limit := uint64(maxControlPayload)
		if code == codeSendMessages {
			limit = maxSendPayload
		}
		if size > limit {
			// The real server would answer without draining and then read the
			// payload as frames; closing is the only way to stay in sync.
			c.writeStatus(iggywire.StatusInvalidCommand)
			_ = c.w.Flush()
			return errFrameTooLarge
		}
		payload, err := c.readPayload(int(size))
		if err != nil {
			return err
		}
		if err := c.finish(c.dispatch(code, payload)); err != nil {
			return err
		}
		if cap(c.request) > keepBufferCap {
			c.request = nil
		}
	}
}

var errFrameTooLarge = errors.New("request frame above the size limit")

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

// finish writes the error status of a failed command (handlers write their
// own OK replies) and flushes.
func (c *connection) finish(err error) error {
	if err != nil {
		var status iggywire.Status
		if !errors.As(err, &status) || status == iggywire.StatusOK {
			status = iggywire.StatusError
		}
		c.writeStatus(status)
	}
	return c.w.Flush()
}

func (c *connection) writeStatus(status iggywire.Status) {
	var frame [8]byte
	binary.LittleEndian.PutUint32(frame[0:4], uint32(status))
	_, _ = c.w.Write(frame[:])
}

// ok writes an OK reply with the given payload. A 1-byte payload would make
// the SDK skip it and desync, and no reply here has one.
func (c *connection) ok(payload []byte) {
	var frame [8]byte
	binary.LittleEndian.PutUint32(frame[4:8], uint32(len(payload)))
	_, _ = c.w.Write(frame[:])
	_, _ = c.w.Write(payload)
}

// newReply returns the reused reply encoder, emptied.
func (c *connection) newReply() *encoder {
	c.reply.buf = c.reply.buf[:0]
	return &c.reply
}
