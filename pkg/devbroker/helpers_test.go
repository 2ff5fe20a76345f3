package devbroker_test

import (
	"context"
	"io"
	"log"
	"os"
	"testing"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

// Local test helpers, like pkg/testkit's, kept here so this package's tests
// build on their own.

// TestMain silences the SDK, which logs every login's leader check with the
// standard logger and would bury test and benchmark output.
func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

func startBroker(tb testing.TB, cfg devbroker.Config) *devbroker.Server {
	tb.Helper()
	cfg.Address = "127.0.0.1:0"
	srv := devbroker.New(cfg)
	if err := srv.Start(context.Background()); err != nil {
		tb.Fatalf("start dev broker: %v", err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}

func newClient(tb testing.TB, addr string) iggcon.Client {
	tb.Helper()
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
	if err != nil {
		tb.Fatalf("connect SDK client to %s: %v", addr, err)
	}
	tb.Cleanup(func() { _ = cli.Close() })
	return cli
}

func loggedInClient(tb testing.TB, srv *devbroker.Server) iggcon.Client {
	tb.Helper()
	cli := newClient(tb, srv.Addr())
	if _, err := cli.LoginUser("iggy", "iggy"); err != nil {
		tb.Fatalf("log in to %s: %v", srv.Addr(), err)
	}
	return cli
}
