package wire08_test

import (
	"slices"
	"testing"

	binaryserialization "github.com/apache/iggy/foreign/go/binary_serialization"

	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// groupReply is a GetConsumerGroup reply: the record, then its members.
func groupReply(members ...wire08.GroupMember) []byte {
	b := wire08.AppendConsumerGroup(nil, wire08.ConsumerGroup{ID: 7, PartitionsCount: 4, MembersCount: uint32(len(members)), Name: []byte("g")})
	for _, m := range members {
		b = wire08.AppendConsumerGroupMember(b, m.ID, m.Partitions)
	}
	return b
}

// A GetConsumerGroup reply reads as the official SDK v0.8.0 reads it, into reused memory.
func TestDecodeGroupMembersReadsAsTheSDK(t *testing.T) {
	for _, want := range [][]wire08.GroupMember{
		nil,
		{{ID: 0, Partitions: []uint32{0, 1, 2, 3}}},
		{{ID: 3, Partitions: []uint32{2}}, {ID: 5, Partitions: nil}, {ID: 6, Partitions: []uint32{0, 1, 3}}},
	} {
		reply := groupReply(want...)
		var dst []wire08.GroupMember
		var parts []uint32
		for range 2 { // the second read reuses the first one's memory
			got, all, found, err := wire08.DecodeGroupMembers(reply, dst[:0], parts[:0])
			if err != nil || !found {
				t.Fatalf("%v: found %v, error %v", want, found, err)
			}
			sdk := binaryserialization.DeserializeConsumerGroup(reply)
			if len(got) != len(want) || len(sdk.Members) != len(want) {
				t.Fatalf("read %d members, the SDK %d, want %d", len(got), len(sdk.Members), len(want))
			}
			for i := range want {
				if got[i].ID != sdk.Members[i].ID || !slices.Equal(got[i].Partitions, sdk.Members[i].Partitions) && len(got[i].Partitions)+len(sdk.Members[i].Partitions) > 0 {
					t.Fatalf("member %d: read %+v, the SDK %+v", i, got[i], sdk.Members[i])
				}
			}
			dst, parts = got, all
		}
	}
	if _, _, found, err := wire08.DecodeGroupMembers(nil, nil, nil); found || err != nil {
		t.Fatalf("an empty reply: found %v, error %v; want a missing group", found, err)
	}
	whole := groupReply(wire08.GroupMember{ID: 1, Partitions: []uint32{0, 1}})
	for _, bad := range [][]byte{whole[:len(whole)-2], append(whole, 0), groupReply(wire08.GroupMember{ID: 1, Partitions: make([]uint32, 3)})[:len(whole)]} {
		if _, _, _, err := wire08.DecodeGroupMembers(bad, nil, nil); err == nil {
			t.Errorf("reply %x read without error", bad)
		}
	}
}
