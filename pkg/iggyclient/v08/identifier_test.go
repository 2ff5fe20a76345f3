package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"errors"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// pipeline.md §1.1: a string that parses as a u32 (by Rust's rules) is a
// numeric id, anything else a name.
func TestParseIdentifier(t *testing.T) {
	tests := []struct {
		in       string
		wantKind iggcon.IdKind
		wantNum  uint32
	}{
		{"0", iggcon.NumericId, 0},
		{"42", iggcon.NumericId, 42},
		{"007", iggcon.NumericId, 7},
		{"+5", iggcon.NumericId, 5},
		{"4294967295", iggcon.NumericId, 4294967295},
		{"4294967296", iggcon.StringId, 0}, // overflows u32: a name
		{"-1", iggcon.StringId, 0},
		{"++5", iggcon.StringId, 0},
		{"+", iggcon.StringId, 0},
		{"0x10", iggcon.StringId, 0},
		{"1_000", iggcon.StringId, 0},
		{" 1", iggcon.StringId, 0},
		{"demo", iggcon.StringId, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, err := parseIdentifier(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if id.Kind != tt.wantKind {
				t.Fatalf("kind %d, want %d", id.Kind, tt.wantKind)
			}
			if tt.wantKind == iggcon.NumericId {
				if n, _ := id.Uint32(); n != tt.wantNum {
					t.Fatalf("id %d, want %d", n, tt.wantNum)
				}
			} else if s, _ := id.String(); s != tt.in {
				t.Fatalf("name %q, want %q", s, tt.in)
			}
		})
	}
}

func TestParseIdentifierRejectsUnusableNames(t *testing.T) {
	for _, in := range []string{"", strings.Repeat("n", 256)} {
		if _, err := parseIdentifier(in); !errors.Is(err, api.ErrInvalidIdentifier) {
			t.Errorf("parseIdentifier(%d bytes): error %v, want api.ErrInvalidIdentifier", len(in), err)
		}
	}
}
