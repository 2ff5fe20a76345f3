package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// avroObjectMaxMembers bounds the members of one object the text encoder indexes or checks for
// repeated keys (CanonicalJSON allows no more); a larger object takes the slow path.
const avroObjectMaxMembers = canonicalMaxKeys

// AppendEncodedJSON implements JSONEncoder: it appends the Avro datum EncodeJSON writes for the
// value ParseJSON makes of b, encoding straight from the text and checking on the way that it is
// JSON in the canonical form (CanonicalJSON: what is not takes the slow path). It answers false
// (dst unchanged) when EncodeJSON or ParseJSON would fail, when no schema is configured, and for
// what it cannot prove (nesting near the depth limit, a default it cannot write); Encode then
// decides.
func (e avroStreamEncoder) AppendEncodedJSON(dst, b []byte) ([]byte, bool) {
	if e.schema == nil {
		return dst, false
	}
	out, res := e.schema.appendEncodedJSON(dst, b)
	return out, res == avroDirectOK
}

// AppendEncodedJSONText implements JSONTextEncoder: AppendEncodedJSON, whose check canonical text
// passes.
func (e avroStreamEncoder) AppendEncodedJSONText(dst, canonical []byte) ([]byte, bool) {
	return e.AppendEncodedJSON(dst, canonical)
}

// appendEncodedJSON is ParseJSON followed by EncodeJSON, in one walk over the text: the same
// acceptance per type, union branches tried in order (a branch is tried by encoding it, which
// fails exactly when avroAccepts refuses it), missing record fields written from their defaults'
// text. Every byte the walk accepts is checked as CanonicalJSON checks it; a verdict of invalid
// is given only where the slow path fails whatever the rest of the text holds (a value of the
// wrong kind, an integer out of range, an unknown symbol), or where the text is not JSON.
func (s *AvroSchema) appendEncodedJSON(dst, b []byte) ([]byte, avroDirect) {
	if s.plan == nil || len(b) >= canonicalMaxLen {
		return dst, avroDirectUnproven
	}
	e := avroTextEncoder{dst: dst}
	end, ok := e.value(s.plan, b, 0, 0)
	if !ok {
		return dst, e.res
	}
	if end != len(b) {
		return dst, avroDirectUnproven // more after the value
	}
	return e.dst, avroDirectOK
}

type avroTextEncoder struct {
	dst []byte
	res avroDirect
}

// fail records why the walk stopped; it returns i for the callers' (end, ok) results.
func (e *avroTextEncoder) fail(res avroDirect, i int) (int, bool) {
	e.res = res
	return i, false
}

