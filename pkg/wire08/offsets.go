package wire08

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// AppendConsumerOffsetRef appends the GetConsumerOffset (120) and DeleteConsumerOffset (122)
// payload: consumer, stream, topic, optional partition.
func AppendConsumerOffsetRef(dst []byte, o iggywire.ConsumerOffsetRef) ([]byte, error) {
	return iggywire.AppendConsumerOffsetRef(dst, o)
}

// AppendStoreConsumerOffset appends the StoreConsumerOffset (121) payload: the reference, then
// the u64 offset.
func AppendStoreConsumerOffset(dst []byte, o iggywire.ConsumerOffsetRef, offset uint64) ([]byte, error) {
	dst, err := iggywire.AppendConsumerOffsetRef(dst, o)
	if err != nil {
		return dst, err
	}
	return iggywire.AppendU64(dst, offset), nil
}

// OffsetRequest is a decoded consumer-offset request: Offset is StoreConsumerOffset's.
type OffsetRequest struct {
	iggywire.ConsumerOffsetRef
	Offset uint64
}

// DecodeConsumerOffsetRequest decodes any of the three offset requests; the offset is read for
// StoreConsumerOffset only.
func DecodeConsumerOffsetRequest(code Command, payload []byte) (OffsetRequest, error) {
	r := NewReader("consumer offset", payload)
	o := OffsetRequest{ConsumerOffsetRef: r.ConsumerOffsetRef()}
	if code == CmdStoreConsumerOffset {
		o.Offset = r.U64("offset")
	}
	return o, r.Err()
}

// ConsumerOffsetSize is the GetConsumerOffset reply's size; an empty reply means nothing is
// stored (or the request did not resolve).
const ConsumerOffsetSize = 20

// ConsumerOffset is the GetConsumerOffset reply.
type ConsumerOffset struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// AppendConsumerOffset appends the reply.
func AppendConsumerOffset(dst []byte, o ConsumerOffset) []byte {
	dst = iggywire.AppendU32(dst, o.PartitionID)
	dst = iggywire.AppendU64(dst, o.CurrentOffset)
	return iggywire.AppendU64(dst, o.StoredOffset)
}

// DecodeConsumerOffset decodes the reply; found is false for an empty one.
func DecodeConsumerOffset(payload []byte) (o ConsumerOffset, found bool, err error) {
	switch len(payload) {
	case 0:
		return ConsumerOffset{}, false, nil
	case ConsumerOffsetSize:
		return ConsumerOffset{PartitionID: binary.LittleEndian.Uint32(payload), CurrentOffset: binary.LittleEndian.Uint64(payload[4:]),
			StoredOffset: binary.LittleEndian.Uint64(payload[12:])}, true, nil
	}
	return ConsumerOffset{}, false, iggywire.Malformed("consumer offset reply is neither empty nor 20 bytes")
}
