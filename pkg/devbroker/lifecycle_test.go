package devbroker_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

func TestLifecycle(t *testing.T) {
	t.Run("restart before start", func(t *testing.T) {
		if err := devbroker.New(devbroker.Config{}).Restart(true); !errors.Is(err, devbroker.ErrNotStarted) {
			t.Fatalf("Restart before Start: err = %v, want ErrNotStarted", err)
		}
	})
	t.Run("start twice", func(t *testing.T) {
		srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0"})
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		if err := srv.Start(context.Background()); !errors.Is(err, devbroker.ErrAlreadyStarted) {
			t.Fatalf("second Start: err = %v, want ErrAlreadyStarted", err)
		}
	})
	t.Run("address in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		err = devbroker.New(devbroker.Config{Address: ln.Addr().String()}).Start(context.Background())
		if err == nil {
			t.Fatalf("Start on the busy %s succeeded", ln.Addr())
		}
	})
	t.Run("bad configured stream", func(t *testing.T) {
		srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", Streams: []devbroker.StreamConfig{{Name: "a"}, {Name: "a"}}})
		if err := srv.Start(context.Background()); err == nil {
			t.Fatal("Start with a duplicate configured stream succeeded")
		}
	})
	t.Run("context end stops the server, also after a restart", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0"})
		if err := srv.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		if err := srv.Restart(true); err != nil {
			t.Fatal(err)
		}
		cancel()
		waitFor(t, "the listener to close", func() bool {
			conn, err := net.Dial("tcp", srv.Addr())
			if err == nil {
				conn.Close()
			}
			return err != nil
		})
	})
}
