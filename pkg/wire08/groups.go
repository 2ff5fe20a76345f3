package wire08

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

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
