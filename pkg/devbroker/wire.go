package devbroker

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Wire primitives of the Iggy 0.8 binary protocol: little-endian integers,
// identifiers, length-prefixed names.

// Identifier kinds on the wire.
const (
	idKindNumeric = 1
	idKindString  = 2
)

// ident is a decoded wire identifier: a numeric id or a name. name aliases the
// request buffer, so it must be copied before it outlives the request.
type ident struct {
	numeric bool
	id      uint32
	name    []byte
}

// decoder reads a request payload front to back. The first failure sticks, so
// a decode function can read every field and check err once at the end.
type decoder struct {
	buf []byte
	pos int
	err error
}

func (d *decoder) fail(s iggywire.Status) {
	if d.err == nil {
		d.err = s
	}
}

// take returns the next n bytes, or nil and InvalidCommand (a truncated
// payload) when fewer are left.
func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.buf)-d.pos < n {
		d.fail(iggywire.StatusInvalidCommand)
		return nil
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *decoder) u8() uint8 {
	b := d.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) u32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// ident reads `[kind u8][len u8][value]`. A numeric id must be 4 bytes and a
// name must not be empty (InvalidFormat); an unknown kind is InvalidFormat too.
func (d *decoder) ident() ident {
	kind := d.u8()
	n := int(d.u8())
	value := d.take(n)
	if d.err != nil {
		return ident{}
	}
	switch kind {
	case idKindNumeric:
		if n != 4 {
			d.fail(iggywire.StatusInvalidFormat)
			return ident{}
		}
		return ident{numeric: true, id: binary.LittleEndian.Uint32(value)}
	case idKindString:
		if n == 0 {
			d.fail(iggywire.StatusInvalidFormat)
			return ident{}
		}
		return ident{name: value}
	default:
		d.fail(iggywire.StatusInvalidFormat)
		return ident{}
	}
}

// name reads a u8-length-prefixed name that must not be empty.
func (d *decoder) name() string {
	n := int(d.u8())
	b := d.take(n)
	if d.err != nil {
		return ""
	}
	if n == 0 {
		d.fail(iggywire.StatusInvalidFormat)
		return ""
	}
	return string(b)
}

// optionalPartition reads the 5-byte `[flag u8][u32]` field; only flag 1 means present.
func (d *decoder) optionalPartition() (uint32, bool) {
	flag := d.u8()
	id := d.u32()
	return id, flag == 1
}

// encoder appends a response payload.
type encoder struct {
	buf []byte
}

func (e *encoder) u8(v uint8)   { e.buf = append(e.buf, v) }
func (e *encoder) u16(v uint16) { e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }
func (e *encoder) u32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

// name8 appends a u8-length-prefixed string (names are at most 255 bytes by construction).
func (e *encoder) name8(s string) {
	e.u8(uint8(len(s)))
	e.buf = append(e.buf, s...)
}

// string32 appends a u32-length-prefixed string.
func (e *encoder) string32(s string) {
	e.u32(uint32(len(s)))
	e.buf = append(e.buf, s...)
}
