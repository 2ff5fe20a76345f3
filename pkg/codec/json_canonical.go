package codec

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// PassThrough reports whether the bytes b of a stream with this schema come
// back unchanged from its Decoder followed by AppendPayloadToFFI, so that a
// sink without transforms may hand b to the plugin as it is, skipping both.
// It never allocates. A false answer only means "take the slow path": the
// check is exact for raw and text, and for json it accepts b only when it is
// the compact text AppendJSON writes (see CanonicalJSON).
func PassThrough(schema postcard.Schema, b []byte) bool {
	switch schema {
	case postcard.SchemaRaw:
		return true
	case postcard.SchemaText:
		return utf8.Valid(b)
	case postcard.SchemaJSON:
		return CanonicalJSON(b)
	}
	return false
}

// JSONTextDecoder is a Decoder whose payloads are JSON and that can write
// their text directly, without building the value model.
type JSONTextDecoder interface {
	Decoder
	// AppendJSONText appends to dst the bytes AppendPayloadToFFI writes for
	// the payload Decode(b) returns. ok is false, with dst unchanged, when
	// Decode would fail or the direct path cannot prove its bytes; the caller
	// then calls Decode.
	AppendJSONText(dst, b []byte) (out []byte, ok bool)
}

// JSONTextEncoder is an Encoder that can encode a JSON payload from its text. A source whose
// plugin produced canonical JSON uses it.
type JSONTextEncoder interface {
	Encoder
	// AppendEncodedJSONText appends to dst, for canonical text that CanonicalJSON accepts, what
	// Encode(JSONPayload(v)) returns for the v that ParseJSON(canonical) gives, without building
	// v. ok is false, with dst unchanged, when Encode would fail or the direct path cannot prove
	// its bytes; the caller then calls Encode.
	AppendEncodedJSONText(dst, canonical []byte) (out []byte, ok bool)
}

// JSONEncoder is a JSONTextEncoder that checks its input itself, so a source may hand it a JSON
// plugin's payloads without the CanonicalJSON check (the avro stream encoder).
type JSONEncoder interface {
	JSONTextEncoder
	// AppendEncodedJSON is AppendEncodedJSONText for any bytes b: ok is true only for b that
	// ParseJSON accepts (and, as it stands, that CanonicalJSON accepts), with what
	// Encode(JSONPayload(v)) returns for the v ParseJSON(b) gives.
	AppendEncodedJSON(dst, b []byte) (out []byte, ok bool)
}

// CanonicalJSON reports whether b is one JSON document that ParseJSON accepts
// and that AppendJSON writes back byte for byte: no whitespace outside
// strings, strings escaped exactly as appendString escapes them, no repeated
// key in an object, integers without a sign on zero or leading zeros, floats
// in the shortest form appendFloat writes. Documents nested deeper than
// canonicalMaxDepth, or objects with more than canonicalMaxKeys members,
// answer false (the slow path handles them). It never allocates.
func CanonicalJSON(b []byte) bool {
	if len(b) >= canonicalMaxLen {
		return false
	}
	end, ok := canonicalValue(b, 0, 0)
	return ok && end == len(b)
}

// CanonicalObjectWithout reports whether b is canonical JSON (see
// CanonicalJSON) holding an object none of whose top-level keys is one of
// quotedKeys, each given as the string literal AppendJSON writes for it
// (canonical escaping is one-to-one, so the bytes compare). Transforms that
// edit an object's text directly use it to prove their edit matches the
// decoded path. It never allocates.
func CanonicalObjectWithout(b []byte, quotedKeys [][]byte) bool {
	if len(b) == 0 || len(b) >= canonicalMaxLen || b[0] != '{' {
		return false
	}
	end, ok := canonicalMembers(b, 0, 1, quotedKeys)
	return ok && end == len(b)
}

const (
	canonicalMaxDepth = 64
	canonicalMaxKeys  = 32      // key spans of one object kept on the stack for the duplicate check
	canonicalMaxLen   = 1 << 32 // key spans are kept as 32-bit offsets
)

// canonicalValue checks the value starting at b[i] and returns where it ends.
func canonicalValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return canonicalObject(b, i, depth+1)
	case c == '[':
		return canonicalArray(b, i, depth+1)
	case c == '"':
		return canonicalString(b, i)
	case c == '-' || isDigit(c):
		return canonicalNumber(b, i)
	case c == 't':
		return canonicalLiteral(b, i, "true")
	case c == 'f':
		return canonicalLiteral(b, i, "false")
	case c == 'n':
		return canonicalLiteral(b, i, "null")
	}
	return i, false
}

func canonicalLiteral(b []byte, i int, word string) (int, bool) {
	end := i + len(word)
	return end, end <= len(b) && string(b[i:end]) == word
}

func canonicalObject(b []byte, i, depth int) (int, bool) {
	return canonicalMembers(b, i, depth, nil)
}

