package iggyclient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func TestPollJoinsAndCreatesGroupByItself(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		tests := []struct {
			name         string
			createdFirst bool // by another client, which then disconnects
		}{
			{"group missing", false},
			{"group exists, this client never joined", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
				producer := dial(t, srv)
				sendNumbered(t, producer, "orders", 0, 3)
				if tt.createdFirst {
					other := dial(t, srv)
					if err := other.EnsureConsumerGroup(testContext(t), "demo", "orders", "lazy"); err != nil {
						t.Fatal(err)
					}
					other.Close()
				}
				c := dial(t, srv)
				got := pollAll(t, c, "orders", "lazy", 3)
				if want := numbered(0, 3); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("read %q, want %q", got, want)
				}
			})
		}
	})
}

func TestPollRecreatesDeletedGroup(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		sendNumbered(t, c, "orders", 0, 2)
		if err := c.EnsureConsumerGroup(ctx, "demo", "orders", "doomed"); err != nil {
			t.Fatal(err)
		}
		admin := testkit.LoggedInClient(t, srv)
		stream, topic, group := sdkIDs(t, "demo", "orders", "doomed")
		if err := admin.DeleteConsumerGroup(stream, topic, group); err != nil {
			t.Fatal(err)
		}
		got := pollAll(t, c, "orders", "doomed", 2)
		if want := numbered(0, 2); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("read %q, want %q", got, want)
		}
	})
}

// A server that accepts connections but never answers: the SDK would block
// on its read forever, so the client must give up when ctx ends.
func TestDialRespectsContextWhenServerNeverAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns sync.WaitGroup
	conns.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer conn.Close()
				_, _ = conn.Read(make([]byte, 1024)) // swallow the login, answer nothing
				_, _ = conn.Read(make([]byte, 1))    // until the client hangs up
			})
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = iggyclient.Dial(ctx, iggyclient.Options{
		Address: ln.Addr().String(), Username: "iggy", Password: "iggy", Logger: slog.New(slog.DiscardHandler),
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	ln.Close()
	conns.Wait() // returns only because the client closed its connection
}

// An idle client notices a dead connection through its heartbeat.
func TestHeartbeatDetectsLostConnection(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		logs := &capturingHandler{}
		c := dial(t, srv, func(o *iggyclient.Options) {
			o.HeartbeatInterval = 10 * time.Millisecond
			o.Logger = slog.New(logs)
		})
		if err := srv.Restart(true); err != nil {
			t.Fatal(err)
		}
		waitForLog(t, logs, "iggy heartbeat failed")
		if _, err := c.TopicInfo(testContext(t), "demo", "orders"); err != nil {
			t.Fatalf("call after the heartbeat dropped the session: %v", err)
		}
	})
}

func waitForLog(t *testing.T, h *capturingHandler, msg string) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, fmt.Sprintf("a %q log", msg), func() bool { return h.saw(msg) })
}

// capturingHandler records every log message.
type capturingHandler struct {
	mu       sync.Mutex
	messages []string
}

func (h *capturingHandler) saw(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.messages, msg)
}

func (h *capturingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *capturingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.messages = append(h.messages, r.Message)
	h.mu.Unlock()
	return nil
}
func (h *capturingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *capturingHandler) WithGroup(string) slog.Handler      { return h }

func sdkIDs(t *testing.T, names ...string) (stream, topic, group iggcon.Identifier) {
	t.Helper()
	ids := make([]iggcon.Identifier, len(names))
	for i, n := range names {
		id, err := iggcon.NewIdentifier(n)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids[0], ids[1], ids[2]
}
