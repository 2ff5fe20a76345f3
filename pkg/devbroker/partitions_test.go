package devbroker_test

import (
	"errors"
	"slices"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Partitions are added at the end and removed from the end, over both protocols, as the servers
// do it: the removed ones take their messages and offsets with them, every consumer group is
// dealt the remaining partitions anew, and a partition added again starts empty.

// With the official SDK v0.8.0's CreatePartitions and DeletePartitions.
func TestPartitionsAddedAndDeletedOver08(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 3)
	for p := range uint32(3) {
		if err := cli.SendMessages(stream, topic, iggcon.PartitionId(p), headerMessages(t, 0, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.CreateConsumerGroup(stream, topic, "g"); err != nil {
		t.Fatal(err)
	}
	first, second := testkit.LoggedInClient(t, srv), testkit.LoggedInClient(t, srv)
	for _, c := range []iggcon.Client{first, second} {
		if err := c.JoinConsumerGroup(stream, topic, id(t, "g")); err != nil {
			t.Fatal(err)
		}
	}

	if err := cli.DeletePartitions(stream, topic, 1); err != nil {
		t.Fatalf("DeletePartitions(1): %v", err)
	}
	details, err := cli.GetTopic(stream, topic)
	if err != nil || len(details.Partitions) != 2 || details.PartitionsCount != 2 {
		t.Fatalf("GetTopic after deleting one = %+v, %v; want partitions 0 and 1", details, err)
	}
	if counts := testkit.PartitionCounts(t, srv, "demo", "events"); counts[2] != 0 || counts[0] != 2 || counts[1] != 2 {
		t.Fatalf("messages by partition %v: the last partition's are gone, the others kept", counts)
	}
	group, err := cli.GetConsumerGroup(stream, topic, id(t, "g"))
	if err != nil || group.PartitionsCount != 2 || len(group.Members) != 2 {
		t.Fatalf("GetConsumerGroup = %+v, %v; want 2 partitions over 2 members", group, err)
	}
	var dealt []uint32
	for _, m := range group.Members {
		dealt = append(dealt, m.Partitions...)
	}
	if slices.Sort(dealt); !slices.Equal(dealt, []uint32{0, 1}) {
		t.Fatalf("members' partitions %v, want 0 and 1 dealt anew", dealt)
	}

	if err := cli.CreatePartitions(stream, topic, 1); err != nil {
		t.Fatalf("CreatePartitions(1): %v", err)
	}
	details, err = cli.GetTopic(stream, topic)
	if err != nil || len(details.Partitions) != 3 || details.Partitions[2].Id != 2 || details.Partitions[2].MessagesCount != 0 {
		t.Fatalf("GetTopic after adding one = %+v, %v; want partition 2 back, empty", details, err)
	}

	for _, c := range []struct {
		name  string
		count uint32
		topic iggcon.Identifier
		want  error
	}{
		{"none", 0, topic, ierror.ErrTooManyPartitions},
		{"more than the topic has", 4, topic, ierror.ErrError}, // 2019, which the SDK does not know
		{"a missing topic", 1, id(t, "nope"), ierror.ErrTopicIdNotFound},
	} {
		if err := cli.DeletePartitions(stream, c.topic, c.count); !errors.Is(err, c.want) {
			t.Errorf("DeletePartitions of %s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if counts := testkit.PartitionCounts(t, srv, "demo", "events"); counts[0] != 2 || counts[1] != 2 {
		t.Fatalf("messages by partition %v after refused deletes, want them kept", counts)
	}
}

// Over 0.9, DeletePartitions (op 137) is a metadata operation: a count of 0 is refused before
// commit, what does not resolve or deletes more than the topic holds is a committed rejection,
// and Sync shows a member the partitions it keeps.
func TestPartitionsAddedAndDeletedOver09(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 3}))
	c := loggedIn09(t, srv)
	ref := iggywire.TopicRef{StreamID: iggywire.NamedID("demo"), TopicID: iggywire.NamedID("events")}
	change := func(op wire09.Operation, topic iggywire.TopicRef, count uint32) testkit.Reply09 {
		return c.Do(op, 0, must[[]byte](t)(wire09.AppendCreatePartitions(nil, wire09.CreatePartitions{TopicRef: topic, PartitionsCount: count})))
	}
	groupRef := must[[]byte](t)(iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: ref, GroupID: iggywire.NamedID("g")}))
	if r := c.Do(wire09.OpCreateConsumerGroup, 0, must[[]byte](t)(wire09.AppendCreateConsumerGroup(nil,
		wire09.CreateConsumerGroup{TopicRef: ref, Name: []byte("g")}))); r.Rejection(t) != 0 {
		t.Fatalf("create group: %v", r.Rejection(t))
	}
	if r := c.Do(wire09.OpJoinConsumerGroup, 0, groupRef); r.Rejection(t) != 0 {
		t.Fatalf("join: %v", r.Rejection(t))
	}

	if r := change(wire09.OpDeletePartitions, ref, 2); r.Rejection(t) != 0 {
		t.Fatalf("delete 2 partitions: %v", r.Rejection(t))
	}
	sync := c.Do(wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup, groupRef)
	a, err := wire09.DecodeGroupAssignment(sync.Payload(t))
	if err != nil || a.Partitions.Len() != 1 || a.Partitions.At(0) != 0 {
		t.Fatalf("Sync after deleting 2 of 3 = %+v, %v; want partition 0 alone", a, err)
	}
	if r := change(wire09.OpCreatePartitions, ref, 1); r.Rejection(t) != 0 {
		t.Fatalf("add a partition back: %v", r.Rejection(t))
	}
	sync = c.Do(wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup, groupRef)
	if b, err := wire09.DecodeGroupAssignment(sync.Payload(t)); err != nil || b.Partitions.Len() != 2 || b.Generation <= a.Generation {
		t.Fatalf("Sync after adding one = %+v, %v; want 2 partitions in a later generation than %d", b, err, a.Generation)
	}

	if r := change(wire09.OpDeletePartitions, ref, 0); r.Status() != iggywire.StatusTooManyPartitions {
		t.Fatalf("delete 0 partitions: status %v, want 2015 before commit", r.Status())
	}
	for _, tt := range []struct {
		name  string
		topic iggywire.TopicRef
		count uint32
		want  iggywire.Status
	}{
		{"more than the topic has", ref, 3, iggywire.StatusInvalidPartitionsCount},
		{"a missing topic", iggywire.TopicRef{StreamID: ref.StreamID, TopicID: iggywire.NamedID("nope")}, 1, iggywire.StatusTopicIDNotFound},
		{"a missing stream", iggywire.TopicRef{StreamID: iggywire.NamedID("nope"), TopicID: ref.TopicID}, 1, iggywire.StatusStreamIDNotFound},
	} {
		if r := change(wire09.OpDeletePartitions, tt.topic, tt.count); r.Rejection(t) != tt.want {
			t.Errorf("delete partitions of %s: rejection %v, want %v", tt.name, r.Rejection(t), tt.want)
		}
	}
}
