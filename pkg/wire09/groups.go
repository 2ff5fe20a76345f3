package wire09

import "encoding/binary"

// CreateConsumerGroup is the CreateConsumerGroup (602 -> op 139) request.
type CreateConsumerGroup struct {
	TopicRef
	Name []byte
}

// AppendCreateConsumerGroup appends the request body.
func AppendCreateConsumerGroup(dst []byte, c CreateConsumerGroup) ([]byte, error) {
	if err := checkName("group name", c.Name, 1); err != nil {
		return dst, err
	}
	dst, err := AppendTopicRef(dst, c.TopicRef)
	if err != nil {
		return dst, err
	}
	return appendName8(dst, c.Name), nil
}

// DecodeCreateConsumerGroup decodes the request body.
func DecodeCreateConsumerGroup(body []byte) (CreateConsumerGroup, error) {
	r := newReader("create consumer group", body)
	c := CreateConsumerGroup{TopicRef: TopicRef{StreamID: r.identifier("stream id"), TopicID: r.identifier("topic id")}}
	c.Name = r.name8("group name", 1)
	return c, r.end()
}

// GroupRef names a consumer group: the request of Get (600), Delete (603),
// Join (604), Leave (605) and Sync (606).
type GroupRef struct {
	TopicRef
	GroupID Identifier
}

// AppendGroupRef appends stream id, topic id, group id.
func AppendGroupRef(dst []byte, g GroupRef) ([]byte, error) {
	dst, err := AppendTopicRef(dst, g.TopicRef)
	if err != nil {
		return dst, err
	}
	return AppendIdentifier(dst, g.GroupID)
}

// DecodeGroupRef decodes a body that is exactly a group reference.
func DecodeGroupRef(body []byte) (GroupRef, error) {
	r := newReader("consumer group reference", body)
	g := GroupRef{TopicRef: TopicRef{StreamID: r.identifier("stream id"), TopicID: r.identifier("topic id")},
		GroupID: r.identifier("group id")}
	return g, r.end()
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
	dst = appendU32(dst, uint32(len(values)))
	for _, v := range values {
		dst = appendU32(dst, v)
	}
	return dst
}

func (r *reader) u32List(field string) U32List {
	n := r.u32(field + " count")
	if r.err == nil && uint64(n)*4 > uint64(r.remaining()) {
		r.failf("%d %s do not fit in %d bytes", n, field, r.remaining())
		return nil
	}
	return U32List(r.take(int(n)*4, field))
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
	dst = appendU32(dst, g.ID)
	dst = appendU32(dst, g.PartitionsCount)
	dst = appendU32(dst, g.MembersCount)
	return appendName8(dst, g.Name)
}

// DecodeConsumerGroup decodes one group element and returns the bytes after
// it (member elements of GetConsumerGroup, or the next group of GetConsumerGroups).
func DecodeConsumerGroup(b []byte) (ConsumerGroup, []byte, error) {
	r := newReader("consumer group", b)
	g := ConsumerGroup{ID: r.u32("id"), PartitionsCount: r.u32("partitions count"), MembersCount: r.u32("members count")}
	g.Name = r.name8("name", 1)
	if r.err != nil {
		return ConsumerGroup{}, nil, r.err
	}
	return g, r.buf[r.pos:], nil
}

// ConsumerGroupMember is a member element; ID is the member's slot in the group.
type ConsumerGroupMember struct {
	ID         uint32
	Partitions U32List
}

// AppendConsumerGroupMember appends one member element.
func AppendConsumerGroupMember(dst []byte, id uint32, partitions []uint32) []byte {
	return appendU32s(appendU32(dst, id), partitions)
}

// DecodeConsumerGroupMember decodes one member element and returns the bytes after it.
func DecodeConsumerGroupMember(b []byte) (ConsumerGroupMember, []byte, error) {
	r := newReader("consumer group member", b)
	m := ConsumerGroupMember{ID: r.u32("id")}
	m.Partitions = r.u32List("partitions")
	if r.err != nil {
		return ConsumerGroupMember{}, nil, r.err
	}
	return m, r.buf[r.pos:], nil
}

// GroupAssignment is the SyncConsumerGroup (606) reply; an empty body means
// the caller is not a member (StatusConsumerGroupMemberNotFound).
type GroupAssignment struct {
	Generation uint64
	Partitions U32List
}

// AppendGroupAssignment appends the Sync reply body.
func AppendGroupAssignment(dst []byte, generation uint64, partitions []uint32) []byte {
	return appendU32s(appendU64(dst, generation), partitions)
}

// DecodeGroupAssignment decodes the Sync reply; an empty body is
// StatusConsumerGroupMemberNotFound.
func DecodeGroupAssignment(body []byte) (GroupAssignment, error) {
	if len(body) == 0 {
		return GroupAssignment{}, errorf(StatusConsumerGroupMemberNotFound, "sync consumer group: not a member")
	}
	r := newReader("group assignment", body)
	a := GroupAssignment{Generation: r.u64("generation")}
	a.Partitions = r.u32List("partitions")
	return a, r.end()
}
