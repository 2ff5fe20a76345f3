package testkit

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Proxy is a real TCP listener between a client and an Iggy server (the dev broker) that
// misbehaves on demand, as a hung server or a hostile network would: it stops passing replies on,
// lies about a reply's length, or turns new connections away. It reads replies by the framing of
// one protocol, so it can count them.
type Proxy struct {
	ln       net.Listener
	target   string
	protocol string

	mu    sync.Mutex
	conns []*proxyConn
	hold  bool // new connections are closed at once
	count int  // connections accepted
}

// proxyConn is one proxied connection's reply rules.
type proxyConn struct {
	mu        sync.Mutex
	passLeft  int  // replies still passed on; < 0 without limit
	lieLength bool // the next reply announces 0xFFFFFFF0 bytes
}

// LiedLength is the length the proxy announces for a reply it lies about.
const LiedLength = 0xFFFFFFF0

// StartProxy listens on a free port and passes each connection on to target, whose replies are
// framed by protocol (iggyclient.Protocol08 or Protocol09). It stops with the test.
func StartProxy(tb testing.TB, target, protocol string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, protocol: protocol}
	var wg sync.WaitGroup
	var open sync.Map // net.Conn -> struct{}
	tb.Cleanup(func() {
		_ = ln.Close()
		open.Range(func(c, _ any) bool { _ = c.(net.Conn).Close(); return true })
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			pc := p.accepted()
			if pc == nil {
				_ = client.Close()
				continue
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			open.Store(client, struct{}{})
			open.Store(server, struct{}{})
			wg.Go(func() {
				_, _ = io.Copy(server, client)
				_ = server.Close()
			})
			wg.Go(func() {
				p.replies(pc, server, client)
				_ = client.Close()
			})
		}
	})
	return p
}

// Addr is where clients connect.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is how many connections the proxy has passed on so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// accepted registers a new connection, or returns nil while the proxy holds new ones off.
func (p *Proxy) accepted() *proxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold {
		return nil
	}
	p.count++
	pc := &proxyConn{passLeft: -1}
	p.conns = append(p.conns, pc)
	return pc
}

// Hold turns new connections away (closed at once, as by a server that is down) until Release.
// Connections already open are not touched.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = true
}

// Release lets new connections through again.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = false
}

// StallReplies makes every connection open now pass n more replies on and then none: the server
// looks hung, the connections stay open. Later connections are not touched.
func (p *Proxy) StallReplies(n int) {
	p.each(func(pc *proxyConn) { pc.passLeft = n })
}

// StallReplies0 is StallReplies(0): no reply passes on any more.
func (p *Proxy) StallReplies0() { p.StallReplies(0) }

// LieAboutNextReply makes every connection open now announce LiedLength bytes in its next reply.
func (p *Proxy) LieAboutNextReply() {
	p.each(func(pc *proxyConn) { pc.lieLength = true })
}

func (p *Proxy) each(fn func(*proxyConn)) {
	p.mu.Lock()
	conns := append([]*proxyConn(nil), p.conns...)
	p.mu.Unlock()
	for _, pc := range conns {
		pc.mu.Lock()
		fn(pc)
		pc.mu.Unlock()
	}
}

// replies reads the server's replies one frame at a time and passes them on by pc's rules.
func (p *Proxy) replies(pc *proxyConn, server io.Reader, client io.Writer) {
	var buf []byte
	for {
		frame, err := p.readReply(server, buf)
		if err != nil {
			return
		}
		buf = frame[:0]
		pc.mu.Lock()
		pass, lie := pc.passLeft != 0, pc.lieLength
		if pass && pc.passLeft > 0 {
			pc.passLeft--
		}
		if pass && lie {
			pc.lieLength = false
		}
		pc.mu.Unlock()
		if !pass {
			continue
		}
		if lie {
			p.lie(frame)
		}
		if _, err := client.Write(frame); err != nil {
			return
		}
	}
}

// readReply reads one whole reply frame into buf.
func (p *Proxy) readReply(r io.Reader, buf []byte) ([]byte, error) {
	if p.protocol == iggyclient.Protocol09 {
		return wire09.ReadFrame(r, buf)
	}
	head := append(buf[:0], make([]byte, wire08.ReplyHeadSize)...)
	if _, err := io.ReadFull(r, head); err != nil {
		return head, err
	}
	_, n := wire08.DecodeReplyHead(head)
	frame := append(head, make([]byte, n)...)
	_, err := io.ReadFull(r, frame[wire08.ReplyHeadSize:])
	return frame, err
}

// lie writes LiedLength into the frame's length field: a 0.8 reply head's payload length, a 0.9
// header's frame size.
func (p *Proxy) lie(frame []byte) {
	if p.protocol == iggyclient.Protocol09 {
		wire09.PutFrameSize(frame, LiedLength)
		return
	}
	status, _ := wire08.DecodeReplyHead(frame)
	wire08.AppendReplyHead(frame[:0], status, LiedLength)
}
