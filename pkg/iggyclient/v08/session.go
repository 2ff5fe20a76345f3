package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

const probeDialTimeout = 10 * time.Second

// session is one logged-in SDK connection.
type session struct {
	sdk *tcp.IggyTcpClient

	mu     sync.Mutex
	conn   net.Conn // the SDK's socket (see connOf); nil if not found
	closed bool
}

func newSession(sdk *tcp.IggyTcpClient) *session {
	return &session{sdk: sdk, conn: connOf(sdk)}
}

// refreshConn re-reads the socket, which a leader redirect during login
// replaces.
func (s *session) refreshConn() {
	conn := connOf(s.sdk)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		if conn != nil {
			_ = conn.Close()
		}
		return
	}
	s.conn = conn
}

// close interrupts any call in flight and releases the connection. The
// SDK's own Close waits for its request mutex, which a call blocked on a
// silent server never releases, so the socket is closed first and the
// SDK's Close runs aside.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
	go func() { _ = s.sdk.Close() }()
}

// connOf returns the SDK client's socket. SDK v0.8.0 keeps it in the
// unexported field "conn" and offers neither deadlines nor a way to cancel
// a request, so closing the socket is the only way to honour a context
// while a call waits for an answer. Tests that cancel a call against a
// silent server fail if a newer SDK moves the field.
func connOf(sdk *tcp.IggyTcpClient) net.Conn {
	if p := sdkConnField(sdk); p != nil {
		return *p
	}
	return nil
}

var (
	sdkConnField        = sdkField[net.Conn]("conn")
	sdkRequestLockField = sdkField[sync.Mutex]("mtx")
)

// sdkField returns an accessor of the SDK client's unexported field name of type T, or one that
// returns nil when a newer SDK moved or retyped it. The field is looked up once, not per call:
// connOf and requestLockOf run on every poll and send.
func sdkField[T any](name string) func(*tcp.IggyTcpClient) *T {
	f, ok := reflect.TypeFor[tcp.IggyTcpClient]().FieldByName(name)
	if !ok || len(f.Index) != 1 || f.Type != reflect.TypeFor[T]() {
		return func(*tcp.IggyTcpClient) *T { return nil }
	}
	offset := f.Offset
	return func(sdk *tcp.IggyTcpClient) *T { return (*T)(unsafe.Add(unsafe.Pointer(sdk), offset)) }
}

// groupKey names a consumer group the client has joined and must rejoin
// after every reconnect.
type groupKey struct{ stream, topic, group string }

// sdkClient implements api.Client over the SDK's TCP client.
type sdkClient struct {
	opts      api.Options
	log       *slog.Logger
	tlsConfig *tls.Config // nil without TLS; only used to probe the server

	// closing is cancelled by Close so that dials and backoffs stop.
	closing    *api.Lifetime
	background sync.WaitGroup // the heartbeat; Close waits for it

	// dialing holds one token: only one goroutine reconnects at a time,
	// the others wait (or give up when their context ends).
	dialing chan struct{}

	mu     sync.Mutex
	cur    *session // nil while disconnected
	closed bool
	groups map[groupKey]struct{}

	// Parsed identifiers by string, so hot paths do not re-parse. Groups
	// have their own map: "5" is an id as a stream but a name as a group.
	ids, groupIDs sync.Map
}

// Dial connects to the server and logs in. While the server is unreachable
// it keeps trying with backoff until ctx ends; bad credentials fail at once
// with api.ErrUnauthorized.
func Dial(ctx context.Context, o api.Options) (api.Client, error) {
	if err := o.Normalize(); err != nil {
		return nil, err
	}
	c := &sdkClient{
		opts:    o,
		log:     o.Logger,
		dialing: make(chan struct{}, 1),
		groups:  make(map[groupKey]struct{}),
	}
	cfg, err := o.TLSConfig()
	if err != nil {
		return nil, err
	}
	c.tlsConfig = cfg
	c.closing = api.NewLifetime()
	if err := c.run(ctx, func(*tcp.IggyTcpClient) error { return nil }); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("connect to iggy at %s: %w", o.Address, err)
	}
	c.background.Go(c.heartbeat)
	return c, nil
}

// Close ends the session and stops background work. It is safe to call more
// than once.
func (c *sdkClient) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.cur
	c.cur = nil
	c.mu.Unlock()
	c.closing.End()
	if s != nil {
		s.close()
	}
	c.background.Wait()
	return nil
}

