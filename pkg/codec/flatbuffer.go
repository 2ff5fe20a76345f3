package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// ErrInvalidFlatBuffer: bytes that cannot be a FlatBuffer (too short, or a
// root offset pointing outside the buffer).
var ErrInvalidFlatBuffer = errors.New("invalid FlatBuffer payload")

// DefaultFlatBufferSizeHint is the builder's initial capacity, as upstream's
// table_size_hint.
const DefaultFlatBufferSizeHint = 1024

// FlatBufferDecoder is the flat_buffer stream decoder (docs/pipeline.md §3.2).
// Without a .fbs schema it does not read the content: it checks the buffer
// and describes it as JSON {"buffer_size", "has_root_table",
// ["root_table_type",] "raw_data_base64"}. The stream decoder uses the zero
// RootTableName and Verify=true.
type FlatBufferDecoder struct {
	// Verify rejects buffers shorter than 4 bytes or whose root offset
	// points outside the buffer (upstream checks the length only).
	Verify bool
	// RootTableName, when set, is reported as "root_table_type".
	RootTableName string
}

// Schema is postcard.SchemaFlatBuffer.
func (FlatBufferDecoder) Schema() postcard.Schema { return postcard.SchemaFlatBuffer }

// Decode describes b; see FlatBufferDecoder.
func (d FlatBufferDecoder) Decode(b []byte) (Payload, error) {
	if len(b) == 0 {
		return Payload{}, fmt.Errorf("%w: empty payload", ErrInvalidFlatBuffer)
	}
	if d.Verify {
		if err := VerifyFlatBuffer(b); err != nil {
			return Payload{}, err
		}
	}
	obj := NewOrderedMap(4)
	obj.Set("buffer_size", uint64(len(b)))
	obj.Set("has_root_table", true)
	if d.RootTableName != "" {
		obj.Set("root_table_type", d.RootTableName)
	}
	obj.Set("raw_data_base64", base64Std(b))
	return JSONPayload(obj), nil
}

// VerifyFlatBuffer checks what can be checked without a schema: a 4-byte
// root offset that points at 4 bytes inside the buffer.
func VerifyFlatBuffer(b []byte) error {
	if len(b) < flatbuffers.SizeUOffsetT {
		return fmt.Errorf("%w: %d bytes, a FlatBuffer has at least 4", ErrInvalidFlatBuffer, len(b))
	}
	root := uint64(binary.LittleEndian.Uint32(b))
	if root < flatbuffers.SizeUOffsetT || root+flatbuffers.SizeUOffsetT > uint64(len(b)) {
		return fmt.Errorf("%w: root offset %d outside the %d-byte buffer", ErrInvalidFlatBuffer, root, len(b))
	}
	return nil
}

// FlatBufferEncoder is the flat_buffer stream encoder (docs/pipeline.md §3.3),
// writing "minimal" buffers (no size prefix, no file identifier):
//
//	JSON object        root vector of strings: key, value, key, value, ...
//	                   (string values as they are, others as compact JSON)
//	JSON array/scalar  root string of compact JSON
//	Text, Proto        as JSON when the text parses as JSON, else a root string
//	Raw, Avro          root byte vector
//	FlatBuffer         passed through
//
// Upstream writes the object's key and value offsets as plain u32 numbers
// relative to the end of the buffer, which no reader can follow; here they
// are real offsets, so any FlatBuffers library reads the vector of strings.
type FlatBufferEncoder struct {
	// SizeHint is the builder's initial capacity (0: 1024).
	SizeHint int
}

// Schema is postcard.SchemaFlatBuffer.
func (FlatBufferEncoder) Schema() postcard.Schema { return postcard.SchemaFlatBuffer }

// Encode builds the buffer; see FlatBufferEncoder.
func (e FlatBufferEncoder) Encode(p Payload) ([]byte, error) {
	switch p.Kind {
	case postcard.SchemaFlatBuffer:
		return p.Bytes, nil
	case postcard.SchemaJSON:
		return e.encodeJSON(p.JSON)
	case postcard.SchemaText, postcard.SchemaProto:
		if v, err := ParseJSON([]byte(p.Text)); err == nil {
			return e.encodeJSON(v)
		}
		b := e.builder()
		b.Finish(b.CreateString(p.Text))
		return finished(b), nil
	case postcard.SchemaRaw, postcard.SchemaAvro:
		b := e.builder()
		b.Finish(b.CreateByteVector(p.Bytes))
		return finished(b), nil
	}
	return nil, fmt.Errorf("%w: payload kind %s", ErrInvalidPayloadType, p.Kind)
}

// builder takes a builder from the pool, or makes one of SizeHint bytes.
func (e FlatBufferEncoder) builder() *flatbuffers.Builder {
	if b, ok := flatBuilders.Get().(*flatbuffers.Builder); ok {
		return b
	}
	hint := e.SizeHint
	if hint <= 0 {
		hint = DefaultFlatBufferSizeHint
	}
	return flatbuffers.NewBuilder(hint)
}

// finished copies the buffer out of b (exactly sized, so a message does not
// pin the builder's capacity) and returns b to the pool.
func finished(b *flatbuffers.Builder) []byte {
	out := append([]byte(nil), b.FinishedBytes()...)
	b.Reset()
	flatBuilders.Put(b)
	return out
}

// flatBuilders holds reset builders for reuse.
var flatBuilders sync.Pool

// release returns a builder whose buffer was abandoned after an error.
func release(b *flatbuffers.Builder) {
	b.Reset()
	flatBuilders.Put(b)
}

func (e FlatBufferEncoder) encodeJSON(v any) ([]byte, error) {
	b := e.builder()
	obj, isObject := v.(*OrderedMap)
	if !isObject {
		text, err := MarshalJSON(v)
		if err != nil {
			release(b)
			return nil, err
		}
		b.Finish(b.CreateByteString(text))
		return finished(b), nil
	}
	// Strings must be written before the vector that points at them.
	offsets := make([]flatbuffers.UOffsetT, 0, 2*obj.Len())
	var scratch []byte
	for _, m := range obj.Members() {
		offsets = append(offsets, b.CreateString(m.Key))
		if s, ok := m.Value.(string); ok {
			offsets = append(offsets, b.CreateString(s))
			continue
		}
		var err error
		if scratch, err = AppendJSON(scratch[:0], m.Value); err != nil {
			release(b)
			return nil, err
		}
		offsets = append(offsets, b.CreateByteString(scratch))
	}
	b.StartVector(flatbuffers.SizeUOffsetT, len(offsets), flatbuffers.SizeUOffsetT)
	for i := len(offsets) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offsets[i])
	}
	b.Finish(b.EndVector(len(offsets)))
	return finished(b), nil
}
