package iggyclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// brokerProtocols is the protocol the clients of a test's broker speak (*devbroker.Server -> string).
var brokerProtocols sync.Map

// startBroker starts a dev broker whose clients (dial, clientOptions) speak proto.
func startBroker(t testing.TB, proto string, opts ...testkit.BrokerOption) *devbroker.Server {
	t.Helper()
	srv := testkit.StartBroker(t, opts...)
	brokerProtocols.Store(srv, proto)
	t.Cleanup(func() { brokerProtocols.Delete(srv) })
	return srv
}

// clientOptions are testkit.ClientOptions with the protocol startBroker chose for srv.
func clientOptions(srv *devbroker.Server) iggyclient.Options {
	o := testkit.ClientOptions(srv)
	if p, ok := brokerProtocols.Load(srv); ok {
		o.Protocol = p.(string)
	}
	return o
}

// dial connects to the dev broker with clientOptions, changed by change, and closes the client
// when the test ends.
func dial(t testing.TB, srv *devbroker.Server, change ...func(*iggyclient.Options)) iggyclient.Client {
	t.Helper()
	o := clientOptions(srv)
	for _, f := range change {
		f(&o)
	}
	c, err := iggyclient.Dial(testContext(t), o)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testContext bounds every call: a hung client fails the test instead of
// hanging it.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDialLogsIn(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithToken("pat-secret"), testkit.WithStream("demo", map[string]uint32{"orders": 3}))
		tests := []struct {
			name   string
			change func(*iggyclient.Options)
		}{
			{"username and password", func(*iggyclient.Options) {}},
			{"personal access token", func(o *iggyclient.Options) { o.Username, o.Password, o.Token = "", "", "pat-secret" }},
			{"token wins over a wrong password", func(o *iggyclient.Options) { o.Password, o.Token = "wrong", "pat-secret" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := dial(t, srv, tt.change)
				// A call that needs a logged-in session proves the login.
				info, err := c.TopicInfo(testContext(t), "demo", "orders")
				if err != nil {
					t.Fatal(err)
				}
				if info.Partitions != 3 {
					t.Fatalf("partitions %d, want 3", info.Partitions)
				}
			})
		}
	})
}

func TestDialRefusedCredentialsAreUnauthorized(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithToken("pat-secret"))
		tests := []struct {
			name                      string
			username, password, token string
		}{
			{"wrong password", "iggy", "wrong-password", ""},
			{"unknown user", "nobody", "iggy", ""},
			{"unknown token", "", "", "not-a-token"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := iggyclient.Dial(ctx, iggyclient.Options{
					Address: srv.Addr(), Protocol: proto, Username: tt.username, Password: tt.password, Token: tt.token,
					Logger: slog.New(slog.DiscardHandler),
				})
				if err == nil {
					c.Close()
					t.Fatal("Dial succeeded")
				}
				if !errors.Is(err, iggyclient.ErrUnauthorized) {
					t.Fatalf("error %v, want ErrUnauthorized", err)
				}
				if ctx.Err() != nil {
					t.Fatalf("Dial retried refused credentials until the deadline: %v", err)
				}
			})
		}
	})
}

