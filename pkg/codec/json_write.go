package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// AppendJSON appends the compact JSON text of v to dst, byte-compatible with
// upstream's serializer (simd-json): no HTML escaping, control characters as
// \b \t \n \f \r or \u00xx, floats in Rust's shortest form with integral
// floats keeping ".0" (1.0, 1e21, 1.5e-7). Object members are written in
// OrderedMap order; a plain map[string]any is accepted too and written with
// sorted keys. Besides the model types it accepts the other Go integer and
// float types and json.Number. NaN and infinities are errors, as is any other
// type; errors wrap ErrInvalidJSON.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, 0)
}

// MarshalJSON returns the compact JSON text of v (see AppendJSON) in a
// slice of exactly the right size.
func MarshalJSON(v any) ([]byte, error) {
	bp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bp)
	out, err := AppendJSON((*bp)[:0], v)
	if cap(out) <= maxPooledBuffer {
		*bp = out // keep the grown buffer for the next message
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(out), nil
}

// encodeBuffers lets MarshalJSON build the text in a reused buffer and make
// one exact-size allocation instead of growing a fresh slice several times.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledBuffer keeps a rare huge payload from pinning its buffer.
const maxPooledBuffer = 1 << 20

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > MaxJSONDepth {
		return dst, fmt.Errorf("%w: nesting deeper than %d", ErrInvalidJSON, MaxJSONDepth)
	}
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if t {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, t), nil
	case int64:
		return strconv.AppendInt(dst, t, 10), nil
	case uint64:
		return strconv.AppendUint(dst, t, 10), nil
	case float64:
		return appendFloat(dst, t)
	case *OrderedMap:
		if t == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '{')
		for i, member := range t.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, member.Key)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, member.Value, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, t[k], depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case int:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(t), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(t), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(t), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(t), 10), nil
	case float32:
		return appendFloat(dst, float64(t))
	case json.Number:
		n, err := numberFromText(string(t))
		if err != nil {
			return dst, err
		}
		return appendValue(dst, n, depth)
	default:
		return dst, fmt.Errorf("%w: cannot encode Go type %T", ErrInvalidJSON, v)
	}
}

// numberFromText converts the text of a JSON number to the model's number
// type, with ParseJSON's rules.
func numberFromText(text string) (any, error) {
	v, err := ParseJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	switch v.(type) {
	case int64, uint64, float64:
		return v, nil
	}
	return nil, fmt.Errorf("%w: %q is not a number", ErrInvalidJSON, text)
}

// escapes maps each byte that needs escaping inside a JSON string to its
// short escape letter, or 'u' for the \u00xx form; 0 means "write as is".
var escapes = func() (t [256]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string literal. Invalid UTF-8 (which the
// parser never produces) is written as U+FFFD so the output stays valid.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if escapes[c] != 0 {
				dst = appendEscape(append(dst, s[start:i]...), c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			start = i + 1
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendValidString is appendString for bytes that must be valid UTF-8: false, with part of
// the literal written, when they are not.
func appendValidString(dst, s []byte) ([]byte, bool) {
	dst = append(dst, '"')
	start := 0
	for i := 0; ; {
		if i = nextStringSpecial(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, false
			}
			i += size
			continue
		}
		if escapes[c] != 0 {
			dst = appendEscape(append(dst, s[start:i]...), c)
			start = i + 1
		}
		i++
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}

// appendEscape writes the escape of an ASCII byte that escapes marks.
func appendEscape(dst []byte, c byte) []byte {
	if esc := escapes[c]; esc != 'u' {
		return append(dst, '\\', esc)
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendFloat writes f the way Rust's ryu crate formats it: the shortest
// digits that round-trip, laid out as plain decimals when the decimal
// exponent is small and as d.ddde<exp> otherwise.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("%w: %v cannot be represented in JSON", ErrInvalidJSON, f)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...), nil
		}
		return append(dst, "0.0"...), nil
	}
	// Go's shortest 'e' form is [-]d[.ddd]e±XX: take its digits and exponent.
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	ePos := 0
	for e[ePos] != 'e' {
		ePos++
	}
	var digitBuf [24]byte
	digits := append(digitBuf[:0], e[0])
	if ePos > 1 {
		digits = append(digits, e[2:ePos]...) // skip the '.'
	}
	exp, _ := strconv.Atoi(string(e[ePos+1:]))
	length := len(digits)
	kk := exp + 1 // 10^(kk-1) <= |f| < 10^kk
	switch {
	case kk >= length && kk <= 16: // 1234e7 -> 12340000000.0
		dst = append(dst, digits...)
		for range kk - length {
			dst = append(dst, '0')
		}
		dst = append(dst, '.', '0')
	case kk > 0 && kk <= 16: // 1234e-2 -> 12.34
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		dst = append(dst, digits[kk:]...)
	case kk > -5 && kk <= 0: // 1234e-6 -> 0.001234
		dst = append(dst, '0', '.')
		for range -kk {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	case length == 1: // 1e30
		dst = append(dst, digits[0], 'e')
		dst = strconv.AppendInt(dst, int64(kk-1), 10)
	default: // 1234e30 -> 1.234e33
		dst = append(dst, digits[0], '.')
		dst = append(dst, digits[1:]...)
		dst = append(dst, 'e')
		dst = strconv.AppendInt(dst, int64(kk-1), 10)
	}
	return dst, nil
}
