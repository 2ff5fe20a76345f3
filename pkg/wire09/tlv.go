package wire09

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

// TLV kinds of user headers and options (§9).
const (
	KindRaw     uint8 = 1
	KindString  uint8 = 2
	KindBool    uint8 = 3
	KindInt8    uint8 = 4
	KindInt16   uint8 = 5
	KindInt32   uint8 = 6
	KindInt64   uint8 = 7
	KindInt128  uint8 = 8
	KindUint8   uint8 = 9
	KindUint16  uint8 = 10
	KindUint32  uint8 = 11
	KindUint64  uint8 = 12
	KindUint128 uint8 = 13
	KindFloat   uint8 = 14
	KindDouble  uint8 = 15
)

// KindSize is the exact value size of a fixed-size kind, 0 for the variable ones (raw, string).
// The kinds and their sizes are the same in 0.8's user headers.
func KindSize(kind uint8) int {
	switch kind {
	case KindBool, KindInt8, KindUint8:
		return 1
	case KindInt16, KindUint16:
		return 2
	case KindInt32, KindUint32, KindFloat:
		return 4
	case KindInt64, KindUint64, KindDouble:
		return 8
	case KindInt128, KindUint128:
		return 16
	}
	return 0
}

// Options block limits (§9).
const (
	MaxOptions      = 1024
	MaxOptionsBytes = 100_000
	maxTLVField     = 255
)

// TLVEntry is one key/value pair; Key and Value alias the block.
type TLVEntry struct {
	KeyKind   uint8
	Key       []byte
	ValueKind uint8
	Value     []byte
}

// AppendTLV appends one entry. Both fields must be 1..255 bytes and
// fixed-size kinds must have their size.
func AppendTLV(dst []byte, e TLVEntry) ([]byte, error) {
	if err := checkTLVField("key", e.KeyKind, e.Key); err != nil {
		return dst, err
	}
	if err := checkTLVField("value of "+strconv.Quote(string(e.Key)), e.ValueKind, e.Value); err != nil {
		return dst, err
	}
	dst = appendString32(append(dst, e.KeyKind), e.Key)
	return appendString32(append(dst, e.ValueKind), e.Value), nil
}

// AppendOption appends a string-keyed option entry.
func AppendOption(dst []byte, key string, valueKind uint8, value []byte) ([]byte, error) {
	return AppendTLV(dst, TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: valueKind, Value: value})
}

// AppendOptionUint64 appends a Uint64 option.
func AppendOptionUint64(dst []byte, key string, v uint64) ([]byte, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return AppendOption(dst, key, KindUint64, b[:])
}

func checkTLVField(field string, kind uint8, b []byte) error {
	if kind == 0 {
		return fmt.Errorf("TLV %s kind 0 is reserved: %w", field, StatusInvalidFormat)
	}
	if len(b) == 0 || len(b) > maxTLVField {
		return fmt.Errorf("TLV %s is %d bytes, must be 1..255: %w", field, len(b), StatusInvalidFormat)
	}
	if size := KindSize(kind); size != 0 && len(b) != size {
		return fmt.Errorf("TLV %s of kind %d is %d bytes, must be %d: %w", field, kind, len(b), size, StatusInvalidFormat)
	}
	return nil
}

// TLVIterator walks a TLV block without copying. Next returns false at the
// end or on the first malformed entry; Err tells which.
type TLVIterator struct {
	r reader
}

// NewTLVIterator iterates the entries of block.
func NewTLVIterator(block []byte) TLVIterator { return TLVIterator{r: newReader("TLV block", block)} }

// Next returns the next entry.
func (it *TLVIterator) Next() (TLVEntry, bool) {
	if it.r.err != nil || it.r.remaining() == 0 {
		return TLVEntry{}, false
	}
	var e TLVEntry
	e.KeyKind, e.Key = it.field("key")
	e.ValueKind, e.Value = it.field("value")
	if it.r.err != nil {
		return TLVEntry{}, false
	}
	return e, true
}

func (it *TLVIterator) field(field string) (uint8, []byte) {
	r := &it.r
	at := r.pos
	kind := r.u8(field + " kind")
	n := r.u32(field + " length")
	if r.err != nil {
		return 0, nil
	}
	if kind == 0 {
		r.failf("%s kind 0 at byte %d is reserved", field, at)
		return 0, nil
	}
	if n == 0 || n > maxTLVField {
		r.failf("%s length %d at byte %d, must be 1..255", field, n, at)
		return 0, nil
	}
	b := r.take(int(n), field)
	if size := KindSize(kind); r.err == nil && size != 0 && int(n) != size {
		r.failf("%s of kind %d at byte %d is %d bytes, must be %d", field, kind, at, n, size)
	}
	return kind, b
}

// Err is the first malformed entry met, or nil.
func (it *TLVIterator) Err() error { return it.r.err }

// ValidateTLV checks a user-headers block and returns its entry count.
func ValidateTLV(block []byte) (int, error) {
	it := NewTLVIterator(block)
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	return n, it.Err()
}

// ValidateOptions checks an options block (§9): well-formed entries, string
// keys only, no duplicate key, at most 1024 entries and 100 000 bytes.
// Limits give StatusOptionsBlockTooLarge, the rest StatusInvalidFormat.
func ValidateOptions(block []byte) (int, error) {
	if len(block) > MaxOptionsBytes {
		return 0, errorf(StatusOptionsBlockTooLarge, "options block is "+itoa(len(block))+" bytes, at most 100000")
	}
	it := NewTLVIterator(block)
	n := 0
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		n++
		if n > MaxOptions {
			return 0, errorf(StatusOptionsBlockTooLarge, "options block has more than 1024 entries")
		}
		if e.KeyKind != KindString {
			return 0, malformed("option key " + strconv.Quote(string(e.Key)) + " has kind " + itoa(int(e.KeyKind)) + ", must be a string (2)")
		}
		// Blocks are small; a quadratic scan avoids allocating a set.
		dup := NewTLVIterator(block)
		for i := 1; i < n; i++ {
			prev, _ := dup.Next()
			if bytes.Equal(prev.Key, e.Key) {
				return 0, malformed("duplicate option key " + strconv.Quote(string(e.Key)))
			}
		}
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	return n, nil
}

// AppendOptionsPrefixed appends a response element's options: u32 length, block.
func AppendOptionsPrefixed(dst, block []byte) []byte { return appendString32(dst, block) }