// run calls fn on a live session, reconnecting and retrying while the
// connection is lost. Other errors are classified and returned as they are.
func (c *sdkClient) run(ctx context.Context, fn func(*tcp.IggyTcpClient) error) error {
	var (
		retry   *backoff.Backoff
		lastErr error
	)
	for attempt := 0; ; attempt++ {
		if attempt == 0 {
			// Checked first: call would otherwise close a healthy session
			// for a caller that had already given up.
			if err := c.closing.Stopped(ctx); err != nil {
				return err
			}
		} else {
			if retry == nil {
				retry = c.opts.ReconnectBackoff()
			}
			if err := c.closing.Sleep(ctx, retry.Next()); err != nil {
				return fmt.Errorf("%w (after %d attempts, last: %w)", err, attempt, lastErr)
			}
		}
		s, err := c.session(ctx)
		if err != nil {
			if !isConnectionLoss(err) {
				return err
			}
			// A dial cut short by the caller's deadline says nothing about the server: the
			// error names the last real failure.
			if lastErr == nil || c.closing.Stopped(ctx) == nil {
				lastErr = err
			}
			c.log.Warn("iggy server unreachable, retrying", "address", c.opts.Address, "attempt", attempt+1, "error", err)
			continue
		}
		err = c.call(ctx, s, fn)
		if err == nil {
			return nil
		}
		if !isConnectionLoss(err) {
			return classify(err)
		}
		c.drop(s)
		if ctxErr := c.closing.Stopped(ctx); ctxErr != nil {
			return fmt.Errorf("%w (last: %w)", ctxErr, err)
		}
		lastErr = err
		c.log.Warn("iggy connection lost, reconnecting", "address", c.opts.Address, "attempt", attempt+1, "error", err)
	}
}

// call runs fn on s. The SDK has no deadlines, so when ctx ends mid-call the
// session is closed to unblock the read; the next call reconnects. A panic
// inside the SDK (it decodes replies without bounds checks) is turned into
// errProtocol.
func (c *sdkClient) call(ctx context.Context, s *session, fn func(*tcp.IggyTcpClient) error) (err error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { c.drop(s) })
		defer func() {
			if !stop() && err != nil {
				err = fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errProtocol, r)
		}
	}()
	return fn(s.sdk)
}

// drop retires s if it is still the current session and closes it.
func (c *sdkClient) drop(s *session) {
	c.mu.Lock()
	if c.cur == s {
		c.cur = nil
	}
	c.mu.Unlock()
	s.close()
}

// session returns the live session, connecting (one attempt) when there is
// none.
func (c *sdkClient) session(ctx context.Context) (*session, error) {
	if s, err := c.current(); s != nil || err != nil {
		return s, err
	}
	select {
	case c.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closing.Done():
		return nil, api.ErrClosed
	}
	defer func() { <-c.dialing }()
	// Another goroutine may have reconnected while this one waited.
	if s, err := c.current(); s != nil || err != nil {
		return s, err
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		s.close()
		return nil, api.ErrClosed
	}
	c.cur = s
	c.mu.Unlock()
	return s, nil
}

func (c *sdkClient) current() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, api.ErrClosed
	}
	return c.cur, nil
}

// connect makes one attempt to dial, log in and rejoin the known groups.
func (c *sdkClient) connect(ctx context.Context) (*session, error) {
	if err := c.probe(ctx); err != nil {
		return nil, err
	}
	sdk, err := c.dialSDK(ctx)
	if err != nil {
		return nil, err
	}
	s := newSession(sdk)
	err = c.call(ctx, s, func(sdk *tcp.IggyTcpClient) error {
		var err error
		if c.opts.Token != "" {
			_, err = sdk.LoginWithPersonalAccessToken(c.opts.Token)
		} else {
			_, err = sdk.LoginUser(c.opts.Username, c.opts.Password)
		}
		return err
	})
	if err != nil {
		s.close()
		if isConnectionLoss(err) {
			return nil, fmt.Errorf("log in: %w", err)
		}
		who := "with a personal access token"
		if c.opts.Token == "" {
			who = "as " + strconv.Quote(c.opts.Username)
		}
		return nil, fmt.Errorf("log in %s: %w", who, classifyLogin(err))
	}
	s.refreshConn()
	if err := c.rejoinGroups(ctx, s); err != nil {
		s.close()
		return nil, err
	}
	c.log.Debug("iggy session established", "address", c.opts.Address)
	return s, nil
}

