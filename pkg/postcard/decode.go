package postcard

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"unicode/utf8"
)

// The decoders read one top-level value from the start of b and ignore any
// trailing bytes, as postcard's from_bytes does. They never panic, and every
// allocation is bounded by len(b): a sequence count is rejected before any
// allocation when the remaining bytes cannot hold that many elements of the
// smallest possible encoding.
//
// Byte slices in decoded values (payloads, RawMessage.Headers, state) alias
// b, capped so appending to them cannot overwrite b; copy b first if it will
// be reused. Strings and header values are copies.

// Smallest encodings of sequence elements, used to reject impossible counts.
const (
	minRawMessageSize      = 7 // id, offset, checksum, timestamp, origin_timestamp, two empty byte strings
	minProducedMessageSize = 6 // five None tags and an empty payload
	minHeaderEntrySize     = 4 // two (kind, empty string) fields
)

// DecodeTopicMetadata decodes the first iggy_sink_consume buffer.
func DecodeTopicMetadata(b []byte) (TopicMetadata, error) {
	r := reader{buf: b}
	var v TopicMetadata
	var err error
	if v.Stream, err = r.string(); err != nil {
		return TopicMetadata{}, fmt.Errorf("decode TopicMetadata: stream: %w", err)
	}
	if v.Topic, err = r.string(); err != nil {
		return TopicMetadata{}, fmt.Errorf("decode TopicMetadata: topic: %w", err)
	}
	return v, nil
}

// DecodeMessagesMetadata decodes the second iggy_sink_consume buffer.
func DecodeMessagesMetadata(b []byte) (MessagesMetadata, error) {
	r := reader{buf: b}
	var v MessagesMetadata
	var err error
	if v.PartitionID, err = r.uint32(); err != nil {
		return MessagesMetadata{}, fmt.Errorf("decode MessagesMetadata: partition_id: %w", err)
	}
	if v.CurrentOffset, err = r.uint64(); err != nil {
		return MessagesMetadata{}, fmt.Errorf("decode MessagesMetadata: current_offset: %w", err)
	}
	if v.Schema, err = r.schema(); err != nil {
		return MessagesMetadata{}, fmt.Errorf("decode MessagesMetadata: schema: %w", err)
	}
	return v, nil
}

// DecodeRawMessages decodes the third iggy_sink_consume buffer. Each
// message's Headers stay encoded (use DecodeHeaderMap on them).
func DecodeRawMessages(b []byte) (RawMessages, error) {
	v, err := decodeRawMessages(&reader{buf: b})
	if err != nil {
		return RawMessages{}, fmt.Errorf("decode RawMessages: %w", err)
	}
	return v, nil
}

