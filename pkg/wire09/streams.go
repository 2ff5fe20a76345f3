package wire09

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// CreateStream is the CreateStream (202 -> op 128) request: a name and an
// options block (which must be empty today: streams have no option keys).
type CreateStream struct {
	Name    []byte
	Options []byte
}

// AppendCreateStream appends the request body.
func AppendCreateStream(dst []byte, c CreateStream) ([]byte, error) {
	if err := iggywire.CheckName("stream name", c.Name, 1); err != nil {
		return dst, err
	}
	return append(iggywire.AppendName8(dst, c.Name), c.Options...), nil
}

// DecodeCreateStream decodes the request body and validates its options block.
func DecodeCreateStream(body []byte) (CreateStream, error) {
	r := iggywire.NewReader("create stream", body)
	c := CreateStream{Name: r.Name8("stream name", 1)}
	c.Options = r.Rest()
	if r.Err() != nil {
		return CreateStream{}, r.Err()
	}
	if _, err := ValidateOptions(c.Options); err != nil {
		return CreateStream{}, err
	}
	return c, nil
}

// Stream is the stream element of GetStream / GetStreams / CreateStream replies (§10.2).
type Stream struct {
	ID            uint32
	CreatedAt     uint64
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          []byte
	Options       []byte
}

// AppendStream appends one stream element.
func AppendStream(dst []byte, s Stream) []byte {
	dst = iggywire.AppendU32(dst, s.ID)
	dst = iggywire.AppendU64(dst, s.CreatedAt)
	dst = iggywire.AppendU32(dst, s.TopicsCount)
	dst = iggywire.AppendU64(dst, s.SizeBytes)
	dst = iggywire.AppendU64(dst, s.MessagesCount)
	dst = iggywire.AppendName8(dst, s.Name)
	return AppendOptionsPrefixed(dst, s.Options)
}

// DecodeStream decodes one stream element and returns the bytes after it
// (the topic elements of GetStream, or the next stream of GetStreams).
func DecodeStream(b []byte) (Stream, []byte, error) {
	r := iggywire.NewReader("stream", b)
	s := Stream{ID: r.U32("id"), CreatedAt: r.U64("created at"), TopicsCount: r.U32("topics count"),
		SizeBytes: r.U64("size"), MessagesCount: r.U64("messages count")}
	s.Name = r.Name8("name", 1)
	s.Options = r.String32("options")
	if r.Err() != nil {
		return Stream{}, nil, r.Err()
	}
	return s, r.Rest(), nil
}
