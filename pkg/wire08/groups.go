package wire08

import (
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// AppendCreateConsumerGroup appends the CreateConsumerGroup (602) payload: the topic, then the
// u8-length name (the server assigns the id).
func AppendCreateConsumerGroup(dst []byte, t iggywire.TopicRef, name []byte) ([]byte, error) {
	if err := iggywire.CheckName("consumer group name", name, 1); err != nil {
		return dst, err
	}
	dst, err := iggywire.AppendTopicRef(dst, t)
	if err != nil {
		return dst, err
	}
	return iggywire.AppendName8(dst, name), nil
}

// GroupRequest is a decoded consumer-group request (600-605): every one names the topic;
// Create adds the new group's name, GetConsumerGroups nothing, the others the group.
type GroupRequest struct {
	iggywire.TopicRef
	GroupID iggywire.Identifier
	Name    []byte
}

// DecodeGroupRequest decodes the payload of the consumer-group command code.
func DecodeGroupRequest(code Command, payload []byte) (GroupRequest, error) {
	r := NewReader("consumer group", payload)
	g := GroupRequest{TopicRef: iggywire.TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")}}
	switch code {
	case CmdGetConsumerGroups:
	case CmdCreateConsumerGroup:
		g.Name = r.Name8("group name", 1)
	default:
		g.GroupID = r.Identifier("group id")
	}
	return g, r.Err()
}

// ConsumerGroup is the group record: [u32 id][u32 partitions][u32 members][u8 len][name].
type ConsumerGroup struct {
	ID, PartitionsCount, MembersCount uint32
	Name                              []byte
}

// AppendConsumerGroup appends the record.
func AppendConsumerGroup(dst []byte, g ConsumerGroup) []byte {
	dst = iggywire.AppendU32(dst, g.ID)
	dst = iggywire.AppendU32(dst, g.PartitionsCount)
	dst = iggywire.AppendU32(dst, g.MembersCount)
	return iggywire.AppendName8(dst, g.Name)
}

// AppendConsumerGroupMember appends one member after a GetConsumerGroup reply's record:
// [u32 id][u32 count][count × u32 partition].
func AppendConsumerGroupMember(dst []byte, id uint32, partitions []uint32) []byte {
	dst = iggywire.AppendU32(dst, id)
	dst = iggywire.AppendU32(dst, uint32(len(partitions)))
	for _, p := range partitions {
		dst = iggywire.AppendU32(dst, p)
	}
	return dst
}

// GroupMember is one member of a GetConsumerGroup (600) reply. ID is the member's number in the
// group, not a client id: a connection cannot tell which member it is from this reply alone.
type GroupMember struct {
	ID         uint32
	Partitions []uint32
}

// DecodeGroupMembers reads a GetConsumerGroup reply: the group record, then its members, each
// [u32 id][u32 count][count × u32 partition]. Their partition lists are appended to parts (one
// array for all, returned for reuse, so a steady caller allocates nothing) and the members to
// dst. An empty reply is a missing group: found is false.
func DecodeGroupMembers(reply []byte, dst []GroupMember, parts []uint32) (members []GroupMember, allParts []uint32, found bool, err error) {
	if len(reply) == 0 {
		return dst, parts, false, nil
	}
	r := NewReader("consumer group", reply)
	r.U32("id")
	r.U32("partitions count")
	count := r.U32("members count")
	r.Name8("name", 1)
	for i := uint32(0); i < count && r.Err() == nil; i++ {
		m := GroupMember{ID: r.U32("member id")}
		n := r.U32("member partitions count")
		if uint64(n)*4 > uint64(len(reply)) {
			return dst, parts, false, fmt.Errorf("consumer group member %d: %d partitions do not fit the reply", m.ID, n)
		}
		from := len(parts)
		for range n {
			parts = append(parts, r.U32("partition id"))
		}
		m.Partitions = parts[from:len(parts):len(parts)]
		dst = append(dst, m)
	}
	if err := r.End(); err != nil {
		return dst, parts, false, err
	}
	return dst, parts, true, nil
}