func decodeRawMessages(r *reader) (RawMessages, error) {
	var v RawMessages
	var err error
	if v.Schema, err = r.schema(); err != nil {
		return v, fmt.Errorf("schema: %w", err)
	}
	n, err := r.count(minRawMessageSize)
	if err != nil {
		return v, fmt.Errorf("messages: %w", err)
	}
	v.Messages = make([]RawMessage, n)
	for i := range v.Messages {
		if err := r.rawMessage(&v.Messages[i]); err != nil {
			return RawMessages{}, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return v, nil
}

func (r *reader) rawMessage(m *RawMessage) error {
	var err error
	if m.ID, err = r.uint128(); err != nil {
		return fmt.Errorf("id: %w", err)
	}
	if m.Offset, err = r.uint64(); err != nil {
		return fmt.Errorf("offset: %w", err)
	}
	if m.Checksum, err = r.uint64(); err != nil {
		return fmt.Errorf("checksum: %w", err)
	}
	if m.Timestamp, err = r.uint64(); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if m.OriginTimestamp, err = r.uint64(); err != nil {
		return fmt.Errorf("origin_timestamp: %w", err)
	}
	if m.Headers, err = r.bytes(); err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	if m.Payload, err = r.bytes(); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return nil
}

// DecodeProducedMessages decodes the buffer a source plugin passes to send_cb.
func DecodeProducedMessages(b []byte) (ProducedMessages, error) {
	return DecodeProducedMessagesInto(b, nil)
}

// DecodeProducedMessagesInto is DecodeProducedMessages that fills reuse's backing array when it
// is large enough, so a steady source allocates no message slice per batch. The caller must be
// done with whatever reuse held.
func DecodeProducedMessagesInto(b []byte, reuse []ProducedMessage) (ProducedMessages, error) {
	v, err := decodeProducedMessages(&reader{buf: b}, reuse)
	if err != nil {
		return ProducedMessages{}, fmt.Errorf("decode ProducedMessages: %w", err)
	}
	return v, nil
}

// producedOptionals backs the pointer fields of one ProducedMessage, so a
// batch needs one allocation for all its Some values instead of one each.
type producedOptionals struct {
	id                                   Uint128
	checksum, timestamp, originTimestamp uint64
	headers                              HeaderMap
}

func decodeProducedMessages(r *reader, reuse []ProducedMessage) (ProducedMessages, error) {
	var v ProducedMessages
	var err error
	if v.Schema, err = r.schema(); err != nil {
		return v, fmt.Errorf("schema: %w", err)
	}
	n, err := r.count(minProducedMessageSize)
	if err != nil {
		return v, fmt.Errorf("messages: %w", err)
	}
	if cap(reuse) >= n {
		v.Messages = reuse[:n]
		clear(v.Messages)
	} else {
		v.Messages = make([]ProducedMessage, n)
	}
	var slab []producedOptionals // allocated at the first Some
	for i := range v.Messages {
		if err := r.producedMessage(&v.Messages[i], &slab, i, n); err != nil {
			return ProducedMessages{}, fmt.Errorf("message %d: %w", i, err)
		}
	}
	if v.HasState, err = r.option(); err != nil {
		return ProducedMessages{}, fmt.Errorf("state: %w", err)
	}
	if v.HasState {
		if v.State, err = r.bytes(); err != nil {
			return ProducedMessages{}, fmt.Errorf("state: %w", err)
		}
	}
	return v, nil
}

func (r *reader) producedMessage(m *ProducedMessage, slab *[]producedOptionals, i, n int) error {
	if !slowProducedOnly && r.plainProducedMessage(m) {
		return nil
	}
	slot := func() *producedOptionals {
		if *slab == nil {
			*slab = make([]producedOptionals, n)
		}
		return &(*slab)[i]
	}
	some, err := r.option()
	if err != nil {
		return fmt.Errorf("id: %w", err)
	}
	if some {
		s := slot()
		if s.id, err = r.uint128(); err != nil {
			return fmt.Errorf("id: %w", err)
		}
		m.ID = &s.id
	}
	if m.Checksum, err = r.optionalUint64(func() *uint64 { return &slot().checksum }); err != nil {
		return fmt.Errorf("checksum: %w", err)
	}
	if m.Timestamp, err = r.optionalUint64(func() *uint64 { return &slot().timestamp }); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if m.OriginTimestamp, err = r.optionalUint64(func() *uint64 { return &slot().originTimestamp }); err != nil {
		return fmt.Errorf("origin_timestamp: %w", err)
	}
	if some, err = r.option(); err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	if some {
		s := slot()
		if s.headers, err = r.headerMap(); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
		m.Headers = &s.headers
	}
	if m.Payload, err = r.bytes(); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return nil
}

// slowProducedOnly turns plainProducedMessage off, for the test comparing both paths.
var slowProducedOnly = false

// plainProducedMessage decodes the common message in one step: every optional field None and a
// payload under 2 MiB (a length of at most three varint bytes), as sources that set no ids or
// headers produce. Anything else answers false with nothing consumed, and the field-by-field path
// decodes it.
func (r *reader) plainProducedMessage(m *ProducedMessage) bool {
	b := r.buf[r.off:]
	// tagNone is 0: the five tags OR to 0 only when all five are None.
	if len(b) < 6 || b[0]|b[1]|b[2]|b[3]|b[4] != tagNone {
		return false
	}
	n, at := 0, 5
	for shift := 0; ; shift += 7 {
		if at == len(b) || shift > 14 {
			return false
		}
		c := b[at]
		at++
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	if n > len(b)-at {
		return false // the slow path names the length that does not fit
	}
	m.Payload = b[at : at+n : at+n]
	r.off += at + n
	return true
}

// optionalUint64 reads an Option<u64>; for Some it stores the value in the
// place returned by dst and returns that pointer, for None it returns nil.
func (r *reader) optionalUint64(dst func() *uint64) (*uint64, error) {
	some, err := r.option()
	if err != nil || !some {
		return nil, err
	}
	v, err := r.uint64()
	if err != nil {
		return nil, err
	}
	p := dst()
	*p = v
	return p, nil
}

// DecodeHeaderMap decodes a HeaderMap (the RawMessage.Headers bytes). The
// result is in ascending key order; of duplicate keys the later entry wins.
// An empty input is an error: callers treat empty RawMessage.Headers as "no
// headers" before decoding.
func DecodeHeaderMap(b []byte) (HeaderMap, error) {
	r := reader{buf: b}
	m, err := r.headerMap()
	if err != nil {
		return nil, fmt.Errorf("decode HeaderMap: %w", err)
	}
	return m, nil
}

// DecodeConnectorState decodes a ConnectorState (length-prefixed bytes).
func DecodeConnectorState(b []byte) ([]byte, error) {
	r := reader{buf: b}
	s, err := r.bytes()
	if err != nil {
		return nil, fmt.Errorf("decode ConnectorState: %w", err)
	}
	return s, nil
}

func (r *reader) headerMap() (HeaderMap, error) {
	n, err := r.count(minHeaderEntrySize)
	if err != nil {
		return nil, err
	}
	m := r.headerEntries(n)
	for i := range m {
		if err := r.headerField(&m[i].Key); err != nil {
			return nil, fmt.Errorf("entry %d: key: %w", i, err)
		}
		if err := r.headerField(&m[i].Value); err != nil {
			return nil, fmt.Errorf("entry %d: value: %w", i, err)
		}
	}
	if isStrictlyAscending(m) {
		return m, nil
	}
	// A BTreeMap deserializer inserts in wire order, so a later duplicate
	// replaces an earlier one; a stable sort keeps wire order among equal keys.
	slices.SortStableFunc(m, func(a, b HeaderEntry) int { return compareHeaderFields(&a.Key, &b.Key) })
	out := m[:0]
	for _, e := range m {
		if k := len(out); k > 0 && compareHeaderFields(&out[k-1].Key, &e.Key) == 0 {
			out[k-1] = e
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

func (r *reader) headerField(f *HeaderField) error {
	kind, err := r.uint32()
	if err != nil {
		return fmt.Errorf("kind: %w", err)
	}
	if kind >= headerKindCount {
		return r.malformed(fmt.Sprintf("kind: unknown HeaderKind index %d", kind))
	}
	f.Kind = HeaderKind(kind)
	start := r.off
	text, err := r.str()
	if err != nil {
		return fmt.Errorf("value: %w", err)
	}
	if f.Value, err = decodeBase64(text, r.valueBytes); err != nil {
		return fmt.Errorf("value: %w at offset %d: %w", err, start, ErrMalformed)
	}
	return nil
}

// decodeBase64 decodes standard-alphabet base64 the way serde_with's Base64
// does (base64 0.22, padding mode Indifferent): padding is optional and may
// even be partial ("aw=" is accepted), but '=' may only end the text and only
// after the second or third symbol of the final quad, and the unused low bits
// of the last symbol must be zero. Go's decoder silently skips CR and LF,
// which base64 0.22 rejects, so they are refused first.
// The output buffer comes from alloc(n), which must return n bytes.
func decodeBase64(text []byte, alloc func(n int) []byte) ([]byte, error) {
	if i := bytes.IndexAny(text, "\r\n"); i >= 0 {
		return nil, fmt.Errorf("invalid base64: line break at byte %d", i)
	}
	data := bytes.TrimRight(text, "=")
	if pad := len(text) - len(data); pad > 0 {
		if rem := len(data) % 4; rem < 2 || rem+pad > 4 {
			return nil, fmt.Errorf("invalid base64: misplaced padding at byte %d", len(data))
		}
	}
	enc := base64.RawStdEncoding.Strict()
	out := alloc(enc.DecodedLen(len(data)))
	n, err := enc.Decode(out, data)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %w", err)
	}
	return out[:n], nil
}

// reader walks a postcard buffer; off is the next unread byte.
type reader struct {
	buf []byte
	off int

	// Arenas for header maps, so a batch with a header map per message needs
	// a few allocations instead of three per message. Chunk sizes are
	// bounded by the input still unread, keeping allocations proportional
	// to len(buf).
	entryArena []HeaderEntry
	valueArena []byte
}

const (
	entryChunk = 64   // header entries per arena chunk
	valueChunk = 4096 // header value bytes per arena chunk
)

// headerEntries returns a zeroed slice of n entries, capped at n.
func (r *reader) headerEntries(n int) HeaderMap {
	if cap(r.entryArena)-len(r.entryArena) < n {
		size := max(n, min(entryChunk, r.remaining()/minHeaderEntrySize))
		r.entryArena = make([]HeaderEntry, 0, size)
	}
	start := len(r.entryArena)
	r.entryArena = r.entryArena[:start+n]
	return r.entryArena[start : start+n : start+n]
}

// valueBytes returns n bytes for a decoded header value, capped at n so an
// append by the caller cannot run into a neighbouring value.
func (r *reader) valueBytes(n int) []byte {
	if cap(r.valueArena)-len(r.valueArena) < n {
		size := max(n, min(valueChunk, r.remaining()))
		r.valueArena = make([]byte, 0, size)
	}
	start := len(r.valueArena)
	r.valueArena = r.valueArena[:start+n]
	return r.valueArena[start : start+n : start+n]
}

func (r *reader) remaining() int { return len(r.buf) - r.off }

// malformed builds an error naming the problem and the byte offset where the
// faulty item ends or starts.
func (r *reader) malformed(reason string) error {
	return fmt.Errorf("%s at offset %d: %w", reason, r.off, ErrMalformed)
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.buf) {
		return 0, r.malformed("unexpected end of input")
	}
	c := r.buf[r.off]
	r.off++
	return c, nil
}

// uvarint reads a LEB128 varint of at most maxBytes bytes whose last
// possible byte may not exceed lastMax, postcard's overflow rule. Non-minimal
// encodings are accepted, as postcard accepts them.
func (r *reader) uvarint(maxBytes int, lastMax byte, typ string) (uint64, error) {
	start := r.off
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i == maxBytes-1 && c > lastMax {
				r.off = start
				return 0, r.malformed("varint overflows " + typ)
			}
			return v, nil
		}
	}
	r.off = start
	return 0, r.malformed("varint longer than " + typ + " allows")
}

func (r *reader) uint32() (uint32, error) {
	v, err := r.uvarint(5, 0x0f, "u32")
	return uint32(v), err
}

func (r *reader) uint64() (uint64, error) {
	return r.uvarint(10, 0x01, "u64")
}

func (r *reader) uint128() (Uint128, error) {
	const maxBytes, lastMax = 19, 0x03
	start := r.off
	var v Uint128
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return Uint128{}, err
		}
		g, shift := uint64(c&0x7f), uint(7*i)
		if shift < 64 {
			v.Lo |= g << shift
			if shift > 57 {
				v.Hi |= g >> (64 - shift)
			}
		} else {
			v.Hi |= g << (shift - 64)
		}
		if c&0x80 == 0 {
			if i == maxBytes-1 && c > lastMax {
				r.off = start
				return Uint128{}, r.malformed("varint overflows u128")
			}
			return v, nil
		}
	}
	r.off = start
	return Uint128{}, r.malformed("varint longer than u128 allows")
}

