package iggyclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Auto detection picks the protocol the server speaks and logs one line naming it. A server that
// speaks both (the dev broker by default) is spoken to in 0.9, which is asked first.
func TestAutoDetectsTheServersProtocol(t *testing.T) {
	for _, tt := range []struct{ broker, want string }{
		{devbroker.Protocol08, iggyclient.Protocol08},
		{devbroker.Protocol09, iggyclient.Protocol09},
		{devbroker.ProtocolAuto, iggyclient.Protocol09},
	} {
		t.Run("broker "+tt.broker, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithProtocol(tt.broker))
			var logs bytes.Buffer
			c := dial(t, srv, func(o *iggyclient.Options) {
				o.Protocol = iggyclient.ProtocolAuto
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			if err := c.EnsureTopic(testContext(t), "detect", "t", 1); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(logs.String(), "iggy protocol detected"); n != 1 {
				t.Fatalf("%d detection lines, want 1:\n%s", n, logs.String())
			}
			if !strings.Contains(logs.String(), "protocol="+tt.want) {
				t.Fatalf("the detection line does not name protocol %s:\n%s", tt.want, logs.String())
			}
		})
	}
}

// A server that accepts connections but answers neither protocol (silent, or speaking something
// else) is an error naming the address and both protocols, not a hang and not a retry loop.
func TestAutoDetectionOfAServerThatAnswersNeither(t *testing.T) {
	for _, tt := range []struct {
		name  string
		serve func(net.Conn)
	}{
		{"silent", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }}, // reads until the client gives up
		{"closes at once", func(c net.Conn) {}},
		{"speaks HTTP", func(c net.Conn) {
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeServer(t, tt.serve)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := iggyclient.Dial(ctx, iggyclient.Options{Address: addr, Username: "iggy", Password: "iggy",
				Logger: slog.New(slog.DiscardHandler)})
			if !errors.Is(err, iggyclient.ErrUnknownProtocol) {
				t.Fatalf("error %v, want ErrUnknownProtocol", err)
			}
			for _, want := range []string{addr, "0.9", "0.8"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

// fakeServer accepts connections on loopback and hands each to serve, closing it afterwards.
func fakeServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}
