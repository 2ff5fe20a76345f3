package codec

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/hamba/avro/v2"
)

// avroDirect is what a direct path made of its input.
type avroDirect uint8

const (
	avroDirectOK       avroDirect = iota // written: the bytes the slow path gives
	avroDirectInvalid                    // the slow path fails on this input
	avroDirectUnproven                   // the direct path cannot prove its bytes (e.g. a map key given twice): take the slow path
)

// avroTextMaxMapKeys bounds the keys of one map whose uniqueness the text path checks; a longer
// map takes the slow path.
const avroTextMaxMapKeys = 64

// AppendJSONText implements JSONTextDecoder: it appends the JSON text of the datum b, exactly the
// bytes AppendPayloadToFFI writes for Decode(b), walking the datum without building the value
// model. It answers false (dst unchanged) when Decode fails, and for what it cannot prove, such as
// a map holding a key twice (the value model keeps one).
func (d avroStreamDecoder) AppendJSONText(dst, b []byte) ([]byte, bool) {
	out, res := d.schema.appendJSONText(dst, b)
	return out, res == avroDirectOK
}

// appendJSONText is DecodeJSON followed by AppendJSON, in one walk over the datum: the same
// checks in the same order (depth, element budget, lengths, UTF-8, booleans, enum and union
// indexes, NaN, trailing bytes), the varints read as hamba's reader reads them.
func (s *AvroSchema) appendJSONText(dst, b []byte) ([]byte, avroDirect) {
	if s.plan == nil {
		return dst, avroDirectUnproven
	}
	if len(b) == 0 {
		return dst, avroDirectInvalid
	}
	w := avroTextWriter{src: b, budget: len(b) + avroSpareElements, dst: dst}
	if !w.value(s.plan, 0) {
		return dst, w.res
	}
	if w.pos != len(b) {
		return dst, avroDirectInvalid // trailing bytes
	}
	return w.dst, avroDirectOK
}

type avroTextWriter struct {
	src    []byte
	pos    int
	budget int // array and map elements left, as avroReader's
	dst    []byte
	res    avroDirect
}

func (w *avroTextWriter) fail(res avroDirect) bool {
	w.res = res
	return false
}

// varint reads an Avro varint of at most maxBytes bytes as hamba's reader does: bits beyond 64
// are dropped, and the callers keep the low 32 of an int's, which is hamba's 32-bit sum.
func (w *avroTextWriter) varint(maxBytes int) (uint64, bool) {
	var v uint64
	var shift uint
	for n := 0; n < maxBytes && w.pos < len(w.src); n++ {
		c := w.src[w.pos]
		w.pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, true
		}
		shift += 7
	}
	return 0, false
}

// long reads a zigzag varint of at most 10 bytes, as hamba's ReadLong.
func (w *avroTextWriter) long() (int64, bool) {
	v, ok := w.varint(10)
	return int64(v>>1) ^ -int64(v&1), ok
}

// int reads a zigzag varint of at most 5 bytes, as hamba's ReadInt.
func (w *avroTextWriter) int() (int32, bool) {
	v, ok := w.varint(5)
	u := uint32(v)
	return int32(u>>1) ^ -int32(u&1), ok
}

// lengthPrefixed reads a bytes or string value, aliasing the input.
func (w *avroTextWriter) lengthPrefixed() ([]byte, bool) {
	n, ok := w.long()
	if !ok || n < 0 || n > int64(len(w.src)-w.pos) {
		return nil, false
	}
	out := w.src[w.pos : w.pos+int(n)]
	w.pos += int(n)
	return out, true
}

// fixed reads n bytes.
func (w *avroTextWriter) fixed(n int) ([]byte, bool) {
	if n > len(w.src)-w.pos {
		return nil, false
	}
	out := w.src[w.pos : w.pos+n]
	w.pos += n
	return out, true
}

