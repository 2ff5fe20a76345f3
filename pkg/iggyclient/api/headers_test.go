package api_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// The spec's wire example (docs/iggy-protocol-0.8.md §5.2): string "k" -> string "v".
const specHeaderHex = "02010000006b020100000076"

func TestAppendUserHeadersMatchesSpecExample(t *testing.T) {
	got, err := api.AppendUserHeaders(nil, []api.HeaderEntry{
		{KeyKind: iggywire.KindString, Key: []byte("k"), Kind: iggywire.KindString, Value: []byte("v")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != specHeaderHex {
		t.Fatalf("encoded %x, want %s", got, specHeaderHex)
	}
}

func TestAppendUserHeadersTakesKeyKindZeroAsString(t *testing.T) {
	got, err := api.AppendUserHeaders(nil, []api.HeaderEntry{
		{Key: []byte("k"), Kind: iggywire.KindString, Value: []byte("v")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != specHeaderHex {
		t.Fatalf("encoded %x, want %s", got, specHeaderHex)
	}
}

func TestUserHeadersRoundTripEveryKind(t *testing.T) {
	sizes := map[uint8]int{
		iggywire.KindRaw: 3, iggywire.KindString: 5, iggywire.KindBool: 1,
		iggywire.KindInt8: 1, iggywire.KindInt16: 2, iggywire.KindInt32: 4, iggywire.KindInt64: 8, iggywire.KindInt128: 16,
		iggywire.KindUint8: 1, iggywire.KindUint16: 2, iggywire.KindUint32: 4, iggywire.KindUint64: 8, iggywire.KindUint128: 16,
		iggywire.KindFloat32: 4, iggywire.KindFloat64: 8,
	}
	var in []api.HeaderEntry
	for kind := iggywire.KindRaw; kind <= iggywire.KindFloat64; kind++ {
		value := bytes.Repeat([]byte{kind}, sizes[kind])
		in = append(in, api.HeaderEntry{KeyKind: kind, Key: value, Kind: kind, Value: value})
	}
	wire, err := api.AppendUserHeaders([]byte("prefix"), in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wire, []byte("prefix")) {
		t.Fatalf("AppendUserHeaders dropped dst's content: %q", wire[:6])
	}
	out, err := api.ParseUserHeaders(nil, wire[len("prefix"):])
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("parsed %d entries, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Kind != in[i].Kind || out[i].KeyKind != in[i].KeyKind ||
			!bytes.Equal(out[i].Key, in[i].Key) || !bytes.Equal(out[i].Value, in[i].Value) {
			t.Errorf("entry %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
}

func TestAppendUserHeadersRejects(t *testing.T) {
	str := iggywire.KindString
	tests := []struct {
		name    string
		entries []api.HeaderEntry
		wantMsg string
	}{
		{"empty key", []api.HeaderEntry{{Key: nil, Kind: str, Value: []byte("v")}}, "header key is 0 bytes"},
		{"empty value", []api.HeaderEntry{{Key: []byte("k"), Kind: str}}, "header value is 0 bytes"},
		{"value too long", []api.HeaderEntry{{Key: []byte("k"), Kind: str, Value: make([]byte, 256)}}, "header value is 256 bytes"},
		{"value kind 0", []api.HeaderEntry{{Key: []byte("k"), Kind: 0, Value: []byte("v")}}, "kind 0 is not a wire kind"},
		{"key kind 16", []api.HeaderEntry{{KeyKind: 16, Key: []byte("k"), Kind: str, Value: []byte("v")}}, "kind 16 is not a wire kind"},
		{"int32 of 3 bytes", []api.HeaderEntry{{Key: []byte("k"), Kind: iggywire.KindInt32, Value: []byte{1, 2, 3}}}, "is 3 bytes, want 4"},
		{"over 100000 bytes", manyHeaders(400), "the limit is 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := api.AppendUserHeaders(dst, tt.entries)
			if !errors.Is(err, api.ErrInvalidMessage) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want ErrInvalidMessage mentioning %q", err, tt.wantMsg)
			}
			if string(got) != "keep" {
				t.Fatalf("dst changed to %q on error", got)
			}
		})
	}
}

func manyHeaders(n int) []api.HeaderEntry {
	hs := make([]api.HeaderEntry, n)
	for i := range hs {
		hs[i] = api.HeaderEntry{Key: bytes.Repeat([]byte{'k'}, 255), Kind: iggywire.KindRaw, Value: bytes.Repeat([]byte{'v'}, 255)}
	}
	return hs
}

func TestParseUserHeadersRejects(t *testing.T) {
	tests := []struct{ name, hex, wantMsg string }{
		{"truncated key length", "02010000", "key at byte 0 is truncated"},
		{"key length beyond input", "0205000000" + "6b", "claims 5 bytes, 1 left"},
		{"missing value", "02010000006b", "value at byte 6 is truncated"},
		{"value length beyond input", "02010000006b" + "02ffffffff76", "claims 4294967295 bytes"},
		{"zero-length value", "02010000006b" + "0200000000", "value is 0 bytes"},
		{"unknown value kind", "02010000006b" + "1001000000" + "76", "kind 16"},
		{"bool of 2 bytes", "02010000006b" + "03020000000101", "is 2 bytes, want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := hex.DecodeString(tt.hex)
			if err != nil {
				t.Fatal(err)
			}
			prior := []api.HeaderEntry{{Key: []byte("x")}}
			got, err := api.ParseUserHeaders(prior, b)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.wantMsg)
			}
			if len(got) != 1 {
				t.Fatalf("dst has %d entries after an error, want the 1 it had", len(got))
			}
		})
	}
}

func TestParseUserHeadersAliasesInput(t *testing.T) {
	wire, _ := hex.DecodeString(specHeaderHex)
	hs, err := api.ParseUserHeaders(nil, wire)
	if err != nil || len(hs) != 1 {
		t.Fatalf("parse: %v, %d entries", err, len(hs))
	}
	wire[11] = 'w' // the value byte
	if string(hs[0].Value) != "w" {
		t.Fatalf("value %q does not alias the input", hs[0].Value)
	}
	if cap(hs[0].Key) != len(hs[0].Key) {
		t.Fatalf("key has spare capacity %d: an append would overwrite the input", cap(hs[0].Key)-len(hs[0].Key))
	}
}

// FuzzParseUserHeaders: parsing never panics, and whatever parses encodes
// back to exactly the same bytes.
func FuzzParseUserHeaders(f *testing.F) {
	seed, _ := hex.DecodeString(specHeaderHex)
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0x06, 4, 0, 0, 0, 1, 2, 3, 4, 0x0f, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := api.ParseUserHeaders(nil, b)
		if err != nil {
			return
		}
		again, err := api.AppendUserHeaders(nil, hs)
		if err != nil {
			if len(b) > 100_000 && strings.Contains(err.Error(), "limit") {
				return // parsing does not enforce the send-side total limit
			}
			t.Fatalf("re-encoding parsed headers failed: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed the bytes:\n in  %x\n out %x", b, again)
		}
	})
}
