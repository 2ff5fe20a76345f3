package engine

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

const dialTimeout = 10 * time.Second

// Leader search after login.
const (
	maxRedirects      = 3
	leaderPollEvery   = 250 * time.Millisecond
	leaderPollFor     = 5 * time.Second
	maxCandidateNodes = 64
)

// Engine is one client's session with an Iggy server over protocol P: one connection at a
// time, lock-step, and everything around it that does not depend on the protocol. It implements
// api.Client and api.Admin (client.go, admin.go).
type Engine[C Conn] struct {
	opts      api.Options
	log       *slog.Logger
	tlsConfig *tls.Config
	proto     Protocol[C]

	// closing is cancelled by Close so that dials, backoffs and replays stop.
	closing    *api.Lifetime
	background sync.WaitGroup // the heartbeat

	// wire is the one token of the connection: whoever holds it owns cur, the groups, the send
	// buffers, and is the only one talking (one request in flight at a time).
	wire chan struct{}

	mu     sync.Mutex // guards cur (read by Close), closed, up and everUp
	cur    C          // the zero C while disconnected
	closed bool
	// up: a session is logged in; everUp: one was, so a new one after a loss is a restore
	// (Options.OnState).
	up, everUp bool
	seq        uint64 // connections dialled so far

	// Held with the wire token (and the Groups' fields).
	candidates []string // addresses to dial: the leader first, then healthy nodes

	regMu  sync.Mutex            // guards the registries below
	groups map[groupKey]*Group   // groups asked for, with what the protocol caches about them
	ids    map[string]identifier // parsed stream and topic strings
}

// Dial checks the options, makes an engine over the protocol newProtocol makes for it (a
// protocol may keep the engine: its options, its logger, Join), connects and logs in. While the
// server is unreachable it keeps trying until ctx ends; bad credentials fail at once with
// api.ErrUnauthorized. Then the heartbeat starts.
func Dial[C Conn](ctx context.Context, o api.Options, newProtocol func(*Engine[C]) Protocol[C]) (*Engine[C], error) {
	if err := o.Normalize(); err != nil {
		return nil, err
	}
	cfg, err := o.TLSConfig()
	if err != nil {
		return nil, err
	}
	e := &Engine[C]{opts: o, log: o.Logger, tlsConfig: cfg, closing: api.NewLifetime(),
		wire: make(chan struct{}, 1), candidates: []string{o.Address}, groups: map[groupKey]*Group{},
		ids: map[string]identifier{}}
	e.proto = newProtocol(e)
	if err := e.Do(ctx, func(C) error { return nil }); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("connect to iggy at %s: %w", e.opts.Address, err)
	}
	e.background.Go(e.heartbeat)
	return e, nil
}

// DialClient is Dial for api.Client.
func DialClient[C Conn](ctx context.Context, o api.Options, newProtocol func(*Engine[C]) Protocol[C]) (api.Client, error) {
	return as[api.Client](Dial(ctx, o, newProtocol))
}

// DialAdmin is Dial for api.Admin.
func DialAdmin[C Conn](ctx context.Context, o api.Options, newProtocol func(*Engine[C]) Protocol[C]) (api.Admin, error) {
	return as[api.Admin](Dial(ctx, o, newProtocol))
}

// as is e as the interface T, or T's nil with err (a nil *Engine is not a nil interface).
func as[T any, C Conn](e *Engine[C], err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	return any(e).(T), nil
}

// Options are the engine's options, checked and with their defaults filled in.
func (e *Engine[C]) Options() *api.Options { return &e.opts }

// Log is the engine's logger, for a protocol's own lines.
func (e *Engine[C]) Log() *slog.Logger { return e.log }

// Close ends the session and stops background work. It is safe to call more than once.
func (e *Engine[C]) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	cur := e.cur
	e.mu.Unlock()
	e.closing.End()
	var zero C
	if cur != zero {
		_ = cur.Transport().nc.Close() // interrupts a call in flight; its holder retires the connection
	}
	e.background.Wait()
	return nil
}

func (e *Engine[C]) acquire(ctx context.Context) error {
	select {
	case e.wire <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closing.Done():
		return api.ErrClosed
	}
}

func (e *Engine[C]) release() { <-e.wire }

// isLoss reports whether err ends the session (the engine's losses and the protocol's).
func (e *Engine[C]) isLoss(err error) bool { return lost(err) || (err != nil && e.proto.Lost(err)) }

