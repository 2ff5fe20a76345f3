package postcard_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// The unsigned varint examples of docs/plugin-abi.md §2.1, both directions.
func TestUvarintSpecExamples(t *testing.T) {
	tests := []struct {
		name  string
		value uint64
		hex   string
	}{
		{"127", 127, "7F"},
		{"128", 128, "80 01"},
		{"300", 300, "AC 02"},
		{"16384", 16384, "80 80 01"},
		{"u32 max", 1<<32 - 1, "FF FF FF FF 0F"},
		{"u64 max", ^uint64(0), strings.Repeat("FF ", 9) + "01"},
		{"zero", 0, "00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.hex)
			if got := postcard.AppendUvarint(nil, tt.value); !bytes.Equal(got, want) {
				t.Fatalf("encode %d: got % X, want % X", tt.value, got, want)
			}
			got, err := postcard.DecodeUvarint64(want)
			if err != nil || got != tt.value {
				t.Fatalf("decode % X: got %d, %v; want %d", want, got, err, tt.value)
			}
		})
	}
}

func TestUint128SpecExamples(t *testing.T) {
	tests := []struct {
		name  string
		value postcard.Uint128
		hex   string
	}{
		{"zero", postcard.Uint128{}, "00"},
		{"one", postcard.Uint128{Lo: 1}, "01"},
		{"2^64", postcard.Uint128{Hi: 1}, "80 80 80 80 80 80 80 80 80 02"},
		{"2^63", postcard.Uint128{Lo: 1 << 63}, "80 80 80 80 80 80 80 80 80 01"},
		{"u128 max", postcard.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, strings.Repeat("FF ", 18) + "03"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.hex)
			if got := postcard.AppendUint128(nil, tt.value); !bytes.Equal(got, want) {
				t.Fatalf("encode %+v: got % X, want % X", tt.value, got, want)
			}
			got, err := postcard.DecodeUint128(want)
			if err != nil || got != tt.value {
				t.Fatalf("decode % X: got %+v, %v; want %+v", want, got, err, tt.value)
			}
		})
	}
}

// Non-minimal varints decode (postcard accepts them) as long as they fit
// the width and the last byte of a maximum-length varint does not overflow.
func TestUvarintAcceptsNonMinimal(t *testing.T) {
	tests := []struct {
		name   string
		hex    string
		decode func([]byte) (uint64, error)
		want   uint64
	}{
		{"u32 zero in two bytes", "80 00", decodeU32, 0},
		{"u32 one in five bytes", "81 80 80 80 00", decodeU32, 1},
		{"u32 max last byte 0F", "FF FF FF FF 0F", decodeU32, 1<<32 - 1},
		{"u64 zero in ten bytes", strings.Repeat("80 ", 9) + "00", postcard.DecodeUvarint64, 0},
		{"u64 max last byte 01", strings.Repeat("FF ", 9) + "01", postcard.DecodeUvarint64, ^uint64(0)},
		{"trailing bytes ignored", "05 FF FF", decodeU32, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(unhex(t, tt.hex))
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestUvarintRejectsOverflow(t *testing.T) {
	tests := []struct {
		name   string
		hex    string
		decode func([]byte) error
	}{
		{"u32 last byte 10", "FF FF FF FF 10", func(b []byte) error { _, err := postcard.DecodeUvarint32(b); return err }},
		{"u32 six bytes", "80 80 80 80 80 00", func(b []byte) error { _, err := postcard.DecodeUvarint32(b); return err }},
		{"u64 last byte 02", strings.Repeat("FF ", 9) + "02", func(b []byte) error { _, err := postcard.DecodeUvarint64(b); return err }},
		{"u64 eleven bytes", strings.Repeat("80 ", 10) + "00", func(b []byte) error { _, err := postcard.DecodeUvarint64(b); return err }},
		{"u128 last byte 04", strings.Repeat("FF ", 18) + "04", func(b []byte) error { _, err := postcard.DecodeUint128(b); return err }},
		{"u128 twenty bytes", strings.Repeat("80 ", 19) + "00", func(b []byte) error { _, err := postcard.DecodeUint128(b); return err }},
		{"empty", "", func(b []byte) error { _, err := postcard.DecodeUvarint64(b); return err }},
		{"continuation then end", "80", func(b []byte) error { _, err := postcard.DecodeUvarint32(b); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(unhex(t, tt.hex)); !errors.Is(err, postcard.ErrMalformed) {
				t.Fatalf("got %v, want an error wrapping ErrMalformed", err)
			}
		})
	}
}

func decodeU32(b []byte) (uint64, error) {
	v, err := postcard.DecodeUvarint32(b)
	return uint64(v), err
}

// FuzzPutVarintsMatchTheLoop: the unrolled writers AppendRawMessages uses give exactly the bytes
// binary.AppendUvarint (and the u128 loop appendUint128) give, whatever was in their room before.
func FuzzPutVarintsMatchTheLoop(f *testing.F) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 16383, 16384, 1<<32 - 1, 1 << 56, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		f.Add(v, uint64(0), byte(0))
		f.Add(v, v, byte(0xff))
		f.Add(uint64(0), v, byte(0x80))
	}
	f.Fuzz(func(t *testing.T, lo, hi uint64, fill byte) {
		room := bytes.Repeat([]byte{fill}, 19)
		n := postcard.PutUvarint(room, lo)
		if want := binary.AppendUvarint(nil, lo); !bytes.Equal(room[:n], want) {
			t.Fatalf("PutUvarint(%d) = % X, want % X", lo, room[:n], want)
		}
		room = bytes.Repeat([]byte{fill}, 19)
		v := postcard.Uint128{Hi: hi, Lo: lo}
		n = postcard.PutUint128(room, v)
		if want := postcard.AppendUint128(nil, v); !bytes.Equal(room[:n], want) {
			t.Fatalf("PutUint128(%+v) = % X, want % X", v, room[:n], want)
		}
	})
}
