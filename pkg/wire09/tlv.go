package wire09

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

func itoa(n int) string { return strconv.Itoa(n) }

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
	dst = iggywire.AppendString32(append(dst, e.KeyKind), e.Key)
	return iggywire.AppendString32(append(dst, e.ValueKind), e.Value), nil
}

// AppendOption appends a string-keyed option entry.
func AppendOption(dst []byte, key string, valueKind uint8, value []byte) ([]byte, error) {
	return AppendTLV(dst, TLVEntry{KeyKind: iggywire.KindString, Key: []byte(key), ValueKind: valueKind, Value: value})
}

// AppendOptionUint64 appends a Uint64 option.
func AppendOptionUint64(dst []byte, key string, v uint64) ([]byte, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return AppendOption(dst, key, iggywire.KindUint64, b[:])
}

func checkTLVField(field string, kind uint8, b []byte) error {
	if kind == 0 {
		return fmt.Errorf("TLV %s kind 0 is reserved: %w", field, iggywire.StatusInvalidFormat)
	}
	if len(b) == 0 || len(b) > maxTLVField {
		return fmt.Errorf("TLV %s is %d bytes, must be 1..255: %w", field, len(b), iggywire.StatusInvalidFormat)
	}
	if size := iggywire.KindSize(kind); size != 0 && len(b) != size {
		return fmt.Errorf("TLV %s of kind %d is %d bytes, must be %d: %w", field, kind, len(b), size, iggywire.StatusInvalidFormat)
	}
	return nil
}

// TLVIterator walks a TLV block without copying. Next returns false at the
// end or on the first malformed entry; Err tells which.
type TLVIterator struct {
	r iggywire.Reader
}

// NewTLVIterator iterates the entries of block.
func NewTLVIterator(block []byte) TLVIterator {
	return TLVIterator{r: iggywire.NewReader("TLV block", block)}
}

// Next returns the next entry.
func (it *TLVIterator) Next() (TLVEntry, bool) {
	if it.r.Err() != nil || it.r.Remaining() == 0 {
		return TLVEntry{}, false
	}
	var e TLVEntry
	e.KeyKind, e.Key = it.field("key")
	e.ValueKind, e.Value = it.field("value")
	if it.r.Err() != nil {
		return TLVEntry{}, false
	}
	return e, true
}

func (it *TLVIterator) field(field string) (uint8, []byte) {
	r := &it.r
	at := r.Pos()
	kind := r.U8(field + " kind")
	n := r.U32(field + " length")
	if r.Err() != nil {
		return 0, nil
	}
	if kind == 0 {
		r.Failf("%s kind 0 at byte %d is reserved", field, at)
		return 0, nil
	}
	if n == 0 || n > maxTLVField {
		r.Failf("%s length %d at byte %d, must be 1..255", field, n, at)
		return 0, nil
	}
	b := r.Take(int(n), field)
	if size := iggywire.KindSize(kind); r.Err() == nil && size != 0 && int(n) != size {
		r.Failf("%s of kind %d at byte %d is %d bytes, must be %d", field, kind, at, n, size)
	}
	return kind, b
}

// Err is the first malformed entry met, or nil.
func (it *TLVIterator) Err() error { return it.r.Err() }

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
// Limits give iggywire.StatusOptionsBlockTooLarge, the rest iggywire.StatusInvalidFormat.
func ValidateOptions(block []byte) (int, error) {
	if len(block) > MaxOptionsBytes {
		return 0, iggywire.Errorf(iggywire.StatusOptionsBlockTooLarge, "options block is "+itoa(len(block))+" bytes, at most 100000")
	}
	it := NewTLVIterator(block)
	n := 0
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		n++
		if n > MaxOptions {
			return 0, iggywire.Errorf(iggywire.StatusOptionsBlockTooLarge, "options block has more than 1024 entries")
		}
		if e.KeyKind != iggywire.KindString {
			return 0, iggywire.Malformed("option key " + strconv.Quote(string(e.Key)) + " has kind " + itoa(int(e.KeyKind)) + ", must be a string (2)")
		}
		// Blocks are small; a quadratic scan avoids allocating a set.
		dup := NewTLVIterator(block)
		for i := 1; i < n; i++ {
			prev, _ := dup.Next()
			if bytes.Equal(prev.Key, e.Key) {
				return 0, iggywire.Malformed("duplicate option key " + strconv.Quote(string(e.Key)))
			}
		}
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	return n, nil
}

// AppendOptionsPrefixed appends a response element's options: u32 length, block.
func AppendOptionsPrefixed(dst, block []byte) []byte { return iggywire.AppendString32(dst, block) }
