package wire08

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// AppendCreateStream appends the CreateStream (202) payload: the u8-length name of 1..255 bytes
// (the server assigns the id).
func AppendCreateStream(dst, name []byte) ([]byte, error) {
	if err := iggywire.CheckName("stream name", name, 1); err != nil {
		return dst, err
	}
	return iggywire.AppendName8(dst, name), nil
}

// DecodeCreateStream decodes the name.
func DecodeCreateStream(payload []byte) ([]byte, error) {
	r := NewReader("create stream", payload)
	name := r.Name8("stream name", 1)
	return name, r.Err()
}

// DecodeStreamID decodes a payload that starts with a stream's identifier: GetStream (200),
// DeleteStream (203) and GetTopics (301).
func DecodeStreamID(payload []byte) (iggywire.Identifier, error) {
	r := NewReader("stream", payload)
	id := r.Identifier("stream id")
	return id, r.Err()
}

// Stream is the stream record (33 + n bytes).
type Stream struct {
	ID            uint32
	CreatedAt     uint64
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          []byte
}

// AppendStream appends the record.
func AppendStream(dst []byte, s Stream) []byte {
	dst = iggywire.AppendU32(dst, s.ID)
	dst = iggywire.AppendU64(dst, s.CreatedAt)
	dst = iggywire.AppendU32(dst, s.TopicsCount)
	dst = iggywire.AppendU64(dst, s.SizeBytes)
	dst = iggywire.AppendU64(dst, s.MessagesCount)
	return iggywire.AppendName8(dst, s.Name)
}

// DecodeStream decodes one record and returns the bytes after it.
func DecodeStream(b []byte) (Stream, []byte, error) {
	r := NewReader("stream", b)
	s := Stream{ID: r.U32("id"), CreatedAt: r.U64("created at"), TopicsCount: r.U32("topics count"),
		SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count"), Name: r.Name8("name", 0)}
	if r.Err() != nil {
		return Stream{}, nil, r.Err()
	}
	return s, r.Rest(), nil
}
