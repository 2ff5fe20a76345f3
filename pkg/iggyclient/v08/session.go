package v08

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// sdkVersion is what the login names as the client's version, as the official Go SDK v0.8.0
// does; the server reads and ignores it.
const sdkVersion = "0.8.0"

// Login implements engine.Protocol: LoginUser, or LoginWithPersonalAccessToken when a token is
// set (it wins over username and password).
func (p *protocol) Login(ctx context.Context, l *engine.Link) (*conn, error) {
	c := &conn{Link: l}
	who := "with a personal access token"
	code, body := wire08.CmdLoginWithToken, func(b []byte) ([]byte, error) { return wire08.AppendLoginToken(b, []byte(p.token)) }
	if p.token == "" {
		who = "as " + strconv.Quote(p.username)
		code, body = wire08.CmdLoginUser, func(b []byte) ([]byte, error) {
			return wire08.AppendLoginUser(b, wire08.LoginUser{Username: []byte(p.username), Password: []byte(p.password), Version: []byte(sdkVersion)})
		}
	}
	reply, err := c.call(ctx, "login", code, wire08.LoginReplySize, body)
	if err != nil {
		var status iggywire.Status
		switch {
		case c.Broken() != nil || ctx.Err() != nil:
			return nil, fmt.Errorf("log in: %w", err)
		case !errors.As(err, &status):
			return nil, fmt.Errorf("log in %s: %w: %w", who, api.ErrUnauthorized, err) // credentials the wire cannot carry
		}
		if err = engine.ClassifyLogin(err); errors.Is(err, api.ErrUnauthorized) {
			return nil, fmt.Errorf("log in %s: %w", who, err)
		}
		return nil, fmt.Errorf("log in %s at %s: %w", who, c.Addr(), err)
	}
	if _, err := wire08.DecodeLoginReply(reply); err != nil {
		return nil, c.Malformed("login reply: %v", err)
	}
	return c, nil
}

// Ping implements engine.Protocol.
func (p *protocol) Ping(ctx context.Context, c *conn) error {
	_, err := c.call(ctx, "ping", wire08.CmdPing, 0, noBody)
	return err
}

// Roster implements engine.Protocol: GetClusterMetadata, which the official SDK reads after
// every login too. Server 0.8 without clustering answers one node, itself.
func (p *protocol) Roster(ctx context.Context, c *conn) ([]engine.Node, error) {
	reply, err := c.call(ctx, "cluster metadata", wire08.CmdGetClusterMetadata, maxMetadataReply, noBody)
	if err != nil {
		return nil, err
	}
	m, err := wire08.DecodeClusterMetadata(reply)
	if err != nil {
		return nil, err
	}
	nodes := make([]engine.Node, len(m.Nodes))
	for i, n := range m.Nodes {
		nodes[i] = engine.Node{Addr: net.JoinHostPort(string(n.IP), strconv.Itoa(int(n.TCPPort))),
			Leader: n.Role == wire08.RoleLeader, Healthy: n.Status == wire08.NodeHealthy}
	}
	return nodes, nil
}
