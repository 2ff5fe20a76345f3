package iggywire_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Reference digests (the Go SDK's foreign/go/internal/hash/xxhash32_test.go, from
// twox-hash) plus the 0.8 spec's "user-42".
func TestXXH32Digests(t *testing.T) {
	tests := []struct {
		input string
		want  uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"abcd", 0xA3643705},
		{"order-key-1", 0x0D3FE0E1},
		{"0123456789abcdef", 0xC2C45B69},
		{"0123456789abcdefghijklmnopqrstuvwxyz", 0x9AA38E7E},
		{"Nobody inspects the spammish repetition", 0xE2293B2F},
		{"user-42", 0x61819a7e},
	}
	for _, tt := range tests {
		if got := iggywire.XXH32([]byte(tt.input)); got != tt.want {
			t.Errorf("XXH32(%q) = %#x, want %#x", tt.input, got, tt.want)
		}
	}
	if iggywire.XXH32(nil) != iggywire.XXH32([]byte{}) {
		t.Error("XXH32(nil) differs from XXH32(empty)")
	}
}
