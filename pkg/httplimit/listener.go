package httplimit

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
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
// newConnGrace), so idle clients can never starve a probe of /health or /ready. With none to
// close (every connection busy) it is let in on the probe reserve (ProbeReserve: it is served a
// probe only, see Requests), and only with the reserve full too does it wait for one to end. A
// client at its own cap has its idle connections closed first, and a connection over it is closed
// at once. Wrap the plain TCP or Unix listener, below TLS, so handshakes count too; Listener sets
// srv.ConnState and srv.ConnContext to follow the connections.
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
	srv.ConnContext = func(ctx context.Context, conn net.Conn) context.Context {
		if tc := tracked(conn); tc != nil {
			return withConn(ctx, tc)
		}
		return ctx
	}
	return c
}

// connCap is the listener Listener returns.
type connCap struct {
	net.Listener
	max, perClient int

	mu       sync.Mutex
	changed  *sync.Cond // a connection closed or became idle, or the listener closed
	conns    map[*trackedConn]struct{}
	perAddr  map[string]int
	reserved int // connections of conns let in on the probe reserve
	closed   bool
}

// trackedConn is one served connection; its state fields are guarded by the cap's mutex.
type trackedConn struct {
	net.Conn
	owner    *connCap
	addr     string      // client IP, "" for a Unix socket
	reserve  atomic.Bool // let in beyond the cap: probes only, until promote finds it room
	probing  atomic.Bool // a connection of the reserve serving a probe: not to be closed for another
	admitted time.Time   // when it was let in
	state    http.ConnState
	since    time.Time // when it entered state
	// deadline is the last read deadline the server set (UnixNano; 0: none), which Requests
	// keeps its body floor within.
	deadline atomic.Int64
}

// SetReadDeadline records the server's deadline; on a connection of the probe reserve it never
// lets the request head take longer than newConnGrace.
func (c *trackedConn) SetReadDeadline(t time.Time) error {
	if c.reserve.Load() {
		c.owner.mu.Lock()
		fresh := c.state == http.StateNew
		c.owner.mu.Unlock()
		if limit := c.admitted.Add(newConnGrace); fresh && (t.IsZero() || t.After(limit)) {
			t = limit
		}
	}
	if t.IsZero() {
		c.deadline.Store(0)
	} else {
		c.deadline.Store(t.UnixNano())
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline sets both deadlines, the read one through SetReadDeadline.
func (c *trackedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// lastReadDeadline is the read deadline last set; zero for none.
func (c *trackedConn) lastReadDeadline() time.Time {
	if n := c.deadline.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
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
	reserve := false
	for c.max > 0 && len(c.conns)-c.reserved >= c.max {
		if c.closed {
			return nil, false
		}
		if v := c.idlest(""); v != nil {
			victims = append(victims, c.forget(v))
			continue
		}
		if c.reserved < ProbeReserve {
			reserve = true // a probe is served at once on it (Requests): probes never wait behind the cap
			break
		}
		if v := c.oldestUnprobed(); v != nil {
			// The reserve is full of connections that serve no probe (a request head not there
			// yet, a request waiting for room): the oldest makes way, so a probe still gets in.
			victims = append(victims, c.forget(v))
			reserve = true
			break
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
	now := time.Now()
	tc := &trackedConn{Conn: conn, owner: c, addr: addr, admitted: now, state: http.StateNew, since: now}
	tc.reserve.Store(reserve)
	c.conns[tc] = struct{}{}
	if reserve {
		c.reserved++
	}
	if addr != "" {
		c.perAddr[addr]++
	}
	return tc, true
}

// oldestUnprobed is the oldest connection of the probe reserve that serves no probe. Callers
// hold mu.
func (c *connCap) oldestUnprobed() *trackedConn {
	var out *trackedConn
	for tc := range c.conns {
		if tc.reserve.Load() && !tc.probing.Load() && (out == nil || tc.admitted.Before(out.admitted)) {
			out = tc
		}
	}
	return out
}

// promote turns tc, a connection of the probe reserve that asks for more than a probe, into one
// counted within the cap: it makes room as admit does (closing the idlest connection, or one
// silent past newConnGrace), waiting at most newConnGrace for one. False when there was none in
// time, when tc was closed to make way for a probe meanwhile, or when the listener closed.
func (c *connCap) promote(tc *trackedConn) bool {
	giveUp := time.Now().Add(newConnGrace)
	var victims []*trackedConn
	defer func() {
		for _, v := range victims {
			_ = v.Conn.Close()
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.conns)-c.reserved >= c.max {
		if _, ok := c.conns[tc]; c.closed || !ok {
			return false
		}
		if v := c.idlest(""); v != nil && v != tc {
			victims = append(victims, c.forget(v))
			continue
		}
		if !time.Now().Before(giveUp) {
			return false // every connection in the cap came since tc, or is busy
		}
		wake := time.AfterFunc(min(newConnGrace, time.Until(giveUp)), func() {
			c.mu.Lock()
			c.changed.Broadcast()
			c.mu.Unlock()
		})
		c.changed.Wait()
		wake.Stop()
	}
	if _, ok := c.conns[tc]; !ok {
		return false
	}
	tc.reserve.Store(false)
	c.reserved--
	return true
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
	if tc.reserve.Load() {
		c.reserved--
	}
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

// tracked is the trackedConn under conn (a TLS connection's own), nil for another.
func tracked(conn net.Conn) *trackedConn {
	if t, ok := conn.(*tls.Conn); ok {
		conn = t.NetConn()
	}
	tc, _ := conn.(*trackedConn)
	return tc
}

// connState follows the server's view of each connection (set as http.Server.ConnState).
func (c *connCap) connState(conn net.Conn, state http.ConnState) {
	tc := tracked(conn)
	if tc == nil {
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
