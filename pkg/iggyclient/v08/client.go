package v08

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// protocol is Iggy 0.8 for the engine: every method is one request, or two written together.
type protocol struct {
	engine *engine.Engine[*conn] // its options (credentials) and logger
}

// NewProtocol is Iggy 0.8 for an engine (engine.Dial).
func NewProtocol(e *engine.Engine[*conn]) engine.Protocol[*conn] { return &protocol{engine: e} }

// Name implements engine.Protocol.
func (*protocol) Name() string { return api.Protocol08 }

// Lost implements engine.Protocol: 0.8 has no losses beyond the engine's.
func (*protocol) Lost(error) bool { return false }

// LossBudget implements engine.Protocol: every loss is retried until the call's context ends.
func (*protocol) LossBudget(error) time.Duration { return 0 }

// Roster implements engine.Protocol: GetClusterMetadata, which the official SDK reads after
// every login too. Server 0.8 without clustering answers one node, itself.
func (p *protocol) Roster(ctx context.Context, c *conn) ([]engine.Node, error) {
	reply, err := c.call(ctx, "cluster metadata", wire08.CmdGetClusterMetadata, maxMetadataReply, noBody)
	var m wire08.ClusterMetadata
	if err == nil {
		m, err = wire08.DecodeClusterMetadata(reply)
	}
	nodes := make([]engine.Node, len(m.Nodes))
	for i, n := range m.Nodes {
		nodes[i] = engine.NodeAt(n.IP, n.TCPPort, n.Role == wire08.RoleLeader, n.Status == wire08.NodeHealthy)
	}
	return nodes, err
}

// sdkVersion is what the login names as the client's version, as the official Go SDK v0.8.0
// does; the server reads and ignores it.
const sdkVersion = "0.8.0"

// Login implements engine.Protocol: LoginUser, or LoginWithPersonalAccessToken when a token is
// set (it wins over username and password).
func (p *protocol) Login(ctx context.Context, l *engine.Link) (*conn, error) {
	c := &conn{Link: l}
	o := p.engine.Options()
	who := "with a personal access token"
	code, body := wire08.CmdLoginWithToken, func(b []byte) ([]byte, error) { return wire08.AppendLoginToken(b, []byte(o.Token)) }
	if o.Token == "" {
		who = "as " + strconv.Quote(o.Username)
		code, body = wire08.CmdLoginUser, func(b []byte) ([]byte, error) {
			return wire08.AppendLoginUser(b, wire08.LoginUser{Username: []byte(o.Username), Password: []byte(o.Password), Version: []byte(sdkVersion)})
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
