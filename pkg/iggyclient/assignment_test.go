package iggyclient_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// fillPartitions sends n messages "p<P>-<i>" to each of the topic's partitions.
func fillPartitions(t testing.TB, c iggyclient.Client, topic string, partitions uint32, n int) {
	t.Helper()
	for p := range partitions {
		msgs := make([]iggyclient.OutMessage, n)
		for i := range msgs {
			msgs[i].Payload = fmt.Appendf(nil, "p%d-%d", p, i)
		}
		if err := c.Send(testContext(t), "demo", topic, iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: p}, msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// assignmentAfterPoll polls once (the server, or 0.9's round robin, picks the partition) and
// reads the member's assignment.
func assignmentAfterPoll(t testing.TB, c iggyclient.Client, group string) (iggyclient.Batch, iggyclient.Assignment) {
	t.Helper()
	ctx := testContext(t)
	b, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: group, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Assignment(ctx, "demo", "orders", group)
	if err != nil {
		t.Fatal(err)
	}
	return b, a
}

// Two members of a group on four partitions each learn their own, disjoint, covering the topic
// (a join takes one partition from the member that had them all, as Iggy's cooperative
// rebalance does); a partition the server served a member is in its list.
func TestAssignmentListsTheMembersPartitions(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 4}))
		ctx := testContext(t)
		fillPartitions(t, dial(t, srv), "orders", 4, 3)
		a, b := dial(t, srv), dial(t, srv)
		for _, m := range []iggyclient.Client{a, b} {
			if err := m.EnsureConsumerGroup(ctx, "demo", "orders", "split"); err != nil {
				t.Fatal(err)
			}
		}
		var all []uint32
		for _, m := range []iggyclient.Client{a, b} {
			batch, as := assignmentAfterPoll(t, m, "split")
			if !as.Known || len(as.Partitions) == 0 {
				t.Fatalf("assignment %+v, want known partitions", as)
			}
			if !slices.Contains(as.Partitions, batch.PartitionID) {
				t.Fatalf("the member was served partition %d, its assignment is %v", batch.PartitionID, as.Partitions)
			}
			if as.Settling {
				t.Fatalf("assignment %+v says a hand-over is under way in a settled group", as)
			}
			all = append(all, as.Partitions...)
		}
		slices.Sort(all)
		if !slices.Equal(all, []uint32{0, 1, 2, 3}) {
			t.Fatalf("the members hold %v between them, want every partition once", all)
		}
	})
}

// A poll naming its partition reads from the offset it names, or after the stored offset;
// a partition of another member is answered NotOwned, and the member learns its list again.
func TestPollAtNamesPartitionAndOffset(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
		ctx := testContext(t)
		fillPartitions(t, dial(t, srv), "orders", 2, 10)
		a, b := dial(t, srv), dial(t, srv)
		for _, m := range []iggyclient.Client{a, b} {
			if err := m.EnsureConsumerGroup(ctx, "demo", "orders", "at"); err != nil {
				t.Fatal(err)
			}
		}
		_, as := assignmentAfterPoll(t, a, "at")
		if !as.Known || len(as.Partitions) != 1 {
			t.Fatalf("assignment %+v, want one known partition", as)
		}
		mine := as.Partitions[0]
		poll := func(at iggyclient.PollAt) iggyclient.Batch {
			t.Helper()
			batch, err := a.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "at", Count: 3, At: &at})
			if err != nil {
				t.Fatal(err)
			}
			return batch
		}
		payloads := func(b iggyclient.Batch) []string {
			var out []string
			for _, m := range b.Messages {
				out = append(out, string(m.Payload))
			}
			return out
		}
		want := func(from int) []string {
			return []string{fmt.Sprintf("p%d-%d", mine, from), fmt.Sprintf("p%d-%d", mine, from+1), fmt.Sprintf("p%d-%d", mine, from+2)}
		}
		if got := payloads(poll(iggyclient.PollAt{PartitionID: mine, Offset: 5})); !slices.Equal(got, want(5)) {
			t.Fatalf("poll at offset 5 read %q, want %q", got, want(5))
		}
		// Nothing stored yet: after the stored offset is from the first.
		if got := payloads(poll(iggyclient.PollAt{PartitionID: mine, AfterStored: true})); !slices.Equal(got, want(0)) {
			t.Fatalf("poll after the stored offset read %q, want %q", got, want(0))
		}
		if err := a.StoreOffset(ctx, "demo", "orders", "at", mine, 3); err != nil {
			t.Fatal(err)
		}
		if got := payloads(poll(iggyclient.PollAt{PartitionID: mine, AfterStored: true})); !slices.Equal(got, want(4)) {
			t.Fatalf("poll after stored offset 3 read %q, want %q", got, want(4))
		}
		other := poll(iggyclient.PollAt{PartitionID: 1 - mine, Offset: 0})
		if !other.NotOwned || len(other.Messages) != 0 {
			t.Fatalf("a poll of the other member's partition: NotOwned %v, %d messages; want NotOwned and none", other.NotOwned, len(other.Messages))
		}
		if _, as = assignmentAfterPoll(t, a, "at"); !as.Known || !slices.Equal(as.Partitions, []uint32{mine}) {
			t.Fatalf("assignment after NotOwned and a poll: %+v, want partition %d again", as, mine)
		}
	})
}