func TestMissingStreamOrTopicIsNotFound(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		msg := []iggyclient.OutMessage{{Payload: []byte("x")}}
		tests := []struct {
			name string
			call func(ctx context.Context) error
		}{
			{"topic info, stream by name", func(ctx context.Context) error { _, err := c.TopicInfo(ctx, "nope", "orders"); return err }},
			{"topic info, stream by id", func(ctx context.Context) error { _, err := c.TopicInfo(ctx, "7", "orders"); return err }},
			{"topic info, topic", func(ctx context.Context) error { _, err := c.TopicInfo(ctx, "demo", "nope"); return err }},
			{"ensure group, stream", func(ctx context.Context) error { return c.EnsureConsumerGroup(ctx, "nope", "orders", "g") }},
			{"ensure group, topic", func(ctx context.Context) error { return c.EnsureConsumerGroup(ctx, "demo", "nope", "g") }},
			{"send, stream", func(ctx context.Context) error { return c.Send(ctx, "nope", "orders", iggyclient.Partitioning{}, msg) }},
			{"send, topic", func(ctx context.Context) error { return c.Send(ctx, "demo", "nope", iggyclient.Partitioning{}, msg) }},
			{"send, partition", func(ctx context.Context) error {
				return c.Send(ctx, "demo", "orders", iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: 5}, msg)
			}},
			{"poll, stream", func(ctx context.Context) error {
				_, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "nope", Topic: "orders", Group: "g", Count: 1})
				return err
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err := tt.call(ctx)
				if !errors.Is(err, iggyclient.ErrNotFound) {
					t.Fatalf("error %v, want ErrNotFound", err)
				}
				if ctx.Err() != nil {
					t.Fatalf("the call retried until the deadline: %v", err)
				}
			})
		}
	})
}

func TestSendPollRoundTrip(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		ctx := testContext(t)

		sent := []iggyclient.OutMessage{
			{ID: [16]byte{15: 1}, Payload: []byte("first"), Headers: []iggyclient.HeaderEntry{
				{KeyKind: iggywire.KindString, Key: []byte("trace"), Kind: iggywire.KindString, Value: []byte("abc")},
				{KeyKind: iggywire.KindString, Key: []byte("n"), Kind: iggywire.KindUint32, Value: []byte{7, 0, 0, 0}},
			}},
			{Payload: []byte("second, no headers, server-made id")},
			{ID: [16]byte{15: 3}, Payload: []byte{0, 1, 2, 255}, Headers: []iggyclient.HeaderEntry{
				{KeyKind: iggywire.KindRaw, Key: []byte{0xff}, Kind: iggywire.KindBool, Value: []byte{1}},
			}},
		}
		if err := c.Send(ctx, "demo", "orders", iggyclient.Partitioning{}, sent); err != nil {
			t.Fatal(err)
		}
		// The stream by its numeric id, the topic by name: both address the same topic.
		if err := c.EnsureConsumerGroup(ctx, "0", "orders", "sink-demo"); err != nil {
			t.Fatal(err)
		}
		batch, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "0", Topic: "orders", Group: "sink-demo", Count: 10, AutoCommit: true})
		if err != nil {
			t.Fatal(err)
		}
		if batch.PartitionID != 0 || batch.CurrentOffset != 2 || len(batch.Messages) != len(sent) {
			t.Fatalf("batch partition %d, current offset %d, %d messages; want 0, 2, %d",
				batch.PartitionID, batch.CurrentOffset, len(batch.Messages), len(sent))
		}
		for i, got := range batch.Messages {
			want := sent[i]
			if !bytes.Equal(got.Payload, want.Payload) || got.Offset != uint64(i) {
				t.Errorf("message %d: payload %q offset %d, want %q offset %d", i, got.Payload, got.Offset, want.Payload, i)
			}
			if want.ID != ([16]byte{}) && got.ID != want.ID {
				t.Errorf("message %d: id %x, want %x", i, got.ID, want.ID)
			}
			if got.ID == ([16]byte{}) || got.Timestamp == 0 || got.OriginTimestamp == 0 || got.Checksum == 0 {
				t.Errorf("message %d: server fields missing: id %x timestamp %d origin %d checksum %d",
					i, got.ID, got.Timestamp, got.OriginTimestamp, got.Checksum)
			}
			if !sameHeaders(got.Headers, want.Headers) {
				t.Errorf("message %d: headers %+v, want %+v", i, got.Headers, want.Headers)
			}
		}
		// Auto-commit stored the offset: the group's next poll is empty.
		again, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "sink-demo", Count: 10, AutoCommit: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Messages) != 0 {
			t.Fatalf("second poll returned %d messages, want none after auto-commit", len(again.Messages))
		}
	})
}