func (w *avroTextWriter) value(n *avroNode, depth int) bool {
	if depth > maxAvroDepth {
		return w.fail(avroDirectInvalid)
	}
	switch n.kind {
	case avro.Null:
		w.dst = append(w.dst, "null"...)
	case avro.Boolean:
		if w.pos >= len(w.src) || w.src[w.pos] > 1 {
			return w.fail(avroDirectInvalid)
		}
		if w.src[w.pos] == 1 {
			w.dst = append(w.dst, "true"...)
		} else {
			w.dst = append(w.dst, "false"...)
		}
		w.pos++
	case avro.Int:
		i, ok := w.int()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		w.dst = strconv.AppendInt(w.dst, int64(i), 10)
	case avro.Long:
		i, ok := w.long()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		w.dst = strconv.AppendInt(w.dst, i, 10)
	case avro.Float:
		b, ok := w.fixed(4)
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		return w.float(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case avro.Double:
		b, ok := w.fixed(8)
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		return w.float(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case avro.String:
		b, ok := w.lengthPrefixed()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		if w.dst, ok = appendValidString(w.dst, b); !ok {
			return w.fail(avroDirectInvalid)
		}
	case avro.Bytes:
		b, ok := w.lengthPrefixed()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		w.dst = appendByteNumbers(w.dst, b)
	case avro.Fixed:
		b, ok := w.fixed(n.size)
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		w.dst = appendByteNumbers(w.dst, b)
	case avro.Enum:
		i, ok := w.int()
		if !ok || i < 0 || int(i) >= len(n.symbols) {
			return w.fail(avroDirectInvalid)
		}
		w.dst = append(w.dst, n.symbols[i]...)
	case avro.Union:
		i, ok := w.long()
		if !ok || i < 0 || i >= int64(len(n.branches)) {
			return w.fail(avroDirectInvalid)
		}
		return w.value(n.branches[i], depth+1)
	case avro.Record, avro.Error:
		w.dst = append(w.dst, '{')
		for i := range n.fields {
			f := &n.fields[i]
			w.dst = append(w.dst, f.key...)
			if !w.value(f.node, depth+1) {
				return false
			}
		}
		w.dst = append(w.dst, '}')
	case avro.Ref:
		return w.value(n.child, depth+1)
	case avro.Array:
		return w.array(n.child, depth)
	case avro.Map:
		return w.mapValue(n.child, depth)
	default:
		return w.fail(avroDirectUnproven)
	}
	return true
}

func (w *avroTextWriter) float(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return w.fail(avroDirectInvalid)
	}
	w.dst, _ = appendFloat(w.dst, f)
	return true
}

// blockHeader reads the item count of the next block, as hamba's ReadBlockHeader (a negative
// count is followed by the block's size in bytes), and charges it to the element budget.
func (w *avroTextWriter) blockHeader() (int64, bool) {
	n, ok := w.long()
	if !ok {
		return 0, false
	}
	if n < 0 {
		if _, ok := w.long(); !ok {
			return 0, false
		}
		n = -n
	}
	if n < 0 || n > int64(w.budget) {
		return 0, false
	}
	w.budget -= int(n)
	return n, true
}

// blocks reads the blocks of an array or map, calling item with each item's index.
func (w *avroTextWriter) blocks(item func(i int) bool) bool {
	count := 0
	for {
		n, ok := w.blockHeader()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		if n == 0 {
			return true
		}
		for range n {
			if !item(count) {
				return false
			}
			count++
		}
	}
}

func (w *avroTextWriter) array(items *avroNode, depth int) bool {
	w.dst = append(w.dst, '[')
	ok := w.blocks(func(i int) bool {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		return w.value(items, depth+1)
	})
	w.dst = append(w.dst, ']')
	return ok
}

// mapValue writes a map as an object. The value model keeps one member per key (the first
// position, the last value), so a key given twice leaves it to the slow path; keys are compared
// as written, which canonical escaping makes one-to-one.
func (w *avroTextWriter) mapValue(values *avroNode, depth int) bool {
	start := len(w.dst)
	w.dst = append(w.dst, '{')
	var keys [avroTextMaxMapKeys]uint64 // spans in dst relative to start, from<<32 | to
	var seen uint64                     // a filter of key lengths and last bytes
	ok := w.blocks(func(i int) bool {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		key, ok := w.lengthPrefixed()
		if !ok {
			return w.fail(avroDirectInvalid)
		}
		from := len(w.dst)
		if w.dst, ok = appendValidString(w.dst, key); !ok {
			return w.fail(avroDirectInvalid)
		}
		quoted := w.dst[from:]
		bit := uint64(1) << ((uint(len(quoted))*7 + uint(quoted[len(quoted)-2])) & 63)
		if seen&bit != 0 {
			for _, k := range keys[:i] {
				f, t := start+int(k>>32), start+int(uint32(k))
				if string(w.dst[f:t]) == string(quoted) {
					return w.fail(avroDirectUnproven)
				}
			}
		}
		if i == avroTextMaxMapKeys {
			return w.fail(avroDirectUnproven)
		}
		seen |= bit
		keys[i] = uint64(from-start)<<32 | uint64(len(w.dst)-start)
		w.dst = append(w.dst, ':')
		return w.value(values, depth+1)
	})
	w.dst = append(w.dst, '}')
	return ok
}

// appendByteNumbers writes bytes as the JSON array of numbers the value model holds for them.
func appendByteNumbers(dst, b []byte) []byte {
	dst = append(dst, '[')
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch {
		case c >= 100:
			dst = append(dst, '0'+c/100, '0'+c/10%10, '0'+c%10)
		case c >= 10:
			dst = append(dst, '0'+c/10, '0'+c%10)
		default:
			dst = append(dst, '0'+c)
		}
	}
	return append(dst, ']')
}