// probe opens (and closes) a plain connection, plus the TLS handshake when
// enabled, so that an unreachable server or a certificate problem is seen
// here: the SDK's constructor would retry forever and ignore ctx.
func (c *sdkClient) probe(ctx context.Context) error {
	d := net.Dialer{Timeout: probeDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", c.opts.Address)
	if err != nil {
		if ctxErr := c.closing.Stopped(ctx); ctxErr != nil {
			return ctxErr
		}
		return err
	}
	defer conn.Close()
	if c.tlsConfig == nil {
		return nil
	}
	tc := tls.Client(conn, c.tlsConfig)
	if err := tc.HandshakeContext(ctx); err != nil {
		var certErr *tls.CertificateVerificationError
		var unknownAuth x509.UnknownAuthorityError
		var hostErr x509.HostnameError
		if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
			return fmt.Errorf("TLS handshake with %s: %w", c.opts.Address, err)
		}
		// Anything else (reset, EOF) is a connection problem worth a retry.
		return fmt.Errorf("TLS handshake with %s: %w", c.opts.Address, errors.Join(ierror.ErrCannotEstablishConnection, err))
	}
	return nil
}

// dialSDK builds the SDK client. Its constructor only returns once it is
// connected, so it runs aside and is abandoned (and closed when it finally
// connects) if ctx ends first.
func (c *sdkClient) dialSDK(ctx context.Context) (*tcp.IggyTcpClient, error) {
	opts := []tcp.Option{tcp.WithServerAddress(c.opts.Address)}
	if c.opts.TLSEnabled {
		var tlsOpts []tcp.TLSOption
		if c.opts.TLSDomain != "" {
			tlsOpts = append(tlsOpts, tcp.WithTLSDomain(c.opts.TLSDomain))
		}
		if c.opts.TLSCAFile != "" {
			tlsOpts = append(tlsOpts, tcp.WithTLSCAFile(c.opts.TLSCAFile))
		}
		opts = append(opts, tcp.WithTLS(tlsOpts...))
	}
	type result struct {
		sdk *tcp.IggyTcpClient
		err error
	}
	ch := make(chan result, 1)
	go func() {
		sdk, err := tcp.NewIggyTcpClient(opts...)
		ch <- result{sdk, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, errors.Join(ierror.ErrCannotEstablishConnection, r.err)
		}
		return r.sdk, nil
	case <-ctx.Done():
	case <-c.closing.Done():
	}
	go func() {
		if r := <-ch; r.sdk != nil {
			_ = r.sdk.Close()
		}
	}()
	return nil, c.closing.Stopped(ctx)
}

// rejoinGroups re-enters every group joined before. A group whose topic is
// gone is logged and skipped (its next Poll reports api.ErrNotFound); only a
// lost connection fails the session.
func (c *sdkClient) rejoinGroups(ctx context.Context, s *session) error {
	c.mu.Lock()
	groups := make([]groupKey, 0, len(c.groups))
	for g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	for _, g := range groups {
		err := c.call(ctx, s, func(sdk *tcp.IggyTcpClient) error { return c.ensureGroup(sdk, g) })
		if err == nil {
			continue
		}
		if isConnectionLoss(err) {
			return fmt.Errorf("rejoin consumer group %q: %w", g.group, err)
		}
		c.log.Warn("could not rejoin consumer group", "stream", g.stream, "topic", g.topic, "group", g.group, "error", err)
	}
	return nil
}

// heartbeat pings the session every interval, busy or not: a server with
// heartbeat verification on counts only pings (Iggy 0.8 updates a client's
// last heartbeat in the ping handler alone), so a connection that sends all
// the time but never pings would be dropped as stale. A failed ping retires
// the session; the next call reconnects.
func (c *sdkClient) heartbeat() {
	if c.opts.HeartbeatInterval < 0 {
		return
	}
	t := time.NewTicker(c.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closing.Done():
			return
		case <-t.C:
		}
		s, _ := c.current()
		if s == nil {
			continue
		}
		if err := c.call(c.closing, s, func(sdk *tcp.IggyTcpClient) error { return sdk.Ping() }); err != nil && isConnectionLoss(err) {
			c.log.Warn("iggy heartbeat failed", "address", c.opts.Address, "error", err)
			c.drop(s)
		}
	}
}

// identifier turns a stream or topic string into an SDK identifier: a
// string that parses as a u32 (Rust's rules: digits, optional leading '+')
// is a numeric id, anything else a name.
func (c *sdkClient) identifier(what, s string) (iggcon.Identifier, error) {
	if v, ok := c.ids.Load(s); ok {
		return v.(iggcon.Identifier), nil
	}
	id, err := parseIdentifier(s)
	if err != nil {
		return iggcon.Identifier{}, fmt.Errorf("%s %q: %w", what, s, err)
	}
	c.ids.Store(s, id)
	return id, nil
}

func parseIdentifier(s string) (iggcon.Identifier, error) {
	n, numeric, err := api.ParseIdentifier(s)
	switch {
	case err != nil:
		return iggcon.Identifier{}, err
	case numeric:
		return iggcon.NewIdentifier(n)
	}
	return iggcon.NewIdentifier(s)
}