func sameHeaders(got, want []iggyclient.HeaderEntry) bool {
	return slices.EqualFunc(got, want, func(a, b iggyclient.HeaderEntry) bool {
		return a.Kind == b.Kind && a.KeyKind == b.KeyKind && bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value)
	})
}

func TestSendPartitioning(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		// docs/iggy-protocol-0.8.md §6.4: balanced rotates per request from 0; messages key
		// "user-42" over 3 partitions lands on 2.
		tests := []struct {
			name  string
			sends []iggyclient.Partitioning
			want  []uint32 // partition of each send, in order
		}{
			{"balanced", []iggyclient.Partitioning{{}, {Kind: iggyclient.PartitionBalanced}, {}, {}}, []uint32{0, 1, 2, 0}},
			{"partition id", []iggyclient.Partitioning{{Kind: iggyclient.PartitionByID, PartitionID: 2}, {Kind: iggyclient.PartitionByID, PartitionID: 0}}, []uint32{2, 0}},
			{"messages key", []iggyclient.Partitioning{{Kind: iggyclient.PartitionByMessageKey, Key: []byte("user-42")}}, []uint32{2}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 3}))
				c := dial(t, srv)
				for i, p := range tt.sends {
					msg := []iggyclient.OutMessage{{Payload: fmt.Appendf(nil, "send %d", i)}}
					if err := c.Send(testContext(t), "demo", "orders", p, msg); err != nil {
						t.Fatalf("send %d: %v", i, err)
					}
				}
				stored, err := srv.Messages("demo", "orders")
				if err != nil {
					t.Fatal(err)
				}
				got := make([]uint32, len(tt.sends))
				for _, m := range stored {
					var i int
					if _, err := fmt.Sscanf(string(m.Payload), "send %d", &i); err != nil {
						t.Fatalf("stored payload %q: %v", m.Payload, err)
					}
					got[i] = m.Partition
				}
				if len(stored) != len(tt.sends) || !slices.Equal(got, tt.want) {
					t.Fatalf("%d stored, partitions %v; want %d stored, partitions %v", len(stored), got, len(tt.sends), tt.want)
				}
			})
		}
	})
}

func TestSendRejectsInvalidMessages(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		ok := iggyclient.OutMessage{Payload: []byte("ok")}
		tests := []struct {
			name    string
			p       iggyclient.Partitioning
			msgs    []iggyclient.OutMessage
			wantMsg string
		}{
			{"no messages", iggyclient.Partitioning{}, nil, "no messages"},
			{"empty payload", iggyclient.Partitioning{}, []iggyclient.OutMessage{ok, {}}, "message 1: payload is 0 bytes"},
			{"payload over 10 MB", iggyclient.Partitioning{}, []iggyclient.OutMessage{{Payload: make([]byte, 10_000_001)}}, "payload is 10000001 bytes"},
			{"bad header", iggyclient.Partitioning{}, []iggyclient.OutMessage{{Payload: []byte("x"), Headers: []iggyclient.HeaderEntry{{Key: []byte("k"), Kind: iggywire.KindInt64, Value: []byte{1}}}}}, "is 1 bytes, want 8"},
			{"unknown partitioning", iggyclient.Partitioning{Kind: "random"}, []iggyclient.OutMessage{ok}, `unknown partitioning kind "random"`},
			{"empty messages key", iggyclient.Partitioning{Kind: iggyclient.PartitionByMessageKey}, []iggyclient.OutMessage{ok}, "messages key is 0 bytes"},
			{"long messages key", iggyclient.Partitioning{Kind: iggyclient.PartitionByMessageKey, Key: make([]byte, 256)}, []iggyclient.OutMessage{ok}, "messages key is 256 bytes"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := c.Send(testContext(t), "demo", "orders", tt.p, tt.msgs)
				if !errors.Is(err, iggyclient.ErrInvalidMessage) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("error %v, want ErrInvalidMessage mentioning %q", err, tt.wantMsg)
				}
			})
		}
		stored, err := srv.Messages("demo", "orders")
		if err != nil || len(stored) != 0 {
			t.Fatalf("topic holds %d messages (err %v) after only invalid sends, want 0", len(stored), err)
		}
	})
}

