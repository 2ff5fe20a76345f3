package v09

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// What the client tells the server about itself in the login's version prefix (§5.1).
const (
	sdkName    = "iggy-connectors-go"
	sdkVersion = "0.9.0"
)

// Login implements engine.Protocol: a session on the link (§5.1): a fresh client id, request and
// session 0, the version prefix and the credentials (a token wins). Transient answers are
// replayed by exchange.
func (p *protocol) Login(ctx context.Context, l *engine.Link) (*conn, error) {
	c := &conn{Link: l, client: newClientID(), counter: 1}
	o := p.engine.Options()
	prefix := wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte(sdkName), SDKVersion: []byte(sdkVersion)}
	frame := c.request()
	var err error
	who := "with a personal access token"
	if o.Token != "" {
		frame, err = wire09.AppendLoginToken(frame, prefix, []byte(o.Token))
	} else {
		who = "as " + strconv.Quote(o.Username)
		frame, err = wire09.AppendLoginPassword(frame, prefix, []byte(o.Username), []byte(o.Password))
	}
	if err != nil {
		return nil, fmt.Errorf("log in %s: %w: %w", who, api.ErrUnauthorized, err)
	}
	c.req = frame
	rep, err := c.exchange(ctx, frame, wire09.OpRegister, 0, nil)
	if err != nil {
		err = classifyLogin(err)
		if errors.Is(err, api.ErrUnauthorized) {
			return nil, fmt.Errorf("log in %s: %w", who, err)
		}
		return nil, fmt.Errorf("log in %s at %s: %w", who, c.Addr(), err)
	}
	lr, err := wire09.DecodeLoginReply(rep.payload)
	if err == nil && lr.Session == 0 {
		err = errors.New("session id 0")
	}
	if err != nil {
		return nil, c.Malformed("login reply: %v", err)
	}
	c.session = lr.Session
	return c, nil
}

// Ping implements engine.Protocol: a NonReplicated Ping (code 1), allowed before login too.
func (p *protocol) Ping(ctx context.Context, c *conn) error {
	_, err := c.exchange(ctx, c.request(), wire09.OpNonReplicated, wire09.CmdPing, nil)
	return err
}

// Roster implements engine.Protocol: GetClusterMetadata (code 12, §8).
func (p *protocol) Roster(ctx context.Context, c *conn) ([]engine.Node, error) {
	rep, err := c.exchange(ctx, c.request(), wire09.OpNonReplicated, wire09.CmdGetClusterMetadata, nil)
	if err != nil {
		return nil, err
	}
	meta, err := wire09.DecodeClusterMetadata(rep.payload)
	if err != nil {
		p.engine.Log().Warn("unreadable iggy cluster metadata, staying on this node", "address", c.Addr(), "error", err)
		return nil, err
	}
	var nodes []engine.Node
	for _, n := range meta.Nodes {
		nodes = append(nodes, engine.NodeAt(n.IP, n.TCPPort, n.Role == wire09.RoleLeader, n.Status == wire09.NodeHealthy))
	}
	return nodes, nil
}
