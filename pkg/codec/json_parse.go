package codec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth bounds the nesting of arrays and objects ParseJSON accepts, so
// hostile payloads cannot exhaust the stack. Upstream's parser has no such
// limit; real messages never come close.
const MaxJSONDepth = 10000

// ParseJSON parses one JSON document into the value model described in the
// package documentation. It follows the upstream parser (simd-json): the
// whole input must be valid UTF-8; integers that do not fit int64/uint64 and
// floats that overflow to infinity are errors; raw control characters inside
// strings are accepted; a duplicated object key keeps its first position and
// takes the last value. Errors wrap ErrInvalidJSON and name the byte offset.
func ParseJSON(b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrInvalidJSON)
	}
	p := parserPool.Get().(*jsonParser)
	defer p.release()
	p.buf, p.pos = b, 0
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, p.errorf("unexpected %q after the top-level value", p.buf[p.pos])
	}
	return v, nil
}

// jsonParser holds one parse's position plus scratch space that pooled
// parsers reuse across messages, so a typical payload costs one allocation
// per object/array and none for keys seen before.
type jsonParser struct {
	buf     []byte
	pos     int
	str     []byte            // scratch for strings with escapes
	members []Member          // stack of the members of the objects being parsed
	values  []any             // stack of the elements of the arrays being parsed
	keys    map[string]string // recently seen object keys, to share their memory
}

// maxInternedKeys bounds the key cache; it is emptied when full so it
// follows the keys of current traffic. maxInternedKeyLen skips long keys.
const (
	maxInternedKeys   = 4096
	maxInternedKeyLen = 64
)

var parserPool = sync.Pool{New: func() any { return &jsonParser{keys: make(map[string]string)} }}

func (p *jsonParser) release() {
	// Popping clears what it removes, so only an error can leave values on
	// the stacks; drop them so the pool does not keep them alive, and drop
	// stacks a huge payload grew.
	clear(p.members)
	clear(p.values)
	p.members, p.values = p.members[:0], p.values[:0]
	if cap(p.members) > maxPooledStack {
		p.members = nil
	}
	if cap(p.values) > maxPooledStack {
		p.values = nil
	}
	p.buf = nil
	parserPool.Put(p)
}

const maxPooledStack = 4096

func (p *jsonParser) internKey(b []byte) string {
	if len(b) > maxInternedKeyLen {
		return string(b)
	}
	if s, ok := p.keys[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if len(p.keys) >= maxInternedKeys {
		clear(p.keys)
	}
	s := string(b)
	p.keys[s] = s
	return s
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrInvalidJSON, p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// atTerminator reports whether the scalar that just ended is followed by
// whitespace, a structural character or the end of input, as upstream
// requires ("truex" and "1x" are errors).
func (p *jsonParser) atTerminator() bool {
	if p.pos >= len(p.buf) {
		return true
	}
	switch p.buf[p.pos] {
	case ' ', '\t', '\n', '\r', ',', ':', '[', ']', '{', '}':
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.pos >= len(p.buf) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.stringLiteral(false)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *jsonParser) literal(word string) error {
	end := p.pos + len(word)
	if end > len(p.buf) || string(p.buf[p.pos:end]) != word {
		return p.errorf("invalid literal")
	}
	p.pos = end
	if !p.atTerminator() {
		return p.errorf("invalid literal")
	}
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, p.errorf("nesting deeper than %d", MaxJSONDepth)
	}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		return &OrderedMap{}, nil
	}
	base := len(p.members)
	for {
		if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
			return nil, p.errorf("expected an object key")
		}
		key, err := p.stringLiteral(true)
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
			return nil, p.errorf("expected ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, Member{Key: key, Value: v})
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unterminated object")
		}
		switch p.buf[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			return p.popObject(base), nil
		default:
			return nil, p.errorf("expected ',' or '}' in an object")
		}
	}
}

// popObject moves the members above base off the stack into a new object.
func (p *jsonParser) popObject(base int) *OrderedMap {
	parsed := p.members[base:]
	defer func() {
		clear(parsed)
		p.members = p.members[:base]
	}()
	if len(parsed) <= indexThreshold && !hasDuplicateKey(parsed) {
		return &OrderedMap{members: slices.Clone(parsed)}
	}
	obj := &OrderedMap{members: make([]Member, 0, len(parsed))}
	for _, m := range parsed {
		obj.Set(m.Key, m.Value) // a repeated key keeps its first place and takes the last value
	}
	return obj
}

func hasDuplicateKey(members []Member) bool {
	for i := 1; i < len(members); i++ {
		for j := range i {
			if members[i].Key == members[j].Key {
				return true
			}
		}
	}
	return false
}

func (p *jsonParser) array(depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, p.errorf("nesting deeper than %d", MaxJSONDepth)
	}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	base := len(p.values)
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.values = append(p.values, v)
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unterminated array")
		}
		switch p.buf[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			elems := slices.Clone(p.values[base:])
			clear(p.values[base:])
			p.values = p.values[:base]
			return elems, nil
		default:
			return nil, p.errorf("expected ',' or ']' in an array")
		}
	}
}

