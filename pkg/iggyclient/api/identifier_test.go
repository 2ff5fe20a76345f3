package api_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

// docs/pipeline.md §1.1: a string that parses as a u32 (by Rust's rules) is a numeric id, anything
// else a name.
func TestParseIdentifier(t *testing.T) {
	tests := []struct {
		in      string
		numeric bool
		n       uint32
	}{
		{"0", true, 0},
		{"42", true, 42},
		{"007", true, 7},
		{"+5", true, 5},
		{"4294967295", true, 4294967295},
		{"4294967296", false, 0}, // overflows u32: a name
		{"-1", false, 0},
		{"++5", false, 0},
		{"+", false, 0},
		{"0x10", false, 0},
		{"1_000", false, 0},
		{" 1", false, 0},
		{"demo", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, numeric, err := api.ParseIdentifier(tt.in)
			if err != nil || numeric != tt.numeric || n != tt.n {
				t.Fatalf("ParseIdentifier = %d, %v, %v; want %d, %v", n, numeric, err, tt.n, tt.numeric)
			}
		})
	}
}

func TestParseIdentifierRejectsUnusableNames(t *testing.T) {
	for _, in := range []string{"", strings.Repeat("n", 256)} {
		if _, _, err := api.ParseIdentifier(in); !errors.Is(err, api.ErrInvalidIdentifier) {
			t.Errorf("ParseIdentifier(%d bytes): error %v, want api.ErrInvalidIdentifier", len(in), err)
		}
	}
}
