package memclient_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/memclient"
)

func payloads(b iggyclient.Batch) []string {
	var out []string
	for _, m := range b.Messages {
		out = append(out, string(m.Payload))
	}
	return out
}

// Two members split a topic's partitions; each polls only its own, from the stored offset, and
// may store only its own; a poll naming the other's partition is NotOwned; Close hands
// everything back.
func TestGroupsSplitPollAndStore(t *testing.T) {
	ctx := context.Background()
	b := memclient.NewBroker()
	b.CreateTopic("s", "t", 2)
	for p := range uint32(2) {
		for i := range 3 {
			if _, err := b.Append("s", "t", p, fmt.Appendf(nil, "p%d-%d", p, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, c := b.Dial(), b.Dial()
	for _, m := range []*memclient.Client{a, c} {
		if err := m.EnsureConsumerGroup(ctx, "s", "t", "g"); err != nil {
			t.Fatal(err)
		}
	}
	as, err := a.Assignment(ctx, "s", "t", "g")
	if err != nil || !as.Known || !slices.Equal(as.Partitions, []uint32{0}) {
		t.Fatalf("first member's assignment %+v, %v; want partition 0", as, err)
	}
	got, err := a.Poll(ctx, iggyclient.PollRequest{Stream: "s", Topic: "t", Group: "g", Count: 2})
	if err != nil || !slices.Equal(payloads(got), []string{"p0-0", "p0-1"}) {
		t.Fatalf("poll: %q, %v", payloads(got), err)
	}
	var heard []error
	got, err = a.Poll(ctx, iggyclient.PollRequest{Stream: "s", Topic: "t", Group: "g", Count: 5,
		StoreFirst: &iggyclient.StoredOffset{PartitionID: 0, Offset: 1}, OnStored: func(err error) { heard = append(heard, err) }})
	if err != nil || !slices.Equal(payloads(got), []string{"p0-2"}) || len(heard) != 1 || heard[0] != nil {
		t.Fatalf("poll after storing 1: %q, %v, heard %v", payloads(got), err, heard)
	}
	if err := a.StoreOffset(ctx, "s", "t", "g", 1, 0); !errors.Is(err, iggyclient.ErrPartitionOwned) {
		t.Fatalf("store on the other member's partition: %v, want ErrPartitionOwned", err)
	}
	if got, _ := a.Poll(ctx, iggyclient.PollRequest{Stream: "s", Topic: "t", Group: "g", Count: 5, At: &iggyclient.PollAt{PartitionID: 1}}); !got.NotOwned {
		t.Fatalf("a poll naming the other member's partition: %+v, want NotOwned", got)
	}
	if got, _ := a.Poll(ctx, iggyclient.PollRequest{Stream: "s", Topic: "t", Group: "g", Count: 5, At: &iggyclient.PollAt{PartitionID: 0, Offset: 1}}); !slices.Equal(payloads(got), []string{"p0-1", "p0-2"}) {
		t.Fatalf("a poll at offset 1: %q", payloads(got))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if as, _ := a.Assignment(ctx, "s", "t", "g"); !slices.Equal(as.Partitions, []uint32{0, 1}) {
		t.Fatalf("after the other member closed: %+v, want both partitions", as)
	}
	if off, ok := b.Stored("s", "t", "g", 0); !ok || off != 1 {
		t.Fatalf("stored offset %d (%v), want 1", off, ok)
	}
}

// Sends place messages as the server does; OnRequest sees each request and can fail it.
func TestSendPartitioningAndFaults(t *testing.T) {
	ctx := context.Background()
	b := memclient.NewBroker()
	var seen []memclient.Kind
	b.OnRequest = func(r memclient.Request) error {
		seen = append(seen, r.Kind)
		if r.Kind == memclient.KindSend && r.Partition == 9 {
			return errors.New("injected")
		}
		return nil
	}
	c := b.Dial()
	if err := c.EnsureTopic(ctx, "s", "t", 3); err != nil {
		t.Fatal(err)
	}
	msg := []iggyclient.OutMessage{{Payload: []byte("x")}}
	for range 3 {
		if err := c.Send(ctx, "s", "t", iggyclient.Partitioning{}, msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Send(ctx, "s", "t", iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: 9}, msg); err == nil || err.Error() != "injected" {
		t.Fatalf("send with an injected fault: %v", err)
	}
	for p := range uint32(3) {
		if got, _ := b.Messages("s", "t", p); len(got) != 1 {
			t.Fatalf("partition %d holds %d messages after three balanced sends, want 1", p, len(got))
		}
	}
	if _, err := c.TopicInfo(ctx, "s", "missing"); !errors.Is(err, iggyclient.ErrNotFound) {
		t.Fatalf("a missing topic: %v", err)
	}
	c.Close()
	if err := c.Send(ctx, "s", "t", iggyclient.Partitioning{}, msg); !errors.Is(err, iggyclient.ErrClosed) {
		t.Fatalf("send after Close: %v, want ErrClosed", err)
	}
	if len(seen) != 6 {
		t.Fatalf("OnRequest saw %v", seen)
	}
}