func TestStoredOffsetResumesInFreshClient(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		ctx := testContext(t)
		producer := dial(t, srv)
		sendNumbered(t, producer, "orders", 0, 10)

		first := dial(t, srv)
		if err := first.EnsureConsumerGroup(ctx, "demo", "orders", "resume"); err != nil {
			t.Fatal(err)
		}
		batch, err := first.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "resume", Count: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(batch.Messages) != 4 {
			t.Fatalf("first poll: %d messages, want 4", len(batch.Messages))
		}
		last := batch.Messages[3].Offset
		if err := first.StoreOffset(ctx, "demo", "orders", "resume", batch.PartitionID, last); err != nil {
			t.Fatal(err)
		}
		first.Close()

		second := dial(t, srv)
		if err := second.EnsureConsumerGroup(ctx, "demo", "orders", "resume"); err != nil {
			t.Fatal(err)
		}
		got := pollAll(t, second, "orders", "resume", 10-4)
		if want := numbered(4, 10); !slices.Equal(got, want) {
			t.Fatalf("fresh client read %q, want %q", got, want)
		}
	})
}

func TestClosedClientRefusesCalls(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := c.TopicInfo(testContext(t), "demo", "orders")
		if !errors.Is(err, iggyclient.ErrClosed) {
			t.Fatalf("error %v, want ErrClosed", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

func TestGroupMembersSplitPartitions(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
		ctx := testContext(t)
		producer := dial(t, srv)
		for p := range uint32(2) {
			msgs := make([]iggyclient.OutMessage, 5)
			for i := range msgs {
				msgs[i].Payload = fmt.Appendf(nil, "p%d-%d", p, i)
			}
			if err := producer.Send(ctx, "demo", "orders", iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: p}, msgs); err != nil {
				t.Fatal(err)
			}
		}

		members := []iggyclient.Client{dial(t, srv), dial(t, srv)}
		for _, m := range members {
			if err := m.EnsureConsumerGroup(ctx, "demo", "orders", "split"); err != nil {
				t.Fatal(err)
			}
		}
		partitionsOf := make([]map[uint32]bool, len(members))
		var all []string
		for i, m := range members {
			partitionsOf[i] = map[uint32]bool{}
			for range 3 { // more polls than partitions: a member keeps to its own
				b, err := m.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "split", Count: 100, AutoCommit: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, msg := range b.Messages {
					partitionsOf[i][b.PartitionID] = true
					all = append(all, string(msg.Payload))
				}
			}
		}
		if len(partitionsOf[0]) != 1 || len(partitionsOf[1]) != 1 {
			t.Fatalf("members read partitions %v and %v, want one each", partitionsOf[0], partitionsOf[1])
		}
		for p := range partitionsOf[0] {
			if partitionsOf[1][p] {
				t.Fatalf("both members read partition %d", p)
			}
		}
		slices.Sort(all)
		want := []string{"p0-0", "p0-1", "p0-2", "p0-3", "p0-4", "p1-0", "p1-1", "p1-2", "p1-3", "p1-4"}
		if !slices.Equal(all, want) {
			t.Fatalf("the group read %q, want %q", all, want)
		}
	})
}

func TestCallGivesUpWhenContextEndsWhileServerIsDown(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		c := dial(t, srv)
		srv.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "g", Count: 1})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want context.DeadlineExceeded", err)
		}
	})
}

// sendNumbered sends payloads "m<from>".."m<to-1>" in one request.
func sendNumbered(t testing.TB, c iggyclient.Client, topic string, from, to int) {
	t.Helper()
	msgs := make([]iggyclient.OutMessage, 0, to-from)
	for i := from; i < to; i++ {
		msgs = append(msgs, iggyclient.OutMessage{Payload: fmt.Appendf(nil, "m%d", i)})
	}
	if err := c.Send(testContext(t), "demo", topic, iggyclient.Partitioning{}, msgs); err != nil {
		t.Fatalf("send m%d..m%d: %v", from, to-1, err)
	}
}

