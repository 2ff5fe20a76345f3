package httplimit

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// newConnGrace is how long a connection may stay without a complete first request before it counts
// as idle: honest clients send their headers at once, a slow one that trickles them (slowloris) is
// then the first to make room.
const newConnGrace = 2 * time.Second

// Listener caps the connections srv serves from ln at l.MaxConnections, and those of one client IP
// address at l.MaxConnectionsPerClient (0 switches either off). At the cap a new connection makes
// room by closing the longest-idle keep-alive connection (or one that has sent no request for
// newConnGrace), so idle clients can never starve a probe of /health or /ready; with none to close it
// waits for one to end. A client at its own cap has its idle connections closed first, and a
// connection over it is closed at once. Wrap the plain TCP or Unix listener, below TLS, so
// handshakes count too; Listener sets srv.ConnState to follow the connections.
func Listener(srv *http.Server, ln net.Listener, l config.HTTPLimits) net.Listener {
	if l.MaxConnections == 0 && l.MaxConnectionsPerClient == 0 {
		return ln
	}
	c := &connCap{
		Listener:  ln,
		max:       int(l.MaxConnections),
		perClient: int(l.MaxConnectionsPerClient),
		conns:     map[*trackedConn]struct{}{},
		perAddr:   map[string]int{},
	}
	c.changed = sync.NewCond(&c.mu)
	srv.ConnState = c.connState
	return c
}

// connCap is the listener Listener returns.
type connCap struct {
	net.Listener
	max, perClient int

	mu      sync.Mutex
	changed *sync.Cond // a connection closed or became idle, or the listener closed
	conns   map[*trackedConn]struct{}
	perAddr map[string]int
	closed  bool
}

// trackedConn is one served connection; its state fields are guarded by the cap's mutex.
type trackedConn struct {
	net.Conn
	owner *connCap
	addr  string // client IP, "" for a Unix socket
	state http.ConnState
	since time.Time // when it entered state
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.owner.release(c)
	return err
}

func (c *connCap) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc, ok := c.admit(conn); ok {
			return tc, nil
		}
		_ = conn.Close()
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return nil, net.ErrClosed
		}
	}
}

// admit registers conn when there is room for it, closing idle connections to make room; false
// means conn is to be closed (its client is at its cap with nothing idle, or the listener closed).
func (c *connCap) admit(conn net.Conn) (*trackedConn, bool) {
	addr := clientIP(conn.RemoteAddr())
	var victims []*trackedConn
	defer func() {
		for _, v := range victims {
			_ = v.Conn.Close() // the server's read fails and it closes the tracked conn
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perClient > 0 && addr != "" && c.perAddr[addr] >= c.perClient {
		v := c.idlest(addr)
		if v == nil {
			return nil, false
		}
		victims = append(victims, c.forget(v))
	}
	for c.max > 0 && len(c.conns) >= c.max {
		if c.closed {
			return nil, false
		}
		if v := c.idlest(""); v != nil {
			victims = append(victims, c.forget(v))
			continue
		}
		// Nothing is idle yet; look again when something changes or a new connection goes stale.
		wake := time.AfterFunc(newConnGrace, func() {
			c.mu.Lock()
			c.changed.Broadcast()
			c.mu.Unlock()
		})
		c.changed.Wait()
		wake.Stop()
	}
	tc := &trackedConn{Conn: conn, owner: c, addr: addr, state: http.StateNew, since: time.Now()}
	c.conns[tc] = struct{}{}
	if addr != "" {
		c.perAddr[addr]++
	}
	return tc, true
}

// idlest is the connection to close first, of client addr or of any client when addr is "": the
// longest idle keep-alive connection, else the oldest that sent no request within newConnGrace.
func (c *connCap) idlest(addr string) *trackedConn {
	var idle, fresh *trackedConn
	staleBefore := time.Now().Add(-newConnGrace)
	for tc := range c.conns {
		if addr != "" && tc.addr != addr {
			continue
		}
		switch {
		case tc.state == http.StateIdle && (idle == nil || tc.since.Before(idle.since)):
			idle = tc
		case tc.state == http.StateNew && tc.since.Before(staleBefore) && (fresh == nil || tc.since.Before(fresh.since)):
			fresh = tc
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// forget removes tc from the count (once) and returns it. Callers hold mu.
func (c *connCap) forget(tc *trackedConn) *trackedConn {
	if _, ok := c.conns[tc]; !ok {
		return tc
	}
	delete(c.conns, tc)
	if tc.addr != "" {
		if c.perAddr[tc.addr]--; c.perAddr[tc.addr] <= 0 {
			delete(c.perAddr, tc.addr)
		}
	}
	c.changed.Broadcast()
	return tc
}

func (c *connCap) release(tc *trackedConn) {
	c.mu.Lock()
	c.forget(tc)
	c.mu.Unlock()
}

// connState follows the server's view of each connection (set as http.Server.ConnState).
func (c *connCap) connState(conn net.Conn, state http.ConnState) {
	if t, ok := conn.(*tls.Conn); ok {
		conn = t.NetConn()
	}
	tc, ok := conn.(*trackedConn)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if state == http.StateClosed {
		c.forget(tc)
		return
	}
	tc.state, tc.since = state, time.Now()
	if state == http.StateIdle {
		c.changed.Broadcast()
	}
}

func (c *connCap) Close() error {
	c.mu.Lock()
	c.closed = true
	c.changed.Broadcast()
	c.mu.Unlock()
	return c.Listener.Close()
}

// clientIP is the address connections are counted per: the peer's IP, "" for a Unix socket.
func clientIP(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return ""
}
