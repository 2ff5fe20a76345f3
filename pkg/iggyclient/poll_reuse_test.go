package iggyclient_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A poll that reuses its buffers returns exactly what a poll through the SDK returns, batch by
// batch, on the dev broker: ids, offsets, checksums, timestamps, payloads and user headers; and
// auto-commit and group membership work the same.
func TestPollWithReusedBuffersMatchesTheSDKPoll(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	c := dial(t, srv)
	ctx := testContext(t)
	var out []iggyclient.OutMessage
	for i := range 250 {
		m := iggyclient.OutMessage{Payload: fmt.Appendf(nil, `{"n":%d,"pad":"%*s"}`, i, i%40, "")}
		if i%3 == 0 {
			m.Headers = []iggyclient.HeaderEntry{
				{KeyKind: iggyclient.KindString, Key: []byte("trace"), Kind: iggyclient.KindString, Value: fmt.Appendf(nil, "t-%d", i)},
				{KeyKind: iggyclient.KindString, Key: []byte("n"), Kind: iggyclient.KindUint64, Value: []byte{byte(i), 0, 0, 0, 0, 0, 0, 0}},
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
}

// A steady poll loop with reused buffers allocates a few times per batch, not per message.
func TestPollWithReusedBuffersAllocatesPerBatchOnly(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
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
}