func numbered(from, to int) []string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, fmt.Sprintf("m%d", i))
	}
	return s
}

// pollAll polls the group with auto-commit until it has n payloads.
func pollAll(t testing.TB, c iggyclient.Client, topic, group string, n int) []string {
	t.Helper()
	ctx := testContext(t)
	var got []string
	for len(got) < n {
		b, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: topic, Group: group, Count: 100, AutoCommit: true})
		if err != nil {
			t.Fatalf("poll after %d of %d messages: %v", len(got), n, err)
		}
		for _, m := range b.Messages {
			got = append(got, string(m.Payload))
		}
	}
	return got
}

func TestStoreOffsetOnPartitionOfAnotherMember(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
		ctx := testContext(t)
		producer := dial(t, srv)
		for p := range uint32(2) {
			msg := []iggyclient.OutMessage{{Payload: []byte("x")}}
			if err := producer.Send(ctx, "demo", "orders", iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: p}, msg); err != nil {
				t.Fatal(err)
			}
		}
		a, b := dial(t, srv), dial(t, srv)
		for _, m := range []iggyclient.Client{a, b} {
			if err := m.EnsureConsumerGroup(ctx, "demo", "orders", "owners"); err != nil {
				t.Fatal(err)
			}
		}
		batch, err := a.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "owners", Count: 1})
		if err != nil || len(batch.Messages) != 1 {
			t.Fatalf("poll: %v, %d messages", err, len(batch.Messages))
		}
		other := 1 - batch.PartitionID
		err = a.StoreOffset(ctx, "demo", "orders", "owners", other, 0)
		if err == nil || !strings.Contains(err.Error(), "assigned to another group member") {
			t.Fatalf("error %v, want one saying partition %d belongs to another member", err, other)
		}
		if err := a.StoreOffset(ctx, "demo", "orders", "owners", batch.PartitionID, 0); err != nil {
			t.Fatalf("store on its own partition: %v", err)
		}
	})
}

func TestEnsureTopic(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		tests := []struct {
			name, stream, topic string
			partitions          uint32
			wantPartitions      uint32 // of the topic afterwards
			wantErr             error
		}{
			{"creates stream and topic", "fresh", "events", 3, 3, nil},
			{"creates topic in existing stream", "demo", "events", 2, 2, nil},
			{"keeps an existing topic", "demo", "orders", 1, 4, nil},
			{"existing stream and topic by id", "0", "0", 1, 4, nil},
			{"cannot create a stream by id", "9", "events", 1, 0, iggyclient.ErrNotFound},
			{"cannot create a topic by id", "demo", "9", 1, 0, iggyclient.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 4}))
				c := dial(t, srv)
				ctx := testContext(t)
				for round := range 2 { // a second call finds everything in place
					err := c.EnsureTopic(ctx, tt.stream, tt.topic, tt.partitions)
					if tt.wantErr != nil {
						if !errors.Is(err, tt.wantErr) {
							t.Fatalf("round %d: error %v, want %v", round, err, tt.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					info, err := c.TopicInfo(ctx, tt.stream, tt.topic)
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					if info.Partitions != tt.wantPartitions {
						t.Fatalf("round %d: %d partitions, want %d", round, info.Partitions, tt.wantPartitions)
					}
				}
			})
		}
	})
}

func TestEnsureTopicRejectsPartitionCount(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto)
		c := dial(t, srv)
		for _, n := range []uint32{0, 1001} {
			err := c.EnsureTopic(testContext(t), "s", "t", n)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("partition count %d is out of range 1..1000", n)) {
				t.Errorf("EnsureTopic with %d partitions: error %v", n, err)
			}
		}
	})
}