// stringLiteral parses a string literal starting at the opening quote;
// object keys go through the key cache.
func (p *jsonParser) stringLiteral(isKey bool) (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, the literal's bytes are the string.
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case '"':
			var s string
			if isKey {
				s = p.internKey(p.buf[start:p.pos])
			} else {
				s = string(p.buf[start:p.pos])
			}
			p.pos++
			return s, nil
		case '\\':
			return p.escapedString(start)
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) escapedString(start int) (string, error) {
	out := append(p.str[:0], p.buf[start:p.pos]...)
	defer func() { p.str = out[:0] }()
	for p.pos < len(p.buf) {
		c := p.buf[p.pos]
		switch c {
		case '"':
			p.pos++
			return string(out), nil
		case '\\':
			if p.pos+1 >= len(p.buf) {
				return "", p.errorf("unterminated string")
			}
			esc := p.buf[p.pos+1]
			p.pos += 2
			switch esc {
			case '"', '\\', '/':
				out = append(out, esc)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, err := p.unicodeEscape()
				if err != nil {
					return "", err
				}
				out = utf8.AppendRune(out, r)
			default:
				p.pos -= 2
				return "", p.errorf("invalid escape \\%c", esc)
			}
		default:
			out = append(out, c)
			p.pos++
		}
	}
	return "", p.errorf("unterminated string")
}

// unicodeEscape reads the XXXX of a \uXXXX escape (p.pos is just after the
// 'u'), combining a surrogate pair. Lone surrogates are errors: they cannot
// be represented in the UTF-8 text the model holds.
func (p *jsonParser) unicodeEscape() (rune, error) {
	first, ok := p.hex4()
	if !ok {
		return 0, p.errorf("invalid \\u escape")
	}
	switch {
	case first >= 0xDC00 && first <= 0xDFFF:
		return 0, p.errorf("lone low surrogate \\u%04x", first)
	case first >= 0xD800 && first <= 0xDBFF:
		if p.pos+1 >= len(p.buf) || p.buf[p.pos] != '\\' || p.buf[p.pos+1] != 'u' {
			return 0, p.errorf("high surrogate \\u%04x without a low surrogate", first)
		}
		p.pos += 2
		second, ok := p.hex4()
		if !ok || second < 0xDC00 || second > 0xDFFF {
			return 0, p.errorf("high surrogate \\u%04x without a low surrogate", first)
		}
		return utf16.DecodeRune(first, second), nil
	}
	return first, nil
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.buf) {
		return 0, false
	}
	var r rune
	for _, c := range p.buf[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// maxExponentPrefix mirrors upstream's guard against absurd exponents: while
// reading the fourth and later exponent digits, a value already above it is
// an error.
const maxExponentPrefix = 0x1_0000_0000

// number parses a number literal: int64 for a negative integer, uint64 for a
// non-negative one, float64 when it has a fraction or an exponent.
func (p *jsonParser) number() (any, error) {
	start := p.pos
	negative := p.buf[p.pos] == '-'
	if negative {
		p.pos++
	}
	digits := p.pos
	if p.pos >= len(p.buf) || !isDigit(p.buf[p.pos]) {
		return nil, p.errorf("invalid number")
	}
	if p.buf[p.pos] == '0' {
		p.pos++
	} else {
		for p.pos < len(p.buf) && isDigit(p.buf[p.pos]) {
			p.pos++
		}
	}
	intEnd := p.pos
	isFloat := false
	if p.pos < len(p.buf) && p.buf[p.pos] == '.' {
		isFloat = true
		p.pos++
		if p.pos >= len(p.buf) || !isDigit(p.buf[p.pos]) {
			return nil, p.errorf("invalid number: no digit after '.'")
		}
		for p.pos < len(p.buf) && isDigit(p.buf[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(p.buf) && (p.buf[p.pos] == 'e' || p.buf[p.pos] == 'E') {
		isFloat = true
		p.pos++
		if p.pos < len(p.buf) && (p.buf[p.pos] == '+' || p.buf[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(p.buf) || !isDigit(p.buf[p.pos]) {
			return nil, p.errorf("invalid number: no digit in the exponent")
		}
		var exp int64
		for n := 0; p.pos < len(p.buf) && isDigit(p.buf[p.pos]); n++ {
			if n >= 3 && exp > maxExponentPrefix {
				return nil, p.errorf("invalid number: exponent too large")
			}
			exp = exp*10 + int64(p.buf[p.pos]-'0')
			p.pos++
		}
	}
	if !p.atTerminator() {
		return nil, p.errorf("invalid number")
	}
	if isFloat {
		text := string(p.buf[start:p.pos])
		f, err := strconv.ParseFloat(text, 64)
		if math.IsInf(f, 0) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
			return nil, p.errorf("number %s is out of the float64 range", text)
		}
		return f, nil
	}
	var u uint64
	for _, c := range p.buf[digits:intEnd] {
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return nil, p.errorf("integer %s does not fit 64 bits", p.buf[start:p.pos])
		}
		u = u*10 + d
	}
	if !negative {
		return u, nil
	}
	if u > 1<<63 {
		return nil, p.errorf("integer %s does not fit 64 bits", p.buf[start:p.pos])
	}
	return -int64(u), nil // -(1<<63) wraps to math.MinInt64, as intended
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
