package wire09

// ConsumerOffsetRef is what every offset request names (§10.4). It is the
// whole GetConsumerOffset (120) request.
type ConsumerOffsetRef struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptionalPartition
}

func appendOffsetRef(dst []byte, o ConsumerOffsetRef) ([]byte, error) {
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

func (r *reader) offsetRef() ConsumerOffsetRef {
	return ConsumerOffsetRef{Consumer: r.consumer(), StreamID: r.identifier("stream id"),
		TopicID: r.identifier("topic id"), Partition: r.optionalPartition()}
}

// AppendGetConsumerOffset appends the GetConsumerOffset request body.
func AppendGetConsumerOffset(dst []byte, o ConsumerOffsetRef) ([]byte, error) {
	return appendOffsetRef(dst, o)
}

// DecodeGetConsumerOffset decodes the GetConsumerOffset request body.
func DecodeGetConsumerOffset(body []byte) (ConsumerOffsetRef, error) {
	r := newReader("get consumer offset", body)
	o := r.offsetRef()
	return o, r.end()
}

// StoreConsumerOffset is the StoreConsumerOffset (121 -> op 161) request.
type StoreConsumerOffset struct {
	ConsumerOffsetRef
	Offset uint64
	Ack    uint8
}

// AppendStoreConsumerOffset appends the request body.
func AppendStoreConsumerOffset(dst []byte, s StoreConsumerOffset) ([]byte, error) {
	dst, err := appendOffsetRef(dst, s.ConsumerOffsetRef)
	if err != nil {
		return dst, err
	}
	return append(appendU64(dst, s.Offset), s.Ack), nil
}

// DecodeStoreConsumerOffset decodes the request body.
func DecodeStoreConsumerOffset(body []byte) (StoreConsumerOffset, error) {
	r := newReader("store consumer offset", body)
	s := StoreConsumerOffset{ConsumerOffsetRef: r.offsetRef(), Offset: r.u64("offset")}
	s.Ack = r.ack()
	return s, r.end()
}

// DeleteConsumerOffset is the DeleteConsumerOffset (122 -> op 162) request.
type DeleteConsumerOffset struct {
	ConsumerOffsetRef
	Ack uint8
}

// AppendDeleteConsumerOffset appends the request body.
func AppendDeleteConsumerOffset(dst []byte, d DeleteConsumerOffset) ([]byte, error) {
	dst, err := appendOffsetRef(dst, d.ConsumerOffsetRef)
	if err != nil {
		return dst, err
	}
	return append(dst, d.Ack), nil
}

// DecodeDeleteConsumerOffset decodes the request body.
func DecodeDeleteConsumerOffset(body []byte) (DeleteConsumerOffset, error) {
	r := newReader("delete consumer offset", body)
	d := DeleteConsumerOffset{ConsumerOffsetRef: r.offsetRef()}
	d.Ack = r.ack()
	return d, r.end()
}

// ConsumerOffset is the 20-byte GetConsumerOffset reply; an empty body means
// nothing is stored.
type ConsumerOffset struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// AppendConsumerOffset appends the reply body.
func AppendConsumerOffset(dst []byte, o ConsumerOffset) []byte {
	dst = appendU32(dst, o.PartitionID)
	dst = appendU64(dst, o.CurrentOffset)
	return appendU64(dst, o.StoredOffset)
}

// DecodeConsumerOffset decodes the reply body; found is false for an empty body.
func DecodeConsumerOffset(body []byte) (o ConsumerOffset, found bool, err error) {
	if len(body) == 0 {
		return ConsumerOffset{}, false, nil
	}
	r := newReader("consumer offset", body)
	o = ConsumerOffset{PartitionID: r.u32("partition id"), CurrentOffset: r.u64("current offset"), StoredOffset: r.u64("stored offset")}
	if err := r.end(); err != nil {
		return ConsumerOffset{}, false, err
	}
	return o, true, nil
}
