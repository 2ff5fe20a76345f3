package v09

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// groupKey names a consumer group the client has been asked to be a member of, and rejoins after
// every reconnect.
type groupKey struct{ stream, topic, group string }

// client implements api.Client and api.Admin over one 0.9 connection.
type client struct {
	opts      api.Options
	log       *slog.Logger
	tlsConfig *tls.Config

	// closing is cancelled by Close so that dials, backoffs and replays stop.
	closing    *api.Lifetime
	background sync.WaitGroup // the heartbeat

	// wire is the one token of the connection: whoever holds it owns cur, the scratch buffers
	// below and the group states, and is the only one talking (lock-step, §1).
	wire chan struct{}

	mu     sync.Mutex // guards cur (read by Close) and closed
	cur    *conn      // nil while disconnected
	closed bool
	seq    uint64 // connections made so far

	// Held with the wire token.
	req        []byte                   // the request being built: header space, then body
	sendBuf    []byte                   // Send's frame
	msgs       []iggywire.Message       // Send's messages
	idSource   *rand.Rand               // ids of messages sent with a zero id
	hdrs       []byte                   // Send's encoded user headers
	groups     map[groupKey]*groupState // groups to rejoin, with their cached assignment
	candidates []string                 // addresses to dial: the leader first, then healthy nodes

	// Parsed identifiers by string (groups apart: they are always names).
	ids, groupIDs sync.Map
}

// Dial connects to the server and logs in. While the server is unreachable it keeps trying with
// backoff until ctx ends; bad credentials fail at once with api.ErrUnauthorized.
func Dial(ctx context.Context, o api.Options) (api.Client, error) {
	c, err := dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DialAdmin connects like Dial and returns the offset administration over that connection.
func DialAdmin(ctx context.Context, o api.Options) (api.Admin, error) {
	c, err := dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func dial(ctx context.Context, o api.Options) (*client, error) {
	if err := o.Normalize(); err != nil {
		return nil, err
	}
	cfg, err := o.TLSConfig()
	if err != nil {
		return nil, err
	}
	c := &client{
		opts:       o,
		log:        o.Logger,
		tlsConfig:  cfg,
		wire:       make(chan struct{}, 1),
		groups:     make(map[groupKey]*groupState),
		candidates: []string{o.Address},
		idSource:   newIDSource(),
	}
	c.closing = api.NewLifetime()
	if err := c.do(ctx, func(*conn) error { return nil }); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("connect to iggy at %s: %w", o.Address, err)
	}
	c.background.Go(c.heartbeat)
	return c, nil
}

// Close ends the session and stops background work. It is safe to call more than once.
func (c *client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cur := c.cur
	c.mu.Unlock()
	c.closing.End()
	if cur != nil {
		_ = cur.nc.Close() // interrupts a call in flight; its holder retires the connection
	}
	c.background.Wait()
	return nil
}

// acquire takes the wire token, or gives up when ctx ends or the client closes.
func (c *client) acquire(ctx context.Context) error {
	select {
	case c.wire <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing.Done():
		return api.ErrClosed
	}
}

func (c *client) release() { <-c.wire }

// do runs fn on a live connection, holding the wire token. A lost connection (or session) is
// dropped, and the client reconnects with capped, jittered exponential backoff, logs in again,
// rejoins its groups and runs fn again, until ctx ends: so Send is at least once. Other errors
// are classified and returned.
func (c *client) do(ctx context.Context, fn func(*conn) error) error {
	if err := c.closing.Stopped(ctx); err != nil {
		return err
	}
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	var (
		retry       *backoff.Backoff
		lastErr     error
		notAccepted time.Time // the first time a node would not take the request (58)
	)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if retry == nil {
				retry = c.opts.ReconnectBackoff()
			}
			if err := c.closing.Sleep(ctx, retry.Next()); err != nil {
				return fmt.Errorf("%w (after %d attempts, last: %w)", err, attempt, lastErr)
			}
		}
		cn, err := c.connection(ctx)
		if err != nil {
			if !isConnectionLoss(err) {
				return err
			}
			lastErr = err
			c.log.Warn("iggy server unreachable, retrying", "address", c.opts.Address, "attempt", attempt+1, "error", err)
			continue
		}
		stop := cn.watch(ctx)
		err = fn(cn)
		stop()
		if err == nil {
			return nil
		}
		if cn.broken == nil && !isConnectionLoss(err) {
			return classify(err)
		}
		c.retire(cn)
		if ctxErr := c.closing.Stopped(ctx); ctxErr != nil {
			return fmt.Errorf("%w (last: %w)", ctxErr, err)
		}
		if !isConnectionLoss(err) {
			return classify(err) // e.g. an eviction for an unknown reason: never a relogin loop
		}
		if errors.Is(err, errNotLeader) {
			if notAccepted.IsZero() {
				notAccepted = time.Now()
			} else if time.Since(notAccepted) >= notCommittedBudget {
				return fmt.Errorf("no node accepted the request within %s: %w", notCommittedBudget, err)
			}
		}
		lastErr = err
		c.logLoss(err, attempt)
	}
}

// logLoss logs a lost connection; an eviction names its reason.
func (c *client) logLoss(err error, attempt int) {
	var ev *wire09.EvictionError
	if errors.As(err, &ev) {
		c.log.Warn("evicted by the iggy server, logging in again", "address", c.opts.Address, "reason", ev.Reason.String(), "code", uint8(ev.Reason))
		return
	}
	c.log.Warn("iggy connection lost, reconnecting", "address", c.opts.Address, "attempt", attempt+1, "error", err)
}

// connection returns the live connection, making one attempt to connect when there is none.
// The caller holds the wire token.
func (c *client) connection(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, api.ErrClosed
	}
	cn := c.cur
	c.mu.Unlock()
	if cn != nil && cn.broken == nil {
		return cn, nil
	}
	if cn != nil {
		c.retire(cn)
	}
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cn.close()
		return nil, api.ErrClosed
	}
	c.cur = cn
	return cn, nil
}

// retire closes cn and forgets it if it is still the current connection.
func (c *client) retire(cn *conn) {
	c.mu.Lock()
	if c.cur == cn {
		c.cur = nil
	}
	c.mu.Unlock()
	cn.close()
}

// heartbeat pings every HeartbeatInterval, busy or idle, like v08 (§5.4: any request counts as
// liveness in 0.9, but a client that only polls an idle topic still sends, and one that waits on
// the wire token is busy anyway). A failed ping retires the connection; the next call reconnects.
func (c *client) heartbeat() {
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
		if err := c.acquire(c.closing); err != nil {
			return
		}
		c.mu.Lock()
		cn := c.cur
		c.mu.Unlock()
		if cn != nil && cn.broken == nil {
			stop := cn.watch(c.closing)
			err := c.ping(c.closing, cn)
			stop()
			if err != nil && (cn.broken != nil || isConnectionLoss(err)) {
				c.log.Warn("iggy heartbeat failed", "address", cn.addr, "error", err)
				c.retire(cn)
			}
		}
		c.release()
	}
}

// ping is a NonReplicated Ping (code 1), allowed before login too.
func (c *client) ping(ctx context.Context, cn *conn) error {
	_, err := cn.exchange(ctx, c.request(), wire09.OpNonReplicated, wire09.CmdPing, nil)
	return err
}

// request starts a request in the scratch buffer: 256 bytes of header space, stamped when sent.
func (c *client) request() []byte {
	c.req = append(c.req[:0], make([]byte, wire09.HeaderSize)...)
	return c.req
}
