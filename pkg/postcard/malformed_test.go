package postcard_test

import (
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Every strict prefix of a vector is a truncated value: each must fail with
// ErrMalformed, never panic and never decode.
func TestTruncatedVectorsFail(t *testing.T) {
	for _, v := range specVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			full := unhex(t, v.hex)
			for n := range len(full) {
				if _, err := v.decode(full[:n]); !errors.Is(err, postcard.ErrMalformed) {
					t.Fatalf("prefix of %d/%d bytes: got %v, want ErrMalformed", n, len(full), err)
				}
			}
		})
	}
}

// Extra bytes after a complete top-level value are ignored, as postcard's
// from_bytes ignores them.
func TestTrailingBytesIgnored(t *testing.T) {
	for _, v := range specVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			got, err := v.decode(append(unhex(t, v.hex), 0xFF, 0x00, 0x13))
			if err != nil {
				t.Fatalf("decode with trailing bytes: %v", err)
			}
			assertEqual(t, got, v.want)
		})
	}
}

func decodeRaw(b []byte) error      { _, err := postcard.DecodeRawMessages(b); return err }
func decodeProduced(b []byte) error { _, err := postcard.DecodeProducedMessages(b); return err }
func decodeHeaders(b []byte) error  { _, err := postcard.DecodeHeaderMap(b); return err }
func decodeTopic(b []byte) error    { _, err := postcard.DecodeTopicMetadata(b); return err }
func decodeMsgsMeta(b []byte) error { _, err := postcard.DecodeMessagesMetadata(b); return err }
func decodeState(b []byte) error    { _, err := postcard.DecodeConnectorState(b); return err }

// header returns the hex of one HeaderMap entry written by hand: each field
// is a kind index byte, a length byte and the (possibly invalid) text.
func header(keyKind byte, keyText string, valueKind byte, valueText string) string {
	var b []byte
	b = append(append(b, keyKind, byte(len(keyText))), keyText...)
	b = append(append(b, valueKind, byte(len(valueText))), valueText...)
	return hex.EncodeToString(b)
}

