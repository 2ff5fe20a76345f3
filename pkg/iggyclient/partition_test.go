package iggyclient_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A topic EnsureTopicWith creates carries the requested expiry and size limit, as the SDK reads
// them back; an existing topic keeps its own.
func TestEnsureTopicWithRetention(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"old": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		spec := iggyclient.TopicSpec{Partitions: 1, MessageExpiry: 7 * 24 * time.Hour, MaxTopicSize: 1 << 30}
		for _, topic := range []string{"fresh", "old"} {
			if err := c.EnsureTopicWith(ctx, "demo", topic, spec); err != nil {
				t.Fatal(err)
			}
		}
		sdk := testkit.LoggedInClient(t, srv)
		sid, _ := iggcon.NewIdentifier("demo")
		for _, tt := range []struct {
			topic   string
			expiry  iggcon.Duration
			maxSize uint64
		}{
			{"fresh", iggcon.Duration(spec.MessageExpiry.Microseconds()), 1 << 30},
			{"old", iggcon.IggyExpiryNeverExpire, 1<<64 - 1}, // the server's defaults, "never" and "unlimited"
		} {
			tid, _ := iggcon.NewIdentifier(tt.topic)
			details, err := sdk.GetTopic(sid, tid)
			if err != nil {
				t.Fatal(err)
			}
			if details.MessageExpiry != tt.expiry || details.MaxTopicSize != tt.maxSize {
				t.Errorf("topic %s: expiry %d max size %d, want %d and %d", tt.topic, details.MessageExpiry, details.MaxTopicSize, tt.expiry, tt.maxSize)
			}
		}
	})
}

// PollPartition reads the newest, the oldest or from an offset, and stores nothing: the same
// read twice gives the same message.
func TestPollPartition(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"log": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		empty, err := c.PollPartition(ctx, iggyclient.PartitionPoll{Stream: "demo", Topic: "log", From: iggyclient.PollLast, Count: 1})
		if err != nil || len(empty.Messages) != 0 {
			t.Fatalf("last of an empty partition: %d messages, %v", len(empty.Messages), err)
		}
		for i := range 5 {
			if err := c.Send(ctx, "demo", "log", iggyclient.Partitioning{Kind: iggyclient.PartitionByID}, []iggyclient.OutMessage{{Payload: []byte(fmt.Sprint(i))}}); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			from   string
			offset uint64
			want   string
		}{
			{iggyclient.PollLast, 0, "4"}, {iggyclient.PollLast, 0, "4"}, {iggyclient.PollFirst, 0, "0"}, {iggyclient.PollOffset, 2, "2"},
		}
		for _, tt := range tests {
			b, err := c.PollPartition(ctx, iggyclient.PartitionPoll{Stream: "demo", Topic: "log", From: tt.from, Offset: tt.offset, Count: 1})
			if err != nil || len(b.Messages) != 1 || string(b.Messages[0].Payload) != tt.want {
				t.Fatalf("%s %d: %v, %v; want payload %s", tt.from, tt.offset, b.Messages, err, tt.want)
			}
		}
		if _, err := c.PollPartition(ctx, iggyclient.PartitionPoll{Stream: "demo", Topic: "log", From: "middle", Count: 1}); err == nil {
			t.Fatal("an unknown start was accepted")
		}
	})
}

// Of two members of a group on a one-partition topic, only the first owns the partition; when it
// disconnects, the other one does.
func TestOwnsPartitionFollowsTheAssignment(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"lock": 1}))
		first, second := dial(t, srv), dial(t, srv)
		ctx := testContext(t)
		for _, c := range []iggyclient.Client{first, second} {
			if err := c.EnsureConsumerGroup(ctx, "demo", "lock", "lease"); err != nil {
				t.Fatal(err)
			}
		}
		if err := first.Send(ctx, "demo", "lock", iggyclient.Partitioning{Kind: iggyclient.PartitionByID}, []iggyclient.OutMessage{{Payload: []byte("hello")}}); err != nil {
			t.Fatal(err)
		}
		owns := func(c iggyclient.Client) bool {
			t.Helper()
			ok, err := c.OwnsPartition(ctx, "demo", "lock", "lease", 0)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !owns(first) || owns(second) {
			t.Fatalf("first owns %v, second owns %v; want only the first", owns(first), owns(second))
		}
		first.Close()
		testkit.Eventually(t, 5*time.Second, "the second member to get the partition after the first disconnected", func() bool { return owns(second) })
	})
}

// On a server that verifies heartbeats, a client that sends all the time still pings, so it
// keeps its session and its partition; a client that never pings (heartbeat off) is dropped as
// stale, its partition goes to the other member, and its next call reconnects and rejoins.
func TestHeartbeatKeepsABusyClientAndDropsASilentOne(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"lock": 1}), testkit.WithHeartbeat(500*time.Millisecond))
		ctx := testContext(t)
		busyLogs := &capturingHandler{}
		busy := dial(t, srv, func(o *iggyclient.Options) {
			o.HeartbeatInterval = 50 * time.Millisecond
			o.Logger = slog.New(busyLogs)
		})
		silent := dial(t, srv, func(o *iggyclient.Options) { o.HeartbeatInterval = -1 })
		for _, c := range []iggyclient.Client{silent, busy} {
			if err := c.EnsureConsumerGroup(ctx, "demo", "lock", "lease"); err != nil {
				t.Fatal(err)
			}
		}
		msg := []iggyclient.OutMessage{{Payload: []byte("x")}}
		for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			if err := busy.Send(ctx, "demo", "lock", iggyclient.Partitioning{Kind: iggyclient.PartitionByID}, msg); err != nil {
				t.Fatal(err)
			}
		}
		if busyLogs.saw("iggy connection lost, reconnecting") {
			t.Fatal("the busy client was dropped as stale: it did not ping while sending")
		}
		owns, err := busy.OwnsPartition(ctx, "demo", "lock", "lease", 0)
		if err != nil || !owns {
			t.Fatalf("the busy client owns the partition: %v, %v; the silent first member should have been dropped", owns, err)
		}
		owns, err = silent.OwnsPartition(ctx, "demo", "lock", "lease", 0)
		if err != nil || owns {
			t.Fatalf("the silent client, back: owns %v, %v; want a reconnected member without the partition", owns, err)
		}
	})
}
