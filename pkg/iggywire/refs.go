package iggywire

// TopicRef names a topic: a topic: the request of GetTopic, DeleteTopic and
// GetConsumerGroups in both protocols.
type TopicRef struct {
	StreamID, TopicID Identifier
}

// AppendTopicRef appends stream id then topic id.
func AppendTopicRef(dst []byte, t TopicRef) ([]byte, error) {
	dst, err := AppendIdentifier(dst, t.StreamID)
	if err != nil {
		return dst, err
	}
	return AppendIdentifier(dst, t.TopicID)
}

// DecodeTopicRef decodes a body that is exactly stream id then topic id.
func DecodeTopicRef(body []byte) (TopicRef, error) {
	r := NewReader("topic reference", body)
	t := TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")}
	return t, r.End()
}

// GroupRef names a consumer group: the request of Get, Delete, Join and Leave
// (and 0.9's Sync).
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
	r := NewReader("consumer group reference", body)
	g := GroupRef{TopicRef: TopicRef{StreamID: r.Identifier("stream id"), TopicID: r.Identifier("topic id")},
		GroupID: r.Identifier("group id")}
	return g, r.End()
}

// ConsumerOffsetRef is what every offset request names.
type ConsumerOffsetRef struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptionalPartition
}

// AppendConsumerOffsetRef appends consumer, stream id, topic id and the optional partition.
func AppendConsumerOffsetRef(dst []byte, o ConsumerOffsetRef) ([]byte, error) {
	dst, err := AppendConsumer(dst, o.Consumer)
	if err != nil {
		return dst, err
	}
	if dst, err = AppendIdentifier(dst, o.StreamID); err != nil {
		return dst, err
	}
	if dst, err = AppendIdentifier(dst, o.TopicID); err != nil {
		return dst, err
	}
	return AppendOptionalPartition(dst, o.Partition), nil
}

// ConsumerOffsetRef reads consumer, stream id, topic id and the optional partition.
func (r *Reader) ConsumerOffsetRef() ConsumerOffsetRef {
	return ConsumerOffsetRef{Consumer: r.Consumer(), StreamID: r.Identifier("stream id"),
		TopicID: r.Identifier("topic id"), Partition: r.OptionalPartition()}
}
