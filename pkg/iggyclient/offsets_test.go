package iggyclient_test

import (
	"errors"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Admin reads a group's offsets without joining, writes and deletes them as a short-lived member,
// and names the refusals: an offset past the partition's end, a partition another member holds, a
// missing topic.
func TestAdminReadsWritesAndDeletesGroupOffsets(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 1}))
		testkit.FillTopic(t, srv, "demo", "orders", 5)
		ctx := testContext(t)
		admin, err := iggyclient.DialAdmin(ctx, clientOptions(srv))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()

		parts, err := admin.Partitions(ctx, "demo", "orders")
		if err != nil || len(parts) != 1 || parts[0].CurrentOffset != 4 || parts[0].Messages != 5 {
			t.Fatalf("Partitions = %+v, %v; want one partition at offset 4 with 5 messages", parts, err)
		}
		if _, err := admin.Partitions(ctx, "demo", "nope"); !errors.Is(err, iggyclient.ErrNotFound) {
			t.Errorf("Partitions of a missing topic: %v, want ErrNotFound", err)
		}
		// Classified once, as the client's other calls are: the sentinel's text is not repeated.
		if err := admin.SetGroupOffsets(ctx, "demo", "nope", "g", map[uint32]uint64{0: 1}); !errors.Is(err, iggyclient.ErrNotFound) ||
			strings.Count(err.Error(), "topic (or its stream) not found") != 1 {
			t.Errorf("SetGroupOffsets on a missing topic: %v, want ErrNotFound named once", err)
		}
		if ok, err := admin.StreamExists(ctx, "nope"); ok || err != nil {
			t.Errorf("StreamExists(nope) = %v, %v", ok, err)
		}
		if _, has, err := admin.GroupOffset(ctx, "demo", "orders", "g", 0); has || err != nil {
			t.Fatalf("offset of a group that does not exist: stored %v, %v", has, err)
		}
		if err := admin.SetGroupOffsets(ctx, "demo", "orders", "g", map[uint32]uint64{0: 3}); err != nil {
			t.Fatal(err)
		}
		if off, has, err := admin.GroupOffset(ctx, "demo", "orders", "g", 0); !has || off != 3 || err != nil {
			t.Fatalf("offset after the write = %d (stored %v), %v; want 3", off, has, err)
		}
		if err := admin.SetGroupOffsets(ctx, "demo", "orders", "g", map[uint32]uint64{0: 5}); !errors.Is(err, iggyclient.ErrOffsetOutOfRange) {
			t.Errorf("offset past the last message: %v, want ErrOffsetOutOfRange", err)
		}

		// A consumer of the group (a running connector) holds the partition.
		member := testkit.LoggedInClient(t, srv)
		sid, _ := iggcon.NewIdentifier("demo")
		tid, _ := iggcon.NewIdentifier("orders")
		gid, _ := iggcon.NewIdentifier("g")
		if err := member.JoinConsumerGroup(sid, tid, gid); err != nil {
			t.Fatal(err)
		}
		if err := admin.SetGroupOffsets(ctx, "demo", "orders", "g", map[uint32]uint64{0: 1}); !errors.Is(err, iggyclient.ErrPartitionOwned) {
			t.Errorf("write while another member holds the partition: %v, want ErrPartitionOwned", err)
		}
		if err := member.LeaveConsumerGroup(sid, tid, gid); err != nil {
			t.Fatal(err)
		}
		if err := admin.DeleteGroupOffsets(ctx, "demo", "orders", "g", []uint32{0}); err != nil {
			t.Fatal(err)
		}
		if _, has, err := admin.GroupOffset(ctx, "demo", "orders", "g", 0); has || err != nil {
			t.Fatalf("offset after the delete: stored %v, %v; want none", has, err)
		}
		if err := admin.DeleteGroupOffsets(ctx, "demo", "orders", "g", []uint32{0}); err != nil {
			t.Errorf("deleting again (nothing stored): %v", err)
		}
	})
}