// OnStored hears the store of StoreFirst once, before Poll returns: nil for the member's own
// partition, the refusal for another member's.
func TestOnStoredHearsTheStoreOnce(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
		ctx := testContext(t)
		fillPartitions(t, dial(t, srv), "orders", 2, 4)
		a, b := dial(t, srv), dial(t, srv)
		for _, m := range []iggyclient.Client{a, b} {
			if err := m.EnsureConsumerGroup(ctx, "demo", "orders", "heard"); err != nil {
				t.Fatal(err)
			}
		}
		first, as := assignmentAfterPoll(t, a, "heard")
		mine := first.PartitionID
		for _, tt := range []struct {
			name      string
			partition uint32
			wantErr   bool
		}{{"own partition", mine, false}, {"another member's", 1 - mine, true}} {
			var heard []error
			batch, err := a.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "heard", Count: 1,
				StoreFirst: &iggyclient.StoredOffset{PartitionID: tt.partition, Offset: 0},
				OnStored:   func(err error) { heard = append(heard, err) },
				At:         &iggyclient.PollAt{PartitionID: as.Partitions[0], Offset: 1}})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if len(heard) != 1 || (heard[0] != nil) != tt.wantErr || (batch.StoreErr != nil) != tt.wantErr {
				t.Fatalf("%s: OnStored heard %v, StoreErr %v; want one outcome, an error %v", tt.name, heard, batch.StoreErr, tt.wantErr)
			}
		}
	})
}

// Over 0.8 a member list cannot show a partition being handed over, so Assignment says Settling
// while a joining member waits without partitions and the donor holds more than one; once the
// donor stored what it polled there, the partition moves and the group is settled again.
func TestAssignmentSettlingDuringAHandOver08(t *testing.T) {
	srv := startBroker(t, iggyclient.Protocol08, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
	ctx := testContext(t)
	fillPartitions(t, dial(t, srv), "orders", 2, 4)
	donor := dial(t, srv)
	if err := donor.EnsureConsumerGroup(ctx, "demo", "orders", "hand"); err != nil {
		t.Fatal(err)
	}
	polled := map[uint32]uint64{}
	for range 2 { // one batch from each partition, not stored: both are "polled beyond committed"
		b, _ := assignmentAfterPoll(t, donor, "hand")
		polled[b.PartitionID] = b.Messages[len(b.Messages)-1].Offset
	}
	if err := dial(t, srv).EnsureConsumerGroup(ctx, "demo", "orders", "hand"); err != nil {
		t.Fatal(err)
	}
	awaitAssignment(t, donor, "hand", "a hand-over under way", func(a iggyclient.Assignment) bool { return a.Settling && len(a.Partitions) == 2 })
	for p, off := range polled {
		if err := donor.StoreOffset(ctx, "demo", "orders", "hand", p, off); err != nil {
			t.Fatal(err)
		}
	}
	awaitAssignment(t, donor, "hand", "the hand-over done", func(a iggyclient.Assignment) bool { return !a.Settling && len(a.Partitions) == 1 })
}

// awaitAssignment reads the member's assignment until ok holds (it is read from the server
// again once the cached one is a second old).
func awaitAssignment(t testing.TB, c iggyclient.Client, group, what string, ok func(iggyclient.Assignment) bool) {
	t.Helper()
	ctx := testContext(t)
	var last iggyclient.Assignment
	for ctx.Err() == nil {
		a, err := c.Assignment(ctx, "demo", "orders", group)
		if err != nil {
			t.Fatal(err)
		}
		if ok(a) {
			return
		}
		last = a
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("waiting for %s: the assignment stayed %+v", what, last)
}
