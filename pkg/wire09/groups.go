package wire09

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// CreateConsumerGroup is the CreateConsumerGroup (602 -> op 139) request.
type CreateConsumerGroup struct {
	iggywire.TopicRef
	Name []byte
}

// AppendCreateConsumerGroup appends the request body.
func AppendCreateConsumerGroup(dst []byte, c CreateConsumerGroup) ([]byte, error) {
	if err := iggywire.CheckName("group name", c.Name, 1); err != nil {
		return dst, err
	}
	dst, err := iggywire.AppendTopicRef(dst, c.TopicRef)
	if err != nil {
		return dst, err
	}
	return iggywire.AppendName8(dst, c.Name), nil
}

// DecodeCreateConsumerGroup decodes the request body.
func DecodeCreateConsumerGroup(body []byte) (CreateConsumerGroup, error) {
	r := iggywire.NewReader("create consumer group", body)
	c := CreateConsumerGroup{TopicRef: iggywire.TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")}}
	c.Name = r.Name8("group name", 1)
	return c, r.End()
}

// U32List is a run of little-endian u32s inside a body (partition ids),
// read in place.
type U32List []byte

// Len is the number of values.
func (l U32List) Len() int { return len(l) / 4 }

// At is the i-th value.
func (l U32List) At(i int) uint32 { return binary.LittleEndian.Uint32(l[i*4:]) }

// AppendTo appends the values to dst.
func (l U32List) AppendTo(dst []uint32) []uint32 {
	for i := range l.Len() {
		dst = append(dst, l.At(i))
	}
	return dst
}

func appendU32s(dst []byte, values []uint32) []byte {
	dst = iggywire.AppendU32(dst, uint32(len(values)))
	for _, v := range values {
		dst = iggywire.AppendU32(dst, v)
	}
	return dst
}

// readPartitionList reads a u32 count, then that many u32 partition ids, in place.
func readPartitionList(r *iggywire.Reader) U32List {
	n := r.U32("partitions count")
	if r.Err() == nil && uint64(n)*4 > uint64(r.Remaining()) {
		r.Failf("%d partitions do not fit in %d bytes", n, r.Remaining())
		return nil
	}
	return U32List(r.Take(int(n)*4, "partitions"))
}

// ConsumerGroup is the group element (§10.6).
type ConsumerGroup struct {
	ID              uint32
	PartitionsCount uint32
	MembersCount    uint32
	Name            []byte
}

// AppendConsumerGroup appends one group element.
func AppendConsumerGroup(dst []byte, g ConsumerGroup) []byte {
	dst = iggywire.AppendU32(dst, g.ID)
	dst = iggywire.AppendU32(dst, g.PartitionsCount)
	dst = iggywire.AppendU32(dst, g.MembersCount)
	return iggywire.AppendName8(dst, g.Name)
}

// DecodeConsumerGroup decodes one group element and returns the bytes after
// it (member elements of GetConsumerGroup, or the next group of GetConsumerGroups).
func DecodeConsumerGroup(b []byte) (ConsumerGroup, []byte, error) {
	r := iggywire.NewReader("consumer group", b)
	g := ConsumerGroup{ID: r.U32("id"), PartitionsCount: r.U32("partitions count"), MembersCount: r.U32("members count")}
	g.Name = r.Name8("name", 1)
	if r.Err() != nil {
		return ConsumerGroup{}, nil, r.Err()
	}
	return g, r.Rest(), nil
}

// ConsumerGroupMember is a member element; ID is the member's slot in the group.
type ConsumerGroupMember struct {
	ID         uint32
	Partitions U32List
}

// AppendConsumerGroupMember appends one member element.
func AppendConsumerGroupMember(dst []byte, id uint32, partitions []uint32) []byte {
	return appendU32s(iggywire.AppendU32(dst, id), partitions)
}

// DecodeConsumerGroupMember decodes one member element and returns the bytes after it.
func DecodeConsumerGroupMember(b []byte) (ConsumerGroupMember, []byte, error) {
	r := iggywire.NewReader("consumer group member", b)
	m := ConsumerGroupMember{ID: r.U32("id")}
	m.Partitions = readPartitionList(&r)
	if r.Err() != nil {
		return ConsumerGroupMember{}, nil, r.Err()
	}
	return m, r.Rest(), nil
}

// GroupAssignment is the SyncConsumerGroup (606) reply; an empty body means
// the caller is not a member (iggywire.StatusConsumerGroupMemberNotFound).
type GroupAssignment struct {
	Generation uint64
	Partitions U32List
}

// AppendGroupAssignment appends the Sync reply body.
func AppendGroupAssignment(dst []byte, generation uint64, partitions []uint32) []byte {
	return appendU32s(iggywire.AppendU64(dst, generation), partitions)
}

// DecodeGroupAssignment decodes the Sync reply; an empty body is
// iggywire.StatusConsumerGroupMemberNotFound.
func DecodeGroupAssignment(body []byte) (GroupAssignment, error) {
	if len(body) == 0 {
		return GroupAssignment{}, iggywire.Errorf(iggywire.StatusConsumerGroupMemberNotFound, "sync consumer group: not a member")
	}
	r := iggywire.NewReader("group assignment", body)
	a := GroupAssignment{Generation: r.U64("generation")}
	a.Partitions = readPartitionList(&r)
	return a, r.End()
}
