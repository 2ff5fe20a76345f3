package api

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// FixedHeaderSize is the size a fixed-width kind must have, or 0 for the
// variable-length kinds raw and string.
func FixedHeaderSize(kind uint8) int { return iggywire.KindSize(kind) }

func checkHeaderField(what string, kind uint8, b []byte) error {
	if kind < iggywire.KindRaw || kind > iggywire.KindFloat64 {
		return fmt.Errorf("header %s kind %d is not a wire kind 1..15", what, kind)
	}
	if len(b) == 0 || len(b) > MaxHeaderFieldLen {
		return fmt.Errorf("header %s is %d bytes, want 1..%d", what, len(b), MaxHeaderFieldLen)
	}
	if n := FixedHeaderSize(kind); n != 0 && len(b) != n {
		return fmt.Errorf("header %s of kind %d is %d bytes, want %d", what, kind, len(b), n)
	}
	return nil
}

// AppendUserHeaders appends the wire form of hs
// (`[key kind][u32 len][key][value kind][u32 len][value]` per entry) to dst.
// A KeyKind of 0 is written as iggywire.KindString. Errors wrap ErrInvalidMessage.
func AppendUserHeaders(dst []byte, hs []HeaderEntry) ([]byte, error) {
	start := len(dst)
	for i, h := range hs {
		keyKind := h.KeyKind
		if keyKind == 0 {
			keyKind = iggywire.KindString
		}
		if err := checkHeaderField("key", keyKind, h.Key); err != nil {
			return dst[:start], fmt.Errorf("%w: header %d: %w", ErrInvalidMessage, i, err)
		}
		if err := checkHeaderField("value", h.Kind, h.Value); err != nil {
			return dst[:start], fmt.Errorf("%w: header %d (%q): %w", ErrInvalidMessage, i, h.Key, err)
		}
		dst = append(dst, keyKind)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = append(dst, h.Kind)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h.Value)))
		dst = append(dst, h.Value...)
	}
	if n := len(dst) - start; n > MaxUserHeadersSize {
		return dst[:start], fmt.Errorf("%w: user headers take %d bytes, the limit is %d", ErrInvalidMessage, n, MaxUserHeadersSize)
	}
	return dst, nil
}

// ParseUserHeaders appends the entries encoded in b to dst. Keys and values
// alias b (no copies). It never panics; malformed input gives an error and
// dst unchanged.
func ParseUserHeaders(dst []HeaderEntry, b []byte) ([]HeaderEntry, error) {
	start := len(dst)
	for pos := 0; pos < len(b); {
		keyKind, key, next, err := readHeaderField(b, pos, "key")
		if err != nil {
			return dst[:start], err
		}
		valueKind, value, next, err := readHeaderField(b, next, "value")
		if err != nil {
			return dst[:start], err
		}
		pos = next
		dst = append(dst, HeaderEntry{Kind: valueKind, Key: key, KeyKind: keyKind, Value: value})
	}
	return dst, nil
}

// readHeaderField reads `[kind u8][u32 len][bytes]` at pos.
func readHeaderField(b []byte, pos int, what string) (kind uint8, field []byte, next int, err error) {
	if len(b)-pos < 5 {
		return 0, nil, 0, fmt.Errorf("user headers: %s at byte %d is truncated", what, pos)
	}
	kind = b[pos]
	n := binary.LittleEndian.Uint32(b[pos+1:])
	pos += 5
	if uint64(n) > uint64(len(b)-pos) {
		return 0, nil, 0, fmt.Errorf("user headers: %s at byte %d claims %d bytes, %d left", what, pos-5, n, len(b)-pos)
	}
	field = b[pos : pos+int(n) : pos+int(n)]
	if err := checkHeaderField(what, kind, field); err != nil {
		return 0, nil, 0, fmt.Errorf("user headers: %w", err)
	}
	return kind, field, pos + int(n), nil
}
