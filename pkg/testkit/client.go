package testkit

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// DialClient connects the project's own client (pkg/iggyclient, protocol detected) to srv as
// iggy/iggy with a fast reconnect, and closes it when the test ends.
func DialClient(tb testing.TB, srv *devbroker.Server) iggyclient.Client {
	tb.Helper()
	return DialClientOver(tb, srv, iggyclient.ProtocolAuto)
}

// DialClientOver is DialClient speaking the given protocol.
func DialClientOver(tb testing.TB, srv *devbroker.Server, protocol string) iggyclient.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := ClientOptions(srv)
	o.Protocol = protocol
	c, err := iggyclient.Dial(ctx, o)
	if err != nil {
		tb.Fatalf("dial %s: %v", srv.Addr(), err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// ClientOptions are the options DialClient dials srv with: iggy/iggy, a fast reconnect, no logs.
func ClientOptions(srv *devbroker.Server) iggyclient.Options {
	return iggyclient.Options{
		Address: srv.Addr(), Username: "iggy", Password: "iggy",
		ReconnectMin: 5 * time.Millisecond, ReconnectMax: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	}
}