// Do runs fn on a live connection, holding the wire token. A lost connection (or session) is
// dropped, and the engine reconnects with capped, jittered exponential backoff, logs in again,
// rejoins its groups and runs fn again, until ctx ends: so a send is at least once. Other errors
// are classified and returned.
func (e *Engine[C]) Do(ctx context.Context, fn func(C) error) error {
	if err := e.closing.Stopped(ctx); err != nil {
		return err
	}
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	retry := NewRetry(&e.opts, e.closing)
	var firstLoss time.Time // the first loss whose kind has a budget
	for {
		if err := retry.Wait(ctx); err != nil {
			return err
		}
		cn, err := e.connection(ctx)
		if err != nil {
			if !e.isLoss(err) {
				return err
			}
			retry.Unreachable(ctx, err)
			continue
		}
		l := cn.Transport()
		stop := l.watch(ctx)
		err = fn(cn)
		stop()
		if err == nil {
			return nil
		}
		if l.broken == nil && !e.isLoss(err) {
			return classify(err)
		}
		e.retire(cn, err)
		if ctxErr := e.closing.Stopped(ctx); ctxErr != nil {
			return fmt.Errorf("%w (last: %w)", ctxErr, err)
		}
		if !e.isLoss(err) {
			return classify(err) // e.g. an eviction for an unknown reason: never a relogin loop
		}
		if budget := e.proto.LossBudget(err); budget > 0 {
			if firstLoss.IsZero() {
				firstLoss = time.Now()
			} else if time.Since(firstLoss) >= budget {
				return fmt.Errorf("still failing after %s: %w", budget, err)
			}
		}
		retry.Lost(err)
		e.log.Warn("iggy connection lost, reconnecting", append([]any{"address", l.addr, "protocol", e.proto.Name(),
			"attempt", retry.Attempt(), "error", err}, e.lossDetails(err)...)...)
	}
}

// LossDetailer is implemented by a protocol that names more about a loss in the log line (the
// reason of a 0.9 eviction).
type LossDetailer interface {
	LossDetails(err error) []any
}

func (e *Engine[C]) lossDetails(err error) []any {
	if d, ok := e.proto.(LossDetailer); ok {
		return d.LossDetails(err)
	}
	return nil
}

// connection returns the live connection, making one attempt to connect when there is none.
// The caller holds the wire token.
func (e *Engine[C]) connection(ctx context.Context) (C, error) {
	var zero C
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return zero, api.ErrClosed
	}
	cn := e.cur
	e.mu.Unlock()
	if cn != zero && cn.Transport().broken == nil {
		return cn, nil
	}
	if cn != zero {
		e.retire(cn, cn.Transport().broken)
	}
	cn, err := e.connect(ctx)
	if err != nil {
		return zero, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		cn.Transport().close()
		return zero, api.ErrClosed
	}
	e.cur = cn
	restored := e.everUp && !e.up
	e.up, e.everUp = true, true
	e.mu.Unlock()
	if restored {
		e.notify(api.State{Up: true})
	}
	return cn, nil
}

// retire closes cn and forgets it if it is still the current connection; a session that was up
// is reported lost, with why.
func (e *Engine[C]) retire(cn C, why error) {
	var zero C
	e.mu.Lock()
	wasUp := false
	if e.cur == cn {
		e.cur = zero
		wasUp, e.up = e.up, false
	}
	closed := e.closed
	e.mu.Unlock()
	cn.Transport().close()
	if wasUp && !closed {
		e.notify(api.State{Err: why})
	}
}

func (e *Engine[C]) notify(s api.State) {
	if e.opts.OnState != nil {
		e.opts.OnState(s)
	}
}

// connect makes one attempt to reach a node (the known leader first, then the other healthy
// nodes, then the configured address), log in, settle on the leader and rejoin the groups.
func (e *Engine[C]) connect(ctx context.Context) (C, error) {
	var zero C
	var cn C
	var err error
	for _, addr := range e.candidates {
		if cn, err = e.dialNode(ctx, addr); err == nil || !e.isLoss(err) {
			break
		}
	}
	if err != nil {
		return zero, err
	}
	if cn, err = e.settleOnLeader(ctx, cn); err != nil {
		return zero, err
	}
	l := cn.Transport()
	stop := l.watch(ctx)
	err = e.rejoinGroups(ctx, cn)
	stop()
	if err != nil {
		l.close()
		return zero, err
	}
	e.log.Debug("iggy session established", "address", l.addr, "protocol", e.proto.Name())
	return cn, nil
}

