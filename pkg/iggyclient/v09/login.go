package v09

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// What the client tells the server about itself in the login's version prefix (§5.1).
const (
	sdkName    = "iggy-connectors-go"
	sdkVersion = "0.9.0"
)

const dialTimeout = 10 * time.Second

// Leader search after login (§8).
const (
	maxRedirects      = 3
	leaderPollEvery   = 250 * time.Millisecond
	leaderPollFor     = 5 * time.Second
	maxCandidateNodes = 64
)

// connect makes one attempt to reach a node (the known leader first, then the other healthy
// nodes, then the configured address), log in, settle on the leader and rejoin the groups.
func (c *client) connect(ctx context.Context) (*conn, error) {
	var cn *conn
	var err error
	for _, addr := range c.candidates {
		if cn, err = c.dialNode(ctx, addr); err == nil || !isConnectionLoss(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if cn, err = c.settleOnLeader(ctx, cn); err != nil {
		return nil, err
	}
	c.resetGroupStates()
	stop := cn.watch(ctx)
	err = c.rejoinGroups(ctx, cn)
	stop()
	if err != nil {
		cn.close()
		return nil, err
	}
	c.log.Debug("iggy session established", "address", cn.addr, "protocol", api.Protocol09)
	return cn, nil
}

// dialNode opens a connection to addr and logs in.
func (c *client) dialNode(ctx context.Context, addr string) (*conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctxErr := c.closing.Stopped(ctx); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	if c.tlsConfig != nil {
		tc := tls.Client(nc, c.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			var certErr *tls.CertificateVerificationError
			var unknownAuth x509.UnknownAuthorityError
			var hostErr x509.HostnameError
			if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
				return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
			}
			// Anything else (reset, EOF) is a connection problem worth a retry.
			return nil, fmt.Errorf("TLS handshake with %s: %w: %w", addr, errProtocol, err)
		}
		nc = tc
	}
	c.seq++
	cn := newConn(nc, addr, c.seq)
	stop := cn.watch(ctx)
	err = c.login(ctx, cn)
	stop()
	if err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

// login registers a session on cn (§5.1): a fresh client id, request and session 0, the version
// prefix and the credentials (a token wins). Transient answers are replayed by exchange.
func (c *client) login(ctx context.Context, cn *conn) error {
	cn.client, cn.session, cn.counter = newClientID(), 0, 1
	prefix := wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte(sdkName), SDKVersion: []byte(sdkVersion)}
	frame := c.request()
	var err error
	who := "with a personal access token"
	if c.opts.Token != "" {
		frame, err = wire09.AppendLoginToken(frame, prefix, []byte(c.opts.Token))
	} else {
		who = "as " + strconv.Quote(c.opts.Username)
		frame, err = wire09.AppendLoginPassword(frame, prefix, []byte(c.opts.Username), []byte(c.opts.Password))
	}
	if err != nil {
		return fmt.Errorf("log in %s: %w: %w", who, api.ErrUnauthorized, err)
	}
	c.req = frame
	rep, err := cn.exchange(ctx, frame, wire09.OpRegister, 0, nil)
	if err != nil {
		err = classifyLogin(err)
		if errors.Is(err, api.ErrUnauthorized) {
			return fmt.Errorf("log in %s: %w", who, err)
		}
		return fmt.Errorf("log in %s at %s: %w", who, cn.addr, err)
	}
	lr, err := wire09.DecodeLoginReply(rep.payload)
	if err == nil && lr.Session == 0 {
		err = errors.New("session id 0")
	}
	if err != nil {
		return cn.breakWith(fmt.Errorf("%w: login reply: %w", errProtocol, err))
	}
	cn.session = lr.Session
	return nil
}

// settleOnLeader reads the roster after login and, in a cluster of more than one node, moves to
// the healthy leader (§8): up to maxRedirects times, each a new connection and login. A roster
// that cannot be read, a single node, or no leader within leaderPollFor keeps cn.
func (c *client) settleOnLeader(ctx context.Context, cn *conn) (*conn, error) {
	for redirect := 0; ; redirect++ {
		stop := cn.watch(ctx)
		leader, ok := c.findLeader(ctx, cn)
		stop()
		if !ok || sameAddress(leader, cn.addr) {
			return cn, nil
		}
		if redirect == maxRedirects {
			c.log.Warn("iggy leader keeps moving, staying on this node", "address", cn.addr, "redirects", redirect)
			return cn, nil
		}
		c.log.Info("moving to the iggy cluster leader", "from", cn.addr, "leader", leader)
		next, err := c.dialNode(ctx, leader)
		if err != nil {
			if !isConnectionLoss(err) {
				cn.close()
				return nil, err
			}
			c.log.Warn("could not reach the iggy cluster leader, staying on this node", "leader", leader, "error", err)
			return cn, nil
		}
		cn.close()
		cn = next
	}
}

// findLeader reads the roster (GetClusterMetadata, code 12) and returns the healthy leader's
// address when the cluster has more than one node, polling while no leader is marked. It also
// remembers the healthy nodes as dial candidates.
func (c *client) findLeader(ctx context.Context, cn *conn) (string, bool) {
	deadline := time.Now().Add(leaderPollFor)
	for {
		rep, err := cn.exchange(ctx, c.request(), wire09.OpNonReplicated, wire09.CmdGetClusterMetadata, nil)
		if err != nil {
			c.log.Debug("iggy cluster metadata not available, staying on this node", "address", cn.addr, "error", err)
			return "", false
		}
		meta, err := wire09.DecodeClusterMetadata(rep.payload)
		if err != nil {
			c.log.Warn("unreadable iggy cluster metadata, staying on this node", "address", cn.addr, "error", err)
			return "", false
		}
		if len(meta.Nodes) <= 1 {
			return "", false
		}
		leader, healthy := "", []string{}
		for _, n := range meta.Nodes {
			if n.Status != wire09.NodeHealthy || len(healthy) == maxCandidateNodes {
				continue
			}
			addr := normalizeAddress(net.JoinHostPort(string(n.IP), strconv.Itoa(int(n.TCPPort))))
			healthy = append(healthy, addr)
			if n.Role == wire09.RoleLeader && leader == "" {
				leader = addr
			}
		}
		if leader != "" {
			c.candidates = append([]string{leader}, withoutAddress(healthy, leader)...)
			if !containsAddress(c.candidates, c.opts.Address) {
				c.candidates = append(c.candidates, c.opts.Address)
			}
			return leader, true
		}
		if time.Now().After(deadline) {
			c.log.Warn("no leader in the iggy cluster roster, staying on this node", "address", cn.addr)
			return "", false
		}
		if err := backoff.Sleep(ctx, leaderPollEvery); err != nil {
			return "", false
		}
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
