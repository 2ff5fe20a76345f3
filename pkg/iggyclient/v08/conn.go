package v08

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// maxMetadataReply bounds every reply but a poll's: the largest a 0.8 server sends for the
// requests this client makes (a topic of 1000 partitions, a stream with its topics, a group
// with its members) is far below it.
const maxMetadataReply = 16 << 20

// maxKeptReply keeps a rare huge reply from pinning the connection's read buffer.
const maxKeptReply = 4 << 20

// conn is one 0.8 connection: the engine's link and this protocol's scratch buffers. The
// server serves a connection's requests strictly in order, so requests written together are
// answered in that order.
type conn struct {
	*engine.Link
	req []byte // the request being built
	in  []byte // the read buffer of replies nobody asked to keep

	it  wire08.PollIterator    // the poll reply being decoded
	msg iggywire.PolledMessage // its current message

	members      map[*engine.Group]*membership // who this connection is in each group (assign.go)
	groupMembers []wire08.GroupMember          // the last member list read, reused
	groupParts   []uint32                      // its partition lists, reused
}

// build starts a request of code in the scratch buffer and appends its payload with body.
func (c *conn) build(code wire08.Command, body func([]byte) ([]byte, error)) ([]byte, error) {
	frame, start := wire08.StartRequest(c.req[:0], code)
	frame, err := body(frame)
	if err != nil {
		return nil, err
	}
	c.req = wire08.FinishRequest(frame, start)
	return c.req, nil
}

// call sends one request of code and returns its reply payload, at most limit bytes, valid until
// the next exchange on c. A refusal is the server's iggywire.Status.
func (c *conn) call(ctx context.Context, what string, code wire08.Command, limit int, body func([]byte) ([]byte, error)) ([]byte, error) {
	frame, err := c.build(code, body)
	if err != nil {
		return nil, err
	}
	if err := c.send(ctx, frame, what); err != nil {
		return nil, err
	}
	return c.read(what, limit, nil)
}

// send starts a request (its deadline) and writes frame: one request, or several.
func (c *conn) send(ctx context.Context, frame []byte, what string) error {
	if err := c.Begin(ctx); err != nil {
		return err
	}
	return c.Write(frame, what)
}

// read reads the next reply into *into (c.in when nil) and returns its payload. A status is the
// server's refusal (the stream stays in step); a reply larger than limit, or a stream that fails
// or ends, breaks the connection.
func (c *conn) read(what string, limit int, into *[]byte) ([]byte, error) {
	if into == nil {
		into = &c.in
	}
	reply, err := wire08.ReadReply(c.Reader(), *into, limit)
	if cap(reply) <= maxKeptReply || into != &c.in {
		*into = reply[:0]
	}
	if err == nil {
		return reply, nil
	}
	if status, ok := err.(iggywire.Status); ok {
		return nil, status
	}
	if errors.Is(err, wire08.ErrReplyTooLarge) {
		err = fmt.Errorf("%w: %w", api.ErrReplyTooLarge, err)
	}
	return nil, c.Fail(err, "read the "+what+" reply")
}

// noBody is a request without a payload.
func noBody(b []byte) ([]byte, error) { return b, nil }
