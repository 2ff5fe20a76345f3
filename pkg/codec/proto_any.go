package codec

import (
	"encoding/base64"
	"unicode/utf8"
)

// maxProtoGroupDepth matches the decoder upstream uses (prost), which gives
// up on groups nested deeper than this.
const maxProtoGroupDepth = 100

// decodeProtoAny decodes b as a google.protobuf.Any message: field 1
// type_url (string), field 2 value (bytes), unknown fields skipped, the last
// occurrence of a field winning. ok is false for anything that is not a
// well-formed message, exactly when upstream's decoder fails. value aliases b.
func decodeProtoAny(b []byte) (typeURL string, value []byte, ok bool) {
	url, value, ok := decodeProtoAnyBytes(b)
	return string(url), value, ok
}

// decodeProtoAnyBytes is decodeProtoAny with the type URL aliasing b too.
func decodeProtoAnyBytes(b []byte) (typeURL, value []byte, ok bool) {
	r := protoReader{buf: b}
	for r.pos < len(r.buf) {
		field, wireType, good := r.key()
		if !good {
			return nil, nil, false
		}
		switch field {
		case 1, 2:
			if wireType != 2 {
				return nil, nil, false
			}
			data, good := r.lengthDelimited()
			if !good {
				return nil, nil, false
			}
			if field == 1 {
				if !utf8.Valid(data) {
					return nil, nil, false
				}
				typeURL = data
			} else {
				value = data
			}
		default:
			if !r.skip(field, wireType, 0) {
				return nil, nil, false
			}
		}
	}
	if value == nil {
		value = []byte{}
	}
	return typeURL, value, true
}

type protoReader struct {
	buf []byte
	pos int
}

func (r *protoReader) varint() (uint64, bool) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.pos >= len(r.buf) {
			return 0, false
		}
		c := r.buf[r.pos]
		r.pos++
		if i == 9 && c > 1 {
			return 0, false // more than 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, true
		}
	}
	return 0, false
}

func (r *protoReader) key() (field uint32, wireType uint8, ok bool) {
	k, ok := r.varint()
	if !ok || k > 0xFFFF_FFFF {
		return 0, 0, false
	}
	field, wireType = uint32(k>>3), uint8(k&7)
	if field == 0 || wireType > 5 {
		return 0, 0, false
	}
	return field, wireType, true
}

func (r *protoReader) lengthDelimited() ([]byte, bool) {
	n, ok := r.varint()
	if !ok || n > uint64(len(r.buf)-r.pos) {
		return nil, false
	}
	data := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return data, true
}

func (r *protoReader) fixed(n int) bool {
	if len(r.buf)-r.pos < n {
		return false
	}
	r.pos += n
	return true
}

// skip steps over one unknown field (including a whole group).
func (r *protoReader) skip(field uint32, wireType uint8, depth int) bool {
	switch wireType {
	case 0:
		_, ok := r.varint()
		return ok
	case 1:
		return r.fixed(8)
	case 2:
		_, ok := r.lengthDelimited()
		return ok
	case 3:
		if depth >= maxProtoGroupDepth {
			return false
		}
		for {
			inner, innerType, ok := r.key()
			if !ok {
				return false
			}
			if innerType == 4 {
				return inner == field
			}
			if !r.skip(inner, innerType, depth+1) {
				return false
			}
		}
	case 5:
		return r.fixed(4)
	default: // 4: an end-group with no start
		return false
	}
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
