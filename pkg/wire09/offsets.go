package wire09

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// AppendGetConsumerOffset appends the GetConsumerOffset request body.
func AppendGetConsumerOffset(dst []byte, o iggywire.ConsumerOffsetRef) ([]byte, error) {
	return iggywire.AppendConsumerOffsetRef(dst, o)
}

// DecodeGetConsumerOffset decodes the GetConsumerOffset request body.
func DecodeGetConsumerOffset(body []byte) (iggywire.ConsumerOffsetRef, error) {
	r := iggywire.NewReader("get consumer offset", body)
	o := r.ConsumerOffsetRef()
	return o, r.End()
}

// StoreConsumerOffset is the StoreConsumerOffset (121 -> op 161) request.
type StoreConsumerOffset struct {
	iggywire.ConsumerOffsetRef
	Offset uint64
	Ack    uint8
}

// AppendStoreConsumerOffset appends the request body.
func AppendStoreConsumerOffset(dst []byte, s StoreConsumerOffset) ([]byte, error) {
	dst, err := iggywire.AppendConsumerOffsetRef(dst, s.ConsumerOffsetRef)
	if err != nil {
		return dst, err
	}
	return append(iggywire.AppendU64(dst, s.Offset), s.Ack), nil
}

// DecodeStoreConsumerOffset decodes the request body.
func DecodeStoreConsumerOffset(body []byte) (StoreConsumerOffset, error) {
	r := iggywire.NewReader("store consumer offset", body)
	s := StoreConsumerOffset{ConsumerOffsetRef: r.ConsumerOffsetRef(), Offset: r.U64("offset")}
	s.Ack = readAck(&r)
	return s, r.End()
}

// DeleteConsumerOffset is the DeleteConsumerOffset (122 -> op 162) request.
type DeleteConsumerOffset struct {
	iggywire.ConsumerOffsetRef
	Ack uint8
}

// AppendDeleteConsumerOffset appends the request body.
func AppendDeleteConsumerOffset(dst []byte, d DeleteConsumerOffset) ([]byte, error) {
	dst, err := iggywire.AppendConsumerOffsetRef(dst, d.ConsumerOffsetRef)
	if err != nil {
		return dst, err
	}
	return append(dst, d.Ack), nil
}

// DecodeDeleteConsumerOffset decodes the request body.
func DecodeDeleteConsumerOffset(body []byte) (DeleteConsumerOffset, error) {
	r := iggywire.NewReader("delete consumer offset", body)
	d := DeleteConsumerOffset{ConsumerOffsetRef: r.ConsumerOffsetRef()}
	d.Ack = readAck(&r)
	return d, r.End()
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
	dst = iggywire.AppendU32(dst, o.PartitionID)
	dst = iggywire.AppendU64(dst, o.CurrentOffset)
	return iggywire.AppendU64(dst, o.StoredOffset)
}

// DecodeConsumerOffset decodes the reply body; found is false for an empty body.
func DecodeConsumerOffset(body []byte) (o ConsumerOffset, found bool, err error) {
	if len(body) == 0 {
		return ConsumerOffset{}, false, nil
	}
	r := iggywire.NewReader("consumer offset", body)
	o = ConsumerOffset{PartitionID: r.U32("partition id"), CurrentOffset: r.U64("current offset"), StoredOffset: r.U64("stored offset")}
	if err := r.End(); err != nil {
		return ConsumerOffset{}, false, err
	}
	return o, true, nil
}
