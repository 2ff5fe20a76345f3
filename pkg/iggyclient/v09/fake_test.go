package v09_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/v09"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// A scripted 0.9 node for what the single-node dev broker cannot do (transient answers, leader
// redirection, evictions on demand, broken replies). It reads real frames and answers with frames
// built by pkg/wire09; the handler scripts the answers.

// request is one frame the fake node received.
type request struct {
	conn   int // the node's connection number, from 1
	header wire09.RequestHeader
	body   []byte
	raw    []byte
}

func (r request) code() wire09.Command { return r.header.Code }

// hangUp, returned by a handler, closes the connection instead of answering; nil stays silent.
var hangUp = []byte{}

type handler func(r request) []byte

type fakeNode struct {
	addr   string
	mu     sync.Mutex
	reqs   []request
	conns  int
	handle handler
}

func startFake(t *testing.T, handle handler) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNode{addr: ln.Addr().String(), handle: handle}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.mu.Lock()
			n.conns++
			id := n.conns
			n.mu.Unlock()
			wg.Go(func() { n.serve(c, id) })
			t.Cleanup(func() { c.Close() })
		}
	})
	return n
}

func (n *fakeNode) serve(c net.Conn, id int) {
	defer c.Close()
	var buf []byte
	for {
		frame, err := wire09.ReadFrame(c, buf)
		if err != nil {
			return
		}
		h, _ := wire09.DecodeRequestHeader(frame)
		r := request{conn: id, header: h, raw: append([]byte(nil), frame...)}
		r.body = r.raw[wire09.HeaderSize:]
		n.mu.Lock()
		n.reqs = append(n.reqs, r)
		n.mu.Unlock()
		out := n.handle(r)
		if out != nil && len(out) == 0 {
			return
		}
		if out != nil {
			if _, err := c.Write(out); err != nil {
				return
			}
			if len(out) >= wire09.HeaderSize && int(wire09.FrameSize(out)) > len(out) {
				return // a truncated frame is followed by hanging up
			}
		}
		buf = frame
	}
}

func (n *fakeNode) requests() []request {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]request(nil), n.reqs...)
}

// count is how many requests matched f.
func (n *fakeNode) count(f func(request) bool) int {
	k := 0
	for _, r := range n.requests() {
		if f(r) {
			k++
		}
	}
	return k
}

// Reply builders.

func replyWith(r request, status iggywire.Status, body []byte) []byte {
	return wire09.AppendReply(nil, &wire09.ReplyHeader{Client: r.header.Client, Request: r.header.Request,
		Operation: r.header.Operation, Status: status}, body)
}

func ok(r request, body []byte) []byte { return replyWith(r, 0, body) }

func status(r request, s iggywire.Status) []byte { return replyWith(r, s, nil) }

// committed is a result-framed success with payload.
func committed(r request, payload []byte) []byte {
	return ok(r, append(wire09.AppendResultOK(nil), payload...))
}

func rejected(r request, code iggywire.Status) []byte {
	return ok(r, wire09.AppendResultRejection(nil, code))
}

func evict(r request, reason wire09.EvictionReason) []byte {
	return wire09.AppendEviction(nil, &wire09.EvictionHeader{Client: r.header.Client, Reason: reason})
}

// session is the session id the fake hands out.
const session = 7

// basics answers login (session 7), ping, and cluster metadata with status 3 (no roster, which
// the client takes as "stay"); it returns nil for anything else.
func basics(r request) []byte {
	switch {
	case r.header.Operation == wire09.OpRegister:
		return committed(r, wire09.AppendLoginReply(nil, wire09.LoginReply{Session: session, ProtocolVersion: wire09.ProtocolVersion}))
	case r.header.Operation == wire09.OpNonReplicated && r.code() == wire09.CmdPing:
		return ok(r, nil)
	case r.header.Operation == wire09.OpNonReplicated && r.code() == wire09.CmdGetClusterMetadata:
		return status(r, iggywire.StatusInvalidCommand)
	}
	return nil
}

// topicReply is a GetTopic answer for a topic of n partitions with the given current offsets.
func topicReply(r request, n uint32) []byte {
	b := wire09.AppendTopic(nil, wire09.Topic{ID: 0, PartitionsCount: n, Name: []byte("t")})
	for i := range n {
		b = wire09.AppendPartition(b, wire09.Partition{ID: i})
	}
	return ok(r, b)
}

func options(addr string, change ...func(*api.Options)) api.Options {
	o := api.Options{Address: addr, Username: "iggy", Password: "iggy", Protocol: api.Protocol09,
		HeartbeatInterval: -1, ReconnectMin: 10 * time.Millisecond, ReconnectMax: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
	for _, f := range change {
		f(&o)
	}
	return o
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func splitHostPort(t *testing.T, addr string) (string, uint16) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return host, uint16(p)
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// dialFake dials addr with options (changed by change) and closes the client when the test ends.
func dialFake(t *testing.T, addr string, change ...func(*api.Options)) api.Client {
	t.Helper()
	c, err := engine.DialClient(testContext(t), options(addr, change...), v09.NewProtocol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
