package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

// Link is one TCP (or TLS) connection as both protocols use it: the socket, a deadline on every
// request, and the end of the connection once its byte stream can no longer be trusted. A
// protocol's connection embeds it and adds its framing; the engine's wire token makes whoever
// holds it the only user, so Link needs no lock of its own.
type Link struct {
	nc      net.Conn
	addr    string
	seq     uint64 // the engine's connection number, which keys per-connection caches
	timeout time.Duration
	broken  error

	// The request in flight: its context and whether the request timeout (rather than the
	// context's deadline) bounds it, to tell a silent server from a caller that gave up.
	ctx      context.Context
	ownLimit bool

	interrupt func() // ends the exchange in flight (made once: watch runs on every call)
}

func newLink(nc net.Conn, addr string, seq uint64, timeout time.Duration) *Link {
	l := &Link{nc: nc, addr: addr, seq: seq, timeout: timeout, ctx: context.Background()}
	l.interrupt = func() { _ = l.nc.SetDeadline(time.Unix(1, 0)) }
	return l
}

// Transport is the link itself, so that a protocol connection embedding it is an engine Conn.
func (l *Link) Transport() *Link { return l }

// Addr is the address this link dialled.
func (l *Link) Addr() string { return l.addr }

// Seq numbers the engine's connections: a cache of the connection's state (a 0.9 group
// assignment) is valid while Seq is unchanged.
func (l *Link) Seq() uint64 { return l.seq }

// Broken is why the link can no longer be used, or nil.
func (l *Link) Broken() error { return l.broken }

// Begin starts a request: the socket's deadline is the context's, at most the request timeout
// away. It fails when the link is broken or ctx already ended (checked after setting the
// deadline, so an end in between is not missed: watch interrupts a later one).
func (l *Link) Begin(ctx context.Context) error {
	if l.broken != nil {
		return l.broken
	}
	deadline := time.Now().Add(l.timeout)
	l.ctx, l.ownLimit = ctx, true
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, l.ownLimit = d, false
	}
	_ = l.nc.SetDeadline(deadline)
	return ctx.Err()
}

// Write sends a whole request (or several), named what in errors; a failure breaks the link.
func (l *Link) Write(b []byte, what string) error {
	if _, err := l.nc.Write(b); err != nil {
		return l.Fail(err, "write the "+what+" request")
	}
	return nil
}

// Reader is the socket, for a protocol's frame reader.
func (l *Link) Reader() io.Reader { return l.nc }

// Fail breaks the link for err, met while doing what, and returns it named: a deadline the
// request timeout set is ErrTimeout, one the caller's context set is the context's error, a reply
// too large is ErrReplyTooLarge, anything else the stream's error.
func (l *Link) Fail(err error, what string) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && l.ctx.Err() == nil && l.ownLimit:
		err = fmt.Errorf("%s: %w (request_timeout %s)", what, api.ErrTimeout, l.timeout)
	case errors.Is(err, os.ErrDeadlineExceeded) && l.ctx.Err() != nil:
		err = fmt.Errorf("%s: %w (%w)", what, l.ctx.Err(), err)
	default:
		err = fmt.Errorf("%s: %w", what, err)
	}
	return l.Break(err)
}

// Break marks the link unusable (its stream is out of step or gone) and closes it; the first
// reason sticks. It returns err.
func (l *Link) Break(err error) error {
	if l.broken == nil {
		l.broken = err
		_ = l.nc.Close()
	}
	return err
}

// Malformed breaks the link for a reply that does not decode (ErrMalformed).
func (l *Link) Malformed(format string, args ...any) error {
	return l.Break(fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...)))
}

func (l *Link) close() { l.Break(net.ErrClosed) }

// watch makes the end of ctx interrupt whatever exchange runs on the link, for one call: stop
// ends the watch.
func (l *Link) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return true }
	}
	return context.AfterFunc(ctx, l.interrupt)
}