func (r *reader) schema() (Schema, error) {
	start := r.off
	v, err := r.uint32()
	if err != nil {
		return 0, err
	}
	if v >= schemaCount {
		r.off = start
		return 0, r.malformed(fmt.Sprintf("unknown Schema index %d", v))
	}
	return Schema(v), nil
}

// option reads an Option tag: false for None, true for Some.
func (r *reader) option() (bool, error) {
	c, err := r.byte()
	if err != nil {
		return false, err
	}
	switch c {
	case tagNone:
		return false, nil
	case tagSome:
		return true, nil
	}
	r.off--
	return false, r.malformed(fmt.Sprintf("invalid Option tag 0x%02x", c))
}

// length reads a usize length prefix and checks that that many bytes remain.
func (r *reader) length() (int, error) {
	start := r.off
	n, err := r.uint64()
	if err != nil {
		return 0, err
	}
	if left := r.remaining(); n > uint64(left) {
		r.off = start
		return 0, r.malformed(fmt.Sprintf("length %d exceeds the %d remaining bytes", n, left))
	}
	return int(n), nil
}

// count reads a sequence length and rejects it when the remaining bytes
// cannot hold that many elements of at least minElemSize bytes each, so no
// allocation is ever sized from an unchecked prefix.
func (r *reader) count(minElemSize int) (int, error) {
	start := r.off
	n, err := r.uint64()
	if err != nil {
		return 0, err
	}
	if left := r.remaining(); n > uint64(left/minElemSize) {
		r.off = start
		return 0, r.malformed(fmt.Sprintf("count %d exceeds what the %d remaining bytes can hold", n, left))
	}
	return int(n), nil
}

// bytes reads a length-prefixed byte string, aliasing the input.
func (r *reader) bytes() ([]byte, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b, nil
}

// str reads a length-prefixed UTF-8 string without copying it.
func (r *reader) str() ([]byte, error) {
	start := r.off
	b, err := r.bytes()
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		r.off = start
		return nil, r.malformed("invalid UTF-8 in string")
	}
	return b, nil
}

func (r *reader) string() (string, error) {
	b, err := r.str()
	return string(b), err
}
