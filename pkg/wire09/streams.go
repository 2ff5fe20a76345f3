package wire09

// CreateStream is the CreateStream (202 -> op 128) request: a name and an
// options block (which must be empty today: streams have no option keys).
type CreateStream struct {
	Name    []byte
	Options []byte
}

// AppendCreateStream appends the request body.
func AppendCreateStream(dst []byte, c CreateStream) ([]byte, error) {
	if err := checkName("stream name", c.Name, 1); err != nil {
		return dst, err
	}
	return append(appendName8(dst, c.Name), c.Options...), nil
}

// DecodeCreateStream decodes the request body and validates its options block.
func DecodeCreateStream(body []byte) (CreateStream, error) {
	r := newReader("create stream", body)
	c := CreateStream{Name: r.name8("stream name", 1)}
	c.Options = r.rest()
	if r.err != nil {
		return CreateStream{}, r.err
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
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, s.TopicsCount)
	dst = appendU64(dst, s.SizeBytes)
	dst = appendU64(dst, s.MessagesCount)
	dst = appendName8(dst, s.Name)
	return AppendOptionsPrefixed(dst, s.Options)
}

// DecodeStream decodes one stream element and returns the bytes after it
// (the topic elements of GetStream, or the next stream of GetStreams).
func DecodeStream(b []byte) (Stream, []byte, error) {
	r := newReader("stream", b)
	s := Stream{ID: r.u32("id"), CreatedAt: r.u64("created at"), TopicsCount: r.u32("topics count"),
		SizeBytes: r.u64("size"), MessagesCount: r.u64("messages count")}
	s.Name = r.name8("name", 1)
	s.Options = r.string32("options")
	if r.err != nil {
		return Stream{}, nil, r.err
	}
	return s, r.buf[r.pos:], nil
}
