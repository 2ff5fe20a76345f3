package iggywire

import (
	"encoding/binary"
	"fmt"
)

// Reader decodes a body front to back. The first failure sticks, so a decoder reads every field
// and checks Err once; the values it returns alias the body (no copies).
//
// Which status a failure carries differs between the protocols: a body that ends early is
// Short's status and an enum byte out of range (consumer, partitioning or polling kind) BadKind's,
// both InvalidFormat in 0.9 (NewReader) and InvalidCommand in 0.8. A malformed identifier or name
// is InvalidFormat in both.
type Reader struct {
	buf  []byte
	pos  int
	err  error
	what string // the body being decoded, for error messages

	Short, BadKind Status
}

// NewReader reads b, a body named what in errors; every failure is InvalidFormat.
func NewReader(what string, b []byte) Reader {
	return Reader{buf: b, what: what, Short: StatusInvalidFormat, BadKind: StatusInvalidFormat}
}

// Fail records a failure with the status given, unless one is recorded already.
func (r *Reader) Fail(status Status, format string, args ...any) {
	if r.err == nil {
		r.err = Errorf(status, r.what+": "+fmt.Sprintf(format, args...))
	}
}

// Failf records a malformed field (InvalidFormat).
func (r *Reader) Failf(format string, args ...any) { r.Fail(StatusInvalidFormat, format, args...) }

// Err is the first failure, or nil.
func (r *Reader) Err() error { return r.err }

// Pos is the offset of the next byte to read.
func (r *Reader) Pos() int { return r.pos }

// Remaining is how many bytes are left.
func (r *Reader) Remaining() int { return len(r.buf) - r.pos }

// Take returns the next n bytes (nil after a failure, or when fewer are left: Short).
func (r *Reader) Take(n int, field string) []byte { return r.take(n, field, "") }

// take is Take of the field named field+part: the name is put together only for an error, so
// reading allocates nothing.
func (r *Reader) take(n int, field, part string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.Remaining() < n {
		r.Fail(r.Short, "%s%s at byte %d needs %d bytes, %d left", field, part, r.pos, n, r.Remaining())
		return nil
	}
	b := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b
}

// U8 reads a byte (0 after a failure).
func (r *Reader) U8(field string) uint8 { return r.u8(field, "") }

func (r *Reader) u8(field, part string) uint8 {
	if b := r.take(1, field, part); b != nil {
		return b[0]
	}
	return 0
}

// U16 reads a little-endian u16.
func (r *Reader) U16(field string) uint16 {
	if b := r.Take(2, field); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

// U32 reads a little-endian u32.
func (r *Reader) U32(field string) uint32 { return r.u32(field, "") }

func (r *Reader) u32(field, part string) uint32 {
	if b := r.take(4, field, part); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// U64 reads a little-endian u64.
func (r *Reader) U64(field string) uint64 {
	if b := r.Take(8, field); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Name8 reads a u8-length name of minLen..255 bytes (a shorter one is InvalidFormat).
func (r *Reader) Name8(field string, minLen int) []byte {
	n := int(r.u8(field, " length"))
	b := r.Take(n, field)
	if r.err == nil && n < minLen {
		r.Failf("%s is %d bytes, need at least %d", field, n, minLen)
	}
	return b
}

// String32 reads a u32-length string.
func (r *Reader) String32(field string) []byte {
	n := r.u32(field, " length")
	if r.err == nil && uint64(n) > uint64(r.Remaining()) {
		r.Fail(r.Short, "%s of %d bytes at byte %d, %d left", field, n, r.pos, r.Remaining())
		return nil
	}
	return r.Take(int(n), field)
}

// Rest returns everything left.
func (r *Reader) Rest() []byte { return r.Take(r.Remaining(), "rest") }

// End fails when bytes are left over (InvalidFormat), then returns the sticky error.
func (r *Reader) End() error {
	if r.err == nil && r.Remaining() != 0 {
		r.Failf("%d trailing bytes at byte %d", r.Remaining(), r.pos)
	}
	return r.err
}

// AppendU16, AppendU32 and AppendU64 append little-endian integers.
func AppendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }

// AppendU32 appends a little-endian u32.
func AppendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

// AppendU64 appends a little-endian u64.
func AppendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// AppendName8 appends a u8-length name; callers checked the length (CheckName).
func AppendName8(dst, name []byte) []byte {
	dst = append(dst, byte(len(name)))
	return append(dst, name...)
}

// AppendString32 appends a u32-length string.
func AppendString32(dst, s []byte) []byte {
	dst = AppendU32(dst, uint32(len(s)))
	return append(dst, s...)
}

// CheckName is the encoder-side length check of a u8-length name: minLen..255 bytes, else
// InvalidFormat.
func CheckName(field string, name []byte, minLen int) error {
	if len(name) < minLen || len(name) > 255 {
		return fmt.Errorf("%s is %d bytes, must be %d..255: %w", field, len(name), minLen, StatusInvalidFormat)
	}
	return nil
}