// value encodes the JSON value at src[i] as n and returns where it ends.
func (e *avroTextEncoder) value(n *avroNode, src []byte, i, depth int) (int, bool) {
	if depth > maxAvroDepth {
		// EncodeJSON fails here, but avroAccepts, counting from each union, may have chosen
		// another branch above: only the slow path knows.
		return e.fail(avroDirectUnproven, i)
	}
	if i >= len(src) || !jsonValueStart[src[i]] {
		return e.fail(avroDirectUnproven, i)
	}
	// The first byte tells the kind of the value ParseJSON would read here, if it reads the text
	// at all: a kind n cannot hold fails the slow path either way.
	c := src[i]
	switch n.kind {
	case avro.Null:
		if c != 'n' {
			return e.fail(avroDirectInvalid, i)
		}
		return e.literal(src, i, "null")
	case avro.Boolean:
		switch c {
		case 't':
			e.dst = append(e.dst, 1)
			return e.literal(src, i, "true")
		case 'f':
			e.dst = append(e.dst, 0)
			return e.literal(src, i, "false")
		}
		return e.fail(avroDirectInvalid, i)
	case avro.Int, avro.Long:
		if c != '-' && !isDigit(c) {
			return e.fail(avroDirectInvalid, i)
		}
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if n.kind == avro.Long {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		end, canonical := canonicalNumber(src, i)
		v, _, ok := textInteger(src, i, lo, hi)
		switch {
		case !canonical:
			return e.fail(avroDirectUnproven, i)
		case !ok: // a float, or an integer out of range
			return e.fail(avroDirectInvalid, i)
		}
		e.dst = appendZigzag(e.dst, v)
		return end, true
	case avro.Float, avro.Double:
		if c != '-' && !isDigit(c) {
			return e.fail(avroDirectInvalid, i)
		}
		if _, canonical := canonicalNumber(src, i); !canonical {
			return e.fail(avroDirectUnproven, i)
		}
		f, end, ok := textNumber(src, i)
		if !ok {
			return e.fail(avroDirectUnproven, i)
		}
		if n.kind == avro.Double {
			e.dst = binary.LittleEndian.AppendUint64(e.dst, math.Float64bits(f))
			return end, true
		}
		if math.IsInf(float64(float32(f)), 0) {
			return e.fail(avroDirectInvalid, i)
		}
		e.dst = binary.LittleEndian.AppendUint32(e.dst, math.Float32bits(float32(f)))
		return end, true
	case avro.String:
		if c != '"' {
			return e.fail(avroDirectInvalid, i)
		}
		return e.lengthPrefixedString(src, i)
	case avro.Bytes, avro.Fixed:
		return e.bytesValue(n, src, i)
	case avro.Enum:
		if c != '"' {
			return e.fail(avroDirectInvalid, i)
		}
		end, ok := canonicalString(src, i)
		if !ok {
			return e.fail(avroDirectUnproven, i)
		}
		for k, sym := range n.symbols {
			if bytes.Equal(sym, src[i:end]) { // canonical escaping is one-to-one
				e.dst = appendZigzag(e.dst, int64(k))
				return end, true
			}
		}
		return e.fail(avroDirectInvalid, i)
	case avro.Union:
		mark := len(e.dst)
		for k, branch := range n.branches {
			e.dst = appendZigzag(e.dst, int64(k))
			if end, ok := e.value(branch, src, i, depth+1); ok {
				return end, true
			}
			if e.res != avroDirectInvalid {
				return i, false
			}
			e.dst = e.dst[:mark]
		}
		return e.fail(avroDirectInvalid, i)
	case avro.Record, avro.Error:
		if c != '{' {
			return e.fail(avroDirectInvalid, i)
		}
		return e.record(n, src, i, depth)
	case avro.Ref:
		return e.value(n.child, src, i, depth+1)
	case avro.Array:
		if c != '[' {
			return e.fail(avroDirectInvalid, i)
		}
		return e.items(n.child, src, i, ']', depth)
	case avro.Map:
		if c != '{' {
			return e.fail(avroDirectInvalid, i)
		}
		return e.items(n.child, src, i, '}', depth)
	}
	return e.fail(avroDirectUnproven, i)
}

// literal checks the literal word at src[i].
func (e *avroTextEncoder) literal(src []byte, i int, word string) (int, bool) {
	if end, ok := canonicalLiteral(src, i, word); ok {
		return end, true
	}
	return e.fail(avroDirectUnproven, i)
}

// record encodes the object at src[i] field by field in schema order: a member by its name, else
// the field's default, else null.
func (e *avroTextEncoder) record(n *avroNode, src []byte, i, depth int) (int, bool) {
	mark := len(e.dst)
	if end, ok, done := e.recordInOrder(n, src, i, depth); done {
		return end, ok
	}
	e.dst = e.dst[:mark]
	type member struct{ key, value, end int }
	var members [avroObjectMaxMembers]member
	count := 0
	j := i + 1
	if j < len(src) && src[j] == '}' {
		j++
	} else {
		for {
			if count == len(members) {
				return e.fail(avroDirectUnproven, i)
			}
			if j >= len(src) || src[j] != '"' {
				return e.fail(avroDirectUnproven, i)
			}
			keyEnd, ok := canonicalString(src, j)
			if !ok || keyEnd >= len(src) || src[keyEnd] != ':' {
				return e.fail(avroDirectUnproven, i)
			}
			// The value is checked whole here, as the record may not read it.
			valueEnd, ok := canonicalValue(src, keyEnd+1, 0)
			if !ok || valueEnd >= len(src) {
				return e.fail(avroDirectUnproven, i)
			}
			for _, m := range members[:count] { // ParseJSON would merge a repeated key
				if bytes.Equal(src[m.key:m.value-1], src[j:keyEnd]) {
					return e.fail(avroDirectUnproven, i)
				}
			}
			members[count] = member{j, keyEnd + 1, valueEnd}
			count++
			j = valueEnd + 1
			if src[valueEnd] == '}' {
				break
			}
			if src[valueEnd] != ',' {
				return e.fail(avroDirectUnproven, i)
			}
		}
	}
	for fi := range n.fields {
		f := &n.fields[fi]
		found := -1
		// Members usually come in field order: try the field's own position first.
		if fi < count && bytes.Equal(src[members[fi].key:members[fi].value-1], f.quoted) {
			found = fi
		} else {
			for k := range count {
				if bytes.Equal(src[members[k].key:members[k].value-1], f.quoted) {
					found = k
					break
				}
			}
		}
		if found < 0 {
			if _, ok := e.missingField(f, i, depth); !ok {
				return i, false
			}
			continue
		}
		end, ok := e.value(f.node, src, members[found].value, depth+1)
		if !ok {
			return i, false
		}
		if end != members[found].end {
			return e.fail(avroDirectUnproven, i) // not canonical text
		}
	}
	return j, true
}

// recordInOrder is record in one pass for the common object: its members are the record's fields
// in schema order, maybe without the last ones. done is false, with part of the record written,
// for any other object; record then indexes its members.
func (e *avroTextEncoder) recordInOrder(n *avroNode, src []byte, i, depth int) (end int, ok, done bool) {
	j := i + 1 // at a member's key, or at the closing brace
	for fi := range n.fields {
		f := &n.fields[fi]
		if j >= len(src) {
			return i, false, false
		}
		if src[j] == '}' { // the object ran out: the remaining fields are missing
			if end, ok = e.missingField(f, i, depth); !ok {
				return end, ok, true
			}
			continue
		}
		if fi > 0 {
			if src[j] != ',' {
				return i, false, false
			}
			j++
		}
		if len(src)-j <= len(f.quoted) || !bytes.Equal(src[j:j+len(f.quoted)], f.quoted) || src[j+len(f.quoted)] != ':' {
			return i, false, false
		}
		if j, ok = e.value(f.node, src, j+len(f.quoted)+1, depth+1); !ok {
			return j, false, true
		}
	}
	if j >= len(src) || src[j] != '}' {
		return i, false, false // members beyond the fields
	}
	return j + 1, true, true
}

// missingField encodes field f of a record whose object lacks it.
func (e *avroTextEncoder) missingField(f *avroField, i, depth int) (int, bool) {
	switch f.def {
	case noDefault:
		return e.value(f.node, nullText, 0, depth+1)
	case defaultText:
		return e.value(f.node, f.text, 0, depth+1)
	case defaultFails:
		return e.fail(avroDirectInvalid, i)
	}
	return e.fail(avroDirectUnproven, i)
}

// items encodes the array or map at src[i] as one block: its item count (when not empty), the
// items (map members with their keys as strings), then the zero that ends the blocks. The count
// is written in front once known, in the one byte reserved for it or moving the items along.
func (e *avroTextEncoder) items(child *avroNode, src []byte, i int, closing byte, depth int) (int, bool) {
	header := len(e.dst)
	e.dst = append(e.dst, 0)
	j := i + 1
	count := 0
	if j < len(src) && src[j] == closing {
		return j + 1, true // the zero alone
	}
	var keys [avroObjectMaxMembers]uint64 // a map's key spans in src, from<<32 | to
	for {
		if closing == '}' {
			keyEnd, ok := e.lengthPrefixedString(src, j)
			if !ok {
				return i, false
			}
			if keyEnd >= len(src) || src[keyEnd] != ':' || count == len(keys) {
				return e.fail(avroDirectUnproven, i)
			}
			for _, k := range keys[:count] { // ParseJSON would merge a repeated key
				if string(src[k>>32:uint32(k)]) == string(src[j:keyEnd]) {
					return e.fail(avroDirectUnproven, i)
				}
			}
			keys[count] = uint64(j)<<32 | uint64(keyEnd)
			j = keyEnd + 1
		}
		end, ok := e.value(child, src, j, depth+1)
		if !ok {
			return i, false
		}
		count++
		if end >= len(src) {
			return e.fail(avroDirectUnproven, i)
		}
		j = end + 1
		if src[end] == closing {
			break
		}
		if src[end] != ',' {
			return e.fail(avroDirectUnproven, i)
		}
	}
	e.dst = insertZigzag(e.dst, header, int64(count))
	e.dst = append(e.dst, 0)
	return j, true
}

// bytesValue encodes bytes or fixed from a string (its UTF-8 bytes) or an array of numbers
// 0..255, as jsonBytes reads them; fixed takes exactly its size and no length.
func (e *avroTextEncoder) bytesValue(n *avroNode, src []byte, i int) (int, bool) {
	header := len(e.dst)
	if n.kind == avro.Bytes {
		e.dst = append(e.dst, 0)
	}
	body := len(e.dst)
	var end int
	switch src[i] {
	case '"':
		var ok bool
		if end, ok = e.stringBytes(src, i); !ok {
			return i, false
		}
	case '[':
		j := i + 1
		if j < len(src) && src[j] == ']' {
			end = j + 1
			break
		}
		for {
			v, numEnd, ok := textInteger(src, j, 0, 255)
			if j < len(src) && (src[j] == '-' || isDigit(src[j])) {
				if _, canonical := canonicalNumber(src, j); !canonical {
					return e.fail(avroDirectUnproven, i)
				}
			}
			if !ok {
				return e.fail(avroDirectInvalid, i)
			}
			e.dst = append(e.dst, byte(v))
			if numEnd >= len(src) {
				return e.fail(avroDirectUnproven, i)
			}
			j = numEnd + 1
			if src[numEnd] == ']' {
				break
			}
			if src[numEnd] != ',' {
				// Another value kind follows a number: the array is not all numbers.
				return e.fail(avroDirectUnproven, i)
			}
		}
		end = j
	default:
		return e.fail(avroDirectInvalid, i)
	}
	size := len(e.dst) - body
	if n.kind == avro.Fixed {
		if size != n.size {
			return e.fail(avroDirectInvalid, i)
		}
		return end, true
	}
	e.dst = insertZigzag(e.dst, header, int64(size))
	return end, true
}

// lengthPrefixedString encodes the string literal at src[i] as Avro string (or bytes): its
// length, then its bytes.
func (e *avroTextEncoder) lengthPrefixedString(src []byte, i int) (int, bool) {
	if i >= len(src) || src[i] != '"' {
		return e.fail(avroDirectUnproven, i)
	}
	header := len(e.dst)
	e.dst = append(e.dst, 0)
	body := len(e.dst)
	end, ok := e.stringBytes(src, i)
	if !ok {
		return i, false
	}
	e.dst = insertZigzag(e.dst, header, int64(len(e.dst)-body))
	return end, true
}

// stringBytes appends the bytes the string literal at src[i] stands for, checking it as
// canonicalString does (escapes as appendString writes them, no control character, valid UTF-8)
// and undoing its escapes.
func (e *avroTextEncoder) stringBytes(src []byte, i int) (int, bool) {
	start := i + 1
	for j := start; ; {
		if j = nextStringSpecial(src, j); j >= len(src) {
			return e.fail(avroDirectUnproven, i)
		}
		switch c := src[j]; {
		case c == '"':
			e.dst = append(e.dst, src[start:j]...)
			return j + 1, true
		case c == '\\':
			b, n := unescapeCanonical(src, j)
			if n == 0 {
				return e.fail(avroDirectUnproven, i)
			}
			e.dst = append(append(e.dst, src[start:j]...), b)
			j += n
			start = j
		case c < 0x20:
			return e.fail(avroDirectUnproven, i)
		default:
			r, size := utf8.DecodeRune(src[j:])
			if r == utf8.RuneError && size == 1 {
				return e.fail(avroDirectUnproven, i)
			}
			j += size
		}
	}
}

// unescapeCanonical decodes the escape at src[i] (a backslash) when it is one appendString
// writes (all stand for one byte), returning the byte and the escape's length; 0 otherwise.
func unescapeCanonical(src []byte, i int) (byte, int) {
	n := canonicalEscape(src, i)
	switch {
	case n == 2:
		switch c := src[i+1]; c {
		case 'b':
			return '\b', 2
		case 't':
			return '\t', 2
		case 'n':
			return '\n', 2
		case 'f':
			return '\f', 2
		case 'r':
			return '\r', 2
		default: // '"', '\\'
			return c, 2
		}
	case n == 6:
		hi, lo := src[i+4]-'0', src[i+5]
		if lo >= 'a' {
			lo = lo - 'a' + 10
		} else {
			lo -= '0'
		}
		return hi<<4 | lo, 6
	}
	return 0, 0
}

// textInteger reads the integer literal at src[i] (no fraction or exponent: those are floats in
// the value model) within [lo, hi], as jsonInteger does, and returns where it ends. "-0" is 0, as
// ParseJSON reads it.
func textInteger(src []byte, i int, lo, hi int64) (int64, int, bool) {
	j := i
	negative := j < len(src) && src[j] == '-'
	if negative {
		j++
	}
	digits := j
	var u uint64
	for j < len(src) && isDigit(src[j]) {
		d := uint64(src[j] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, j, false
		}
		u = u*10 + d
		j++
	}
	if j == digits || (src[digits] == '0' && j > digits+1) || (j < len(src) && (src[j] == '.' || src[j] == 'e' || src[j] == 'E')) {
		return 0, j, false // not an integer literal (JSON has no leading zeros)
	}
	if negative {
		if u > 1<<63 {
			return 0, j, false
		}
		v := -int64(u) // -(1<<63) wraps to math.MinInt64
		return v, j, v >= lo && v <= hi
	}
	return int64(u), j, u <= uint64(hi) && int64(u) >= lo
}

// textNumber reads the number literal at src[i] as JSONNumber reads the value ParseJSON makes of
// it: integers through int64 or uint64, others as float64.
func textNumber(src []byte, i int) (float64, int, bool) {
	j := i
	isFloat := false
	for j < len(src) {
		c := src[j]
		if c == '.' || c == 'e' || c == 'E' || c == '+' {
			isFloat = true
		} else if !isDigit(c) && c != '-' {
			break
		}
		j++
	}
	if j == i {
		return 0, j, false
	}
	if !isFloat {
		if src[i] == '-' {
			v, end, ok := textInteger(src, i, math.MinInt64, 0)
			return float64(v), end, ok
		}
		v, end, ok := textInteger(src, i, 0, math.MaxInt64)
		if !ok { // beyond int64: uint64 still
			u, err := strconv.ParseUint(string(src[i:j]), 10, 64)
			return float64(u), j, err == nil
		}
		return float64(v), end, ok
	}
	// As ParseJSON: an underflow reads as the nearest float64, an overflow fails.
	f, err := strconv.ParseFloat(string(src[i:j]), 64)
	if math.IsInf(f, 0) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
		return 0, j, false
	}
	return f, j, true
}

// jsonValueStart marks the bytes a JSON value can start with.
var jsonValueStart = func() (t [256]bool) {
	for _, c := range []byte(`{["-0123456789tfn`) {
		t[c] = true
	}
	return t
}()

// appendZigzag writes v as Avro writes an int or a long.
func appendZigzag(dst []byte, v int64) []byte {
	u := uint64(v)<<1 ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// insertZigzag writes v at dst[at], where one byte was reserved for it, moving what follows when
// v needs more.
func insertZigzag(dst []byte, at int, v int64) []byte {
	var buf [10]byte
	enc := appendZigzag(buf[:0], v)
	if len(enc) == 1 {
		dst[at] = enc[0]
		return dst
	}
	extra := len(enc) - 1
	dst = append(dst, enc[1:]...) // grow by extra bytes
	copy(dst[at+len(enc):], dst[at+1:len(dst)-extra])
	copy(dst[at:], enc)
	return dst
}
