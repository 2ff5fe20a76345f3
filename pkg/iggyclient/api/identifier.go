package api

import (
	"fmt"
	"strconv"
)

// ParseIdentifier reads a stream or topic string the way every implementation does
// (docs/pipeline.md §1.1): a string that parses as a u32 (Rust's rules: digits, optional leading '+')
// is the numeric id n, anything else a name of 1..255 bytes (ErrInvalidIdentifier otherwise).
func ParseIdentifier(s string) (n uint32, numeric bool, err error) {
	digits := s
	if len(digits) > 1 && digits[0] == '+' {
		digits = digits[1:]
	}
	if digits != "" && digits[0] != '-' && digits[0] != '+' {
		if v, err := strconv.ParseUint(digits, 10, 32); err == nil {
			return uint32(v), true, nil
		}
	}
	if s == "" || len(s) > MaxHeaderFieldLen {
		return 0, false, fmt.Errorf("%w: a name must be 1..255 bytes", ErrInvalidIdentifier)
	}
	return 0, false, nil
}
