package wire09

import (
	"encoding/binary"
	"fmt"
)

// reader decodes a body front to back. The first failure sticks, so a decode
// function reads every field and checks err once; values it returns alias the
// body (no copies).
type reader struct {
	buf  []byte
	pos  int
	err  error
	what string // the body being decoded, for error messages
}

func newReader(what string, b []byte) reader { return reader{buf: b, what: what} }

func (r *reader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = malformed(r.what + ": " + fmt.Sprintf(format, args...))
	}
}

func (r *reader) remaining() int { return len(r.buf) - r.pos }

func (r *reader) take(n int, field string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.remaining() < n {
		r.failf("%s at byte %d needs %d bytes, %d left", field, r.pos, n, r.remaining())
		return nil
	}
	b := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b
}

func (r *reader) u8(field string) uint8 {
	if b := r.take(1, field); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16(field string) uint16 {
	if b := r.take(2, field); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32(field string) uint32 {
	if b := r.take(4, field); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(field string) uint64 {
	if b := r.take(8, field); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// name8 reads a u8-length name of minLen..255 bytes.
func (r *reader) name8(field string, minLen int) []byte {
	n := int(r.u8(field + " length"))
	b := r.take(n, field)
	if r.err == nil && n < minLen {
		r.failf("%s is %d bytes, need at least %d", field, n, minLen)
	}
	return b
}

// string32 reads a u32-length string.
func (r *reader) string32(field string) []byte {
	n := r.u32(field + " length")
	if r.err == nil && uint64(n) > uint64(r.remaining()) {
		r.failf("%s of %d bytes at byte %d, %d left", field, n, r.pos, r.remaining())
		return nil
	}
	return r.take(int(n), field)
}

// rest returns everything left.
func (r *reader) rest() []byte { return r.take(r.remaining(), "rest") }

// end fails when bytes are left over, then returns the sticky error.
func (r *reader) end() error {
	if r.err == nil && r.remaining() != 0 {
		r.failf("%d trailing bytes at byte %d", r.remaining(), r.pos)
	}
	return r.err
}

func appendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// appendName8 appends a u8-length name; callers checked the length.
func appendName8(dst, name []byte) []byte {
	dst = append(dst, byte(len(name)))
	return append(dst, name...)
}

func appendString32(dst, s []byte) []byte {
	dst = appendU32(dst, uint32(len(s)))
	return append(dst, s...)
}

// checkName is the encoder-side length check of a u8-length name.
func checkName(field string, name []byte, minLen int) error {
	if len(name) < minLen || len(name) > 255 {
		return fmt.Errorf("%s is %d bytes, must be %d..255: %w", field, len(name), minLen, StatusInvalidFormat)
	}
	return nil
}