// canonicalMembers checks the object at b[i]; a key among forbidden fails it.
func canonicalMembers(b []byte, i, depth int, forbidden [][]byte) (int, bool) {
	if depth > canonicalMaxDepth {
		return i, false
	}
	i++ // '{'
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	// Key spans packed as from<<32|to (len(b) < 4 GiB, see CanonicalJSON),
	// and a 64-bit filter of key lengths and last bytes, so that keys are
	// only compared when the filter says they may be equal.
	var keys [canonicalMaxKeys]uint64
	var seen uint64
	n := 0
	for {
		if i >= len(b) || b[i] != '"' || n == canonicalMaxKeys {
			return i, false
		}
		end, ok := canonicalString(b, i)
		if !ok {
			return i, false
		}
		// Canonical escaping is one-to-one, so equal keys have equal bytes;
		// a repeated key would be merged by ParseJSON.
		key := b[i:end]
		bit := uint64(1) << ((uint(len(key))*7 + uint(b[end-2])) & 63)
		if seen&bit != 0 {
			for _, k := range keys[:n] {
				if from, to := int(k>>32), int(uint32(k)); to-from == len(key) && string(b[from:to]) == string(key) {
					return i, false
				}
			}
		}
		seen |= bit
		for _, f := range forbidden {
			if bytes.Equal(f, key) {
				return i, false
			}
		}
		keys[n] = uint64(i)<<32 | uint64(end)
		n++
		i = end
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = canonicalValue(b, i+1, depth); !ok || i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func canonicalArray(b []byte, i, depth int) (int, bool) {
	if depth > canonicalMaxDepth {
		return i, false
	}
	i++ // '['
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = canonicalValue(b, i, depth); !ok || i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// stringSpecial marks the bytes canonicalString must look at: the quote,
// the backslash, control characters and the bytes of non-ASCII characters.
var stringSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// nextStringSpecial returns the index of the first byte from b[i] on that stringSpecial marks, or
// len(b); plain runs are skipped 8 bytes at a time.
func nextStringSpecial(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stringSpecialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && !stringSpecial[b[i]] {
		i++
	}
	return i
}

// stringSpecialMask sets the high bit of the lowest byte of w (little
// endian) that stringSpecial marks, and maybe of bytes above it, never of
// one below: the lowest set bit is exact, since borrows only run upwards
// from a byte that matched.
func stringSpecialMask(w uint64) uint64 {
	return ((w-ones*0x20)&^w | zeroIn(w^(ones*'"')) | zeroIn(w^(ones*'\\')) | w) & highs
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// zeroIn sets the high bit of the lowest zero byte of x, and maybe of bytes above it (masked
// with highs by the caller).
func zeroIn(x uint64) uint64 { return (x - ones) & ^x }

// canonicalString checks a string literal: every byte appendString writes as
// is appears raw, every escape is the one appendString writes for its
// character, and the text is valid UTF-8 (checked here, so the callers need
// no pass of their own: outside strings only ASCII is canonical). Plain runs
// are skipped 8 bytes at a time.
func canonicalString(b []byte, i int) (int, bool) {
	i++ // opening quote
	for {
		if i = nextStringSpecial(b, i); i >= len(b) {
			return i, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			n := canonicalEscape(b, i)
			if n == 0 {
				return i, false
			}
			i += n
		case c < 0x20:
			return i, false // appendString escapes control characters
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false // invalid UTF-8: ParseJSON refuses it
			}
			i += size
		}
	}
}

// canonicalEscape returns the length of the escape at b[i] (a backslash) when
// it is the one appendString writes for its character, else 0.
func canonicalEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch b[i+1] {
	case '"', '\\', 'b', 't', 'n', 'f', 'r':
		return 2
	case 'u':
		// Only control characters without a short escape, in lowercase hex.
		if i+6 > len(b) || b[i+2] != '0' || b[i+3] != '0' || (b[i+4] != '0' && b[i+4] != '1') {
			return 0
		}
		low := b[i+5]
		var v byte
		switch {
		case low >= '0' && low <= '9':
			v = low - '0'
		case low >= 'a' && low <= 'f':
			v = low - 'a' + 10
		default:
			return 0
		}
		if escapes[(b[i+4]-'0')<<4|v] != 'u' {
			return 0
		}
		return 6
	}
	return 0
}

// canonicalNumber checks a number literal: an integer as strconv writes the
// int64 or uint64 ParseJSON makes of it, or a float as appendFloat writes it.
func canonicalNumber(b []byte, i int) (int, bool) {
	start := i
	negative := b[i] == '-'
	if negative {
		i++
	}
	digits := i
	if i >= len(b) || !isDigit(b[i]) {
		return i, false
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	intEnd := i
	isFloat := false
	if i < len(b) && b[i] == '.' {
		isFloat = true
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == 'e' {
		isFloat = true
		i++
		if i < len(b) && b[i] == '-' {
			i++
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) {
		switch b[i] {
		case ',', ']', '}':
		default:
			return i, false
		}
	}
	text := b[start:i]
	if isFloat {
		// Exponents of finite float64s have at most three digits; longer
		// text is never what appendFloat writes.
		if len(text) > 32 {
			return i, false
		}
		f, err := strconv.ParseFloat(string(text), 64) // no allocation: the conversion does not escape
		if err != nil {
			return i, false
		}
		var scratch [40]byte
		out, err := appendFloat(scratch[:0], f)
		return i, err == nil && bytes.Equal(out, text)
	}
	if negative && intEnd-digits == 1 && b[digits] == '0' {
		return i, false // "-0" is written as 0
	}
	// Digits that fit: uint64 for non-negative, down to -2^63 for negative.
	var u uint64
	for _, c := range b[digits:intEnd] {
		d := uint64(c - '0')
		if u > (^uint64(0)-d)/10 {
			return i, false
		}
		u = u*10 + d
	}
	return i, !negative || u <= 1<<63
}