// settleOnLeader reads the roster after login and, in a cluster of more than one node, moves to
// the healthy leader: up to maxRedirects times, each a new connection and login. A roster that
// cannot be read, a single node, or no leader within leaderPollFor keeps cn.
func (e *Engine[C]) settleOnLeader(ctx context.Context, cn C) (C, error) {
	var zero C
	for redirect := 0; ; redirect++ {
		l := cn.Transport()
		stop := l.watch(ctx)
		leader, ok := e.findLeader(ctx, cn)
		stop()
		if !ok || sameAddress(leader, l.addr) {
			return cn, nil
		}
		if redirect == maxRedirects {
			e.log.Warn("iggy leader keeps moving, staying on this node", "address", l.addr, "redirects", redirect)
			return cn, nil
		}
		e.log.Info("moving to the iggy cluster leader", "from", l.addr, "leader", leader)
		next, err := e.dialNode(ctx, leader)
		if err != nil {
			if !e.isLoss(err) {
				l.close()
				return zero, err
			}
			e.log.Warn("could not reach the iggy cluster leader, staying on this node", "leader", leader, "error", err)
			return cn, nil
		}
		l.close()
		cn = next
	}
}

// findLeader reads the roster and returns the healthy leader's address when the cluster has
// more than one node, polling while no leader is marked. It also remembers the healthy nodes as
// dial candidates.
func (e *Engine[C]) findLeader(ctx context.Context, cn C) (string, bool) {
	addr := cn.Transport().addr
	deadline := time.Now().Add(leaderPollFor)
	for {
		nodes, err := e.proto.Roster(ctx, cn)
		if err != nil {
			e.log.Debug("iggy cluster metadata not available, staying on this node", "address", addr, "error", err)
			return "", false
		}
		if len(nodes) <= 1 {
			return "", false
		}
		leader, healthy := "", []string{}
		for _, n := range nodes {
			if !n.Healthy || len(healthy) == maxCandidateNodes {
				continue
			}
			a := normalizeAddress(n.Addr)
			healthy = append(healthy, a)
			if n.Leader && leader == "" {
				leader = a
			}
		}
		if leader != "" {
			e.candidates = append([]string{leader}, withoutAddress(healthy, leader)...)
			if !containsAddress(e.candidates, e.opts.Address) {
				e.candidates = append(e.candidates, e.opts.Address)
			}
			return leader, true
		}
		if time.Now().After(deadline) {
			e.log.Warn("no leader in the iggy cluster roster, staying on this node", "address", addr)
			return "", false
		}
		if err := backoff.Sleep(ctx, leaderPollEvery); err != nil {
			return "", false
		}
	}
}

// heartbeat pings every HeartbeatInterval, busy or idle: a 0.8 server with heartbeat
// verification counts only pings, and a 0.9 client that only polls an idle topic still sends. A
// failed ping retires the connection; the next call reconnects.
func (e *Engine[C]) heartbeat() {
	if e.opts.HeartbeatInterval < 0 {
		return
	}
	t := time.NewTicker(e.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-e.closing.Done():
			return
		case <-t.C:
		}
		if err := e.acquire(e.closing); err != nil {
			return
		}
		e.pingOnce()
		e.release()
	}
}

func (e *Engine[C]) pingOnce() {
	var zero C
	e.mu.Lock()
	cn := e.cur
	e.mu.Unlock()
	if cn == zero || cn.Transport().broken != nil {
		return
	}
	l := cn.Transport()
	stop := l.watch(e.closing)
	err := e.proto.Ping(e.closing, cn)
	stop()
	if err != nil && (l.broken != nil || e.isLoss(err)) {
		e.log.Warn("iggy heartbeat failed", "address", l.addr, "protocol", e.proto.Name(), "error", err)
		e.retire(cn, err)
	}
}

// normalizeAddress writes localhost as 127.0.0.1, as the Go SDK compares addresses.
func normalizeAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func sameAddress(a, b string) bool { return normalizeAddress(a) == normalizeAddress(b) }

func containsAddress(list []string, addr string) bool {
	for _, a := range list {
		if sameAddress(a, addr) {
			return true
		}
	}
	return false
}

func withoutAddress(list []string, addr string) []string {
	out := list[:0:0]
	for _, a := range list {
		if !sameAddress(a, addr) {
			out = append(out, a)
		}
	}
	return out
}