func TestMalformedInputs(t *testing.T) {
	tests := []struct {
		name    string
		hex     string
		decode  func([]byte) error
		wantMsg string // a fragment the error must contain, naming the problem
	}{
		{"schema index 6", "01 73 06", decodeMsgsMeta, "unknown Schema index 6"},
		{"raw messages schema index 99", "63 00", decodeRaw, "unknown Schema index 99"},
		{"option tag 02 for id", "00 01 02 00 00 00 00 00 00", decodeProduced, "invalid Option tag 0x02"},
		{"option tag FF for headers", "00 01 00 00 00 00 FF 00 00", decodeProduced, "invalid Option tag 0xff"},
		{"option tag 02 for state", "00 00 02", decodeProduced, "invalid Option tag 0x02"},
		{"stream not UTF-8", "01 FF 01 74", decodeTopic, "invalid UTF-8"},
		{"topic is a lone continuation byte", "01 73 01 80", decodeTopic, "invalid UTF-8"},
		{"header text not UTF-8", "01 01 02 C3 28 01 04 64 67 3D 3D", decodeHeaders, "invalid UTF-8"},
		{"header kind 15", "01 " + header(15, "aw==", 1, "dg=="), decodeHeaders, "unknown HeaderKind index 15"},
		{"header value kind 2^32", "01 01 04 61 77 3D 3D 80 80 80 80 10 04 64 67 3D 3D", decodeHeaders, "overflows u32"},
		{"base64 bad alphabet", "01 " + header(1, "a-==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 nonzero trailing bits", "01 " + header(1, "ax==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 three pads", "01 " + header(1, "a===", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 pad after full quad", "01 " + header(1, "awEA=", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 too much padding", "01 " + header(1, "awE==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 pad in the middle", "01 " + header(1, "aw==dg==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 single symbol", "01 " + header(1, "a", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 line break", "01 " + header(1, "aw\n==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"base64 only padding", "01 " + header(1, "==", 1, "dg=="), decodeHeaders, "invalid base64"},
		{"partition id overflows u32", "FF FF FF FF 10 00 00", decodeMsgsMeta, "overflows u32"},
		{"offset overflows u64", "01 " + strings.Repeat("FF ", 9) + "02 00", decodeMsgsMeta, "overflows u64"},
		{"id overflows u128", "01 01 " + strings.Repeat("FF ", 18) + "04 00 00 00 00 00 00", decodeRaw, "overflows u128"},
		{"id varint too long", "01 01 " + strings.Repeat("80 ", 19) + "00 00 00 00 00 00 00", decodeRaw, "longer than u128"},
		{"string length beyond input", "05 73", decodeTopic, "length 5 exceeds the 1 remaining bytes"},
		{"payload length 2^60", "01 01 00 00 00 00 00 00 80 80 80 80 80 80 80 80 10", decodeRaw, "length 1152921504606846976 exceeds the 0 remaining bytes"},
		{"state length 2^63", "80 80 80 80 80 80 80 80 80 01", decodeState, "exceeds the 0 remaining bytes"},
		{"message count 2^60", "01 80 80 80 80 80 80 80 80 10", decodeRaw, "count 1152921504606846976 exceeds"},
		{"produced count 2^60", "01 80 80 80 80 80 80 80 80 10 00", decodeProduced, "count 1152921504606846976 exceeds"},
		{"header count 2^60", "80 80 80 80 80 80 80 80 10 01", decodeHeaders, "count 1152921504606846976 exceeds"},
		{"header count beyond entries", "02 " + header(1, "aw==", 1, "dg=="), decodeHeaders, "entry 1: key: kind: unexpected end of input"},
		{"count 2 with room for 1", "01 02 " + strings.Repeat("00 ", 13), decodeRaw, "count 2 exceeds what the 13 remaining bytes can hold"},
		{"second message cut in its id", "01 02 " + strings.Repeat("00 ", 7) + strings.Repeat("80 ", 7), decodeRaw, "message 1: id: unexpected end of input"},
		{"empty header map bytes", "", decodeHeaders, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode(unhex(t, tt.hex))
			if !errors.Is(err, postcard.ErrMalformed) {
				t.Fatalf("got %v, want an error wrapping ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

// Errors name the type, the message index and the field, so a runner can
// report which part of a plugin's batch was bad.
func TestErrorNamesTheField(t *testing.T) {
	// Two RawMessages, the second one's payload claims 9 bytes with 1 left.
	b := unhex(t, "01 02 00 00 00 00 00 00 00 00 00 00 00 00 00 09 41")
	err := decodeRaw(b)
	want := "decode RawMessages: message 1: payload: length 9 exceeds the 1 remaining bytes at offset 15: malformed postcard data"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// A count prefix far beyond the input is rejected before anything is sized
// from it: decoding allocates only a small constant amount.
func TestHugeCountsDoNotAllocate(t *testing.T) {
	inputs := map[string][]byte{
		"raw messages 2^40":      unhex(t, "01 80 80 80 80 80 80 80 80 10"+strings.Repeat(" 00", 64)),
		"produced messages 2^40": unhex(t, "01 80 80 80 80 80 20"+strings.Repeat(" 00", 64)),
		"header map 2^40":        unhex(t, "80 80 80 80 80 20"+strings.Repeat(" 00", 64)),
	}
	decoders := map[string]func([]byte) error{
		"raw messages 2^40": decodeRaw, "produced messages 2^40": decodeProduced, "header map 2^40": decodeHeaders,
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := decoders[name](in)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, postcard.ErrMalformed) {
				t.Fatalf("got %v, want ErrMalformed", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
				t.Fatalf("decoding %d bytes allocated %d bytes", len(in), grew)
			}
		})
	}
}
