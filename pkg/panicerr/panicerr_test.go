package panicerr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
)

func guarded(f func()) (err error) {
	defer panicerr.Catch(&err)
	f()
	return nil
}

//go:noinline
func indexOutOfRange(s []int, i int) int { return s[i] }

// A caught panic is an error wrapping ErrPanic that names the value and where it was raised;
// without a panic the result is untouched.
func TestCatch(t *testing.T) {
	tests := []struct {
		name    string
		f       func()
		mention []string
	}{
		{"panic with a value", func() { panic("type mismatch: cannot convert nil to map key") },
			[]string{"type mismatch: cannot convert nil to map key", "panicerr_test.TestCatch", "panicerr_test.go:"}},
		{"runtime error", func() { indexOutOfRange(nil, 3) },
			[]string{"index out of range [3] with length 0", "panicerr_test.indexOutOfRange"}},
		{"panic with an error", func() { panic(errors.New("boom")) }, []string{"boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := guarded(tt.f)
			if !errors.Is(err, panicerr.ErrPanic) {
				t.Fatalf("err = %v, want one wrapping ErrPanic", err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not mention %q", err, m)
				}
			}
		})
	}
	if err := guarded(func() {}); err != nil {
		t.Errorf("no panic: err = %v, want nil", err)
	}
}
