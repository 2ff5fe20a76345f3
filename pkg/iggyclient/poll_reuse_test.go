package iggyclient_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A poll that reuses its buffers returns exactly what a poll through the SDK returns, batch by
// batch, on the dev broker: ids, offsets, checksums, timestamps, payloads and user headers; and
// auto-commit and group membership work the same.
func TestPollWithReusedBuffersMatchesTheSDKPoll(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		var out []iggyclient.OutMessage
		for i := range 250 {
			m := iggyclient.OutMessage{Payload: fmt.Appendf(nil, `{"n":%d,"pad":"%*s"}`, i, i%40, "")}
			if i%3 == 0 {
				m.Headers = []iggyclient.HeaderEntry{
					{KeyKind: iggywire.KindString, Key: []byte("trace"), Kind: iggywire.KindString, Value: fmt.Appendf(nil, "t-%d", i)},
					{KeyKind: iggywire.KindString, Key: []byte("n"), Kind: iggywire.KindUint64, Value: []byte{byte(i), 0, 0, 0, 0, 0, 0, 0}},
				}
			}
			out = append(out, m)
		}
		if err := c.Send(ctx, "demo", "events", iggyclient.Partitioning{}, out); err != nil {
			t.Fatal(err)
		}
		for _, group := range []string{"sdk", "reuse"} {
			if err := c.EnsureConsumerGroup(ctx, "demo", "events", group); err != nil {
				t.Fatal(err)
			}
		}
		var buf iggyclient.PollBuffers
		for round := 0; ; round++ {
			want, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "events", Group: "sdk", Count: 40, AutoCommit: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "events", Group: "reuse", Count: 40, AutoCommit: true, Reuse: &buf})
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Messages) == 0 {
				if len(got.Messages) != 0 {
					t.Fatalf("round %d: the SDK poll is done, the reused one returned %d messages", round, len(got.Messages))
				}
				if round != 7 {
					t.Fatalf("drained after %d rounds, want 7 (250 messages, 40 a poll)", round)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: reused poll\n%+v\nSDK poll\n%+v", round, got, want)
			}
		}
	})
}

// A steady poll loop with reused buffers allocates a few times per batch, not per message.
func TestPollWithReusedBuffersAllocatesPerBatchOnly(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		out := make([]iggyclient.OutMessage, 500)
		for i := range out {
			out[i].Payload = []byte(`{"id":"6f1c0c4e-8f8e-4f43-9a53-0c6f0e7d3b1a","title":"Hello","name":"World"}`)
		}
		for range 20 {
			if err := c.Send(ctx, "demo", "events", iggyclient.Partitioning{}, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.EnsureConsumerGroup(ctx, "demo", "events", "g"); err != nil {
			t.Fatal(err)
		}
		var buf iggyclient.PollBuffers
		poll := func() {
			b, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "events", Group: "g", Count: 500, AutoCommit: true, Reuse: &buf})
			if err != nil || len(b.Messages) != 500 {
				t.Fatalf("poll: %d messages, %v", len(b.Messages), err)
			}
		}
		poll() // grows the buffers
		if n := testing.AllocsPerRun(10, poll); n > 20 {
			t.Errorf("a 500-message poll with reused buffers allocates %.0f times, want at most 20", n)
		}
	})
}

// StoreFirst stores the group offset in the poll's own write: each next poll starts after the
// stored offset (without it the same batch comes back, auto-commit being off), through the
// reused-buffer path and through the SDK alike; a store the server refuses is Batch.StoreErr,
// the poll still answers and the connection stays in step for the next call.
func TestPollStoreFirst(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		c := dial(t, srv)
		ctx := testContext(t)
		var out []iggyclient.OutMessage
		for i := range 100 {
			out = append(out, iggyclient.OutMessage{Payload: fmt.Appendf(nil, `{"n":%d}`, i)})
		}
		if err := c.Send(ctx, "demo", "events", iggyclient.Partitioning{}, out); err != nil {
			t.Fatal(err)
		}
		for _, reuse := range []*iggyclient.PollBuffers{new(iggyclient.PollBuffers), nil} {
			group := fmt.Sprintf("g-reuse-%v", reuse != nil)
			if err := c.EnsureConsumerGroup(ctx, "demo", "events", group); err != nil {
				t.Fatal(err)
			}
			poll := func(store *iggyclient.StoredOffset) iggyclient.Batch {
				t.Helper()
				b, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "events", Group: group, Count: 30, Reuse: reuse, StoreFirst: store})
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			first := poll(nil)
			if again := poll(nil); len(again.Messages) != 30 || again.Messages[0].Offset != 0 || first.Messages[0].Offset != 0 {
				t.Fatalf("%s: without a store the first batch should come back, got offset %d", group, again.Messages[0].Offset)
			}
			var store *iggyclient.StoredOffset
			next := uint64(0)
			for rounds := 0; next < 100; rounds++ {
				b := poll(store)
				if b.StoreErr != nil {
					t.Fatalf("%s: store before poll: %v", group, b.StoreErr)
				}
				if len(b.Messages) == 0 || b.Messages[0].Offset != next {
					t.Fatalf("%s round %d: poll after storing %+v starts at %v, want offset %d", group, rounds, store, b.Messages, next)
				}
				last := b.Messages[len(b.Messages)-1].Offset
				next = last + 1
				store = &iggyclient.StoredOffset{PartitionID: b.PartitionID, Offset: last}
			}
			if b := poll(store); len(b.Messages) != 0 || b.StoreErr != nil {
				t.Fatalf("%s: after the last store: %d messages, store error %v", group, len(b.Messages), b.StoreErr)
			}
			// A store the server refuses (no partition 99) is reported, and the poll still answers in step.
			b := poll(&iggyclient.StoredOffset{PartitionID: 99, Offset: 5})
			if b.StoreErr == nil {
				t.Fatalf("%s: store on partition 99 reported no error", group)
			}
			if len(b.Messages) != 0 {
				t.Fatalf("%s: poll after a refused store returned %d messages, want 0", group, len(b.Messages))
			}
			if err := c.StoreOffset(ctx, "demo", "events", group, first.PartitionID, 49); err != nil {
				t.Fatalf("%s: the connection is out of step after a refused store: %v", group, err)
			}
			if b := poll(nil); len(b.Messages) != 30 || b.Messages[0].Offset != 50 {
				t.Fatalf("%s: after storing 49 the poll starts at %v, want 50", group, b.Messages)
			}
		}
	})
}
