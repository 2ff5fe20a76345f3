package wire09_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

func option(t testing.TB, keyKind uint8, key string, valueKind uint8, value []byte) []byte {
	t.Helper()
	b, err := wire09.AppendTLV(nil, wire09.TLVEntry{KeyKind: keyKind, Key: []byte(key), ValueKind: valueKind, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateOptions(t *testing.T) {
	u64 := make([]byte, 8)
	many := func(n int) []byte {
		var b []byte
		for i := range n {
			b = append(b, option(t, iggywire.KindString, "k"+itoa(i), iggywire.KindUint8, []byte{1})...)
		}
		return b
	}
	tests := []struct {
		name   string
		block  []byte
		status iggywire.Status // 0 = valid
		detail string
	}{
		{"empty", nil, 0, ""},
		{"golden", goldenOptionsBlock, 0, ""},
		{"1024 entries", many(1024), 0, ""},
		{"1025 entries", many(1025), iggywire.StatusOptionsBlockTooLarge, "1024"},
		{"above 100000 bytes", make([]byte, 100_001), iggywire.StatusOptionsBlockTooLarge, "100000"},
		{"raw key", option(t, iggywire.KindRaw, "k", iggywire.KindString, []byte("v")), iggywire.StatusInvalidFormat, "must be a string"},
		{"duplicate key", append(option(t, iggywire.KindString, "k", iggywire.KindUint64, u64), option(t, iggywire.KindString, "k", iggywire.KindString, []byte("v"))...),
			iggywire.StatusInvalidFormat, "duplicate"},
		{"bool of 2 bytes", []byte{2, 1, 0, 0, 0, 'k', 3, 2, 0, 0, 0, 1, 1}, iggywire.StatusInvalidFormat, "must be 1"},
		{"uint64 of 4 bytes", []byte{2, 1, 0, 0, 0, 'k', 12, 4, 0, 0, 0, 1, 1, 1, 1}, iggywire.StatusInvalidFormat, "must be 8"},
		{"value missing", []byte{2, 1, 0, 0, 0, 'k'}, iggywire.StatusInvalidFormat, "value kind"},
		{"kind zero", []byte{0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}, iggywire.StatusInvalidFormat, "reserved"},
		{"empty key", []byte{2, 0, 0, 0, 0, 2, 1, 0, 0, 0, 'v'}, iggywire.StatusInvalidFormat, "1..255"},
		{"length 256", append([]byte{2, 0, 1, 0, 0}, make([]byte, 256)...), iggywire.StatusInvalidFormat, "1..255"},
		{"value cut short", []byte{2, 1, 0, 0, 0, 'k', 2, 5, 0, 0, 0, 'v'}, iggywire.StatusInvalidFormat, "needs 5 bytes"},
	}
	for _, tt := range tests {
		_, err := wire09.ValidateOptions(tt.block)
		switch {
		case tt.status == 0 && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.status != 0 && (!errors.Is(err, tt.status) || !strings.Contains(err.Error(), tt.detail)):
			t.Errorf("%s: %v, want status %d mentioning %q", tt.name, err, tt.status, tt.detail)
		}
	}
	if _, err := wire09.AppendTLV(nil, wire09.TLVEntry{KeyKind: iggywire.KindString, Key: []byte("k"), ValueKind: iggywire.KindInt32, Value: []byte{1}}); err == nil {
		t.Error("an Int32 of 1 byte encodes")
	}
}

func TestTopicOptions(t *testing.T) {
	block, err := wire09.AppendTopicOptions(nil, wire09.TopicOptions{MessageExpiry: 5, MaxTopicSize: 6, Compression: wire09.CompressionGzip})
	if err != nil {
		t.Fatal(err)
	}
	o, err := wire09.ParseTopicOptions(block)
	if err != nil || o != (wire09.TopicOptions{MessageExpiry: 5, MaxTopicSize: 6, Compression: wire09.CompressionGzip}) {
		t.Errorf("round trip = %+v, %v", o, err)
	}
	if block, _ := wire09.AppendTopicOptions(nil, wire09.TopicOptions{Compression: wire09.CompressionNone}); len(block) != 0 {
		t.Errorf("defaults encode %d bytes, want none", len(block))
	}
	tests := []struct {
		name  string
		block []byte
		want  iggywire.Status
	}{
		{"unknown key", option(t, iggywire.KindString, "retention", iggywire.KindUint64, make([]byte, 8)), iggywire.StatusUnsupportedOptionKey},
		{"expiry as string", option(t, iggywire.KindString, "message_expiry", iggywire.KindString, []byte("7 days")), iggywire.StatusInvalidOptionValue},
		{"compression zstd", option(t, iggywire.KindString, "compression_algorithm", iggywire.KindString, []byte("zstd")), iggywire.StatusInvalidOptionValue},
		{"malformed", []byte{2, 1}, iggywire.StatusInvalidFormat},
	}
	for _, tt := range tests {
		if _, err := wire09.ParseTopicOptions(tt.block); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %d", tt.name, err, tt.want)
		}
	}
	none := option(t, iggywire.KindString, "compression_algorithm", iggywire.KindString, []byte("none"))
	if o, err := wire09.ParseTopicOptions(none); err != nil || o.Compression != wire09.CompressionNone {
		t.Errorf("compression none = %+v, %v", o, err)
	}
	if !bytes.Equal(none[:5], []byte{2, 21, 0, 0, 0}) {
		t.Errorf("key header %v", none[:5])
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
