// Package version computes upstream's numeric form of version strings (version_semver in
// /stats), shared by the plugin host and the stats shapes.
package version

import (
	"strconv"
	"strings"
)

// Semver computes upstream's numeric version (docs/plugin-abi.md §5): build
// metadata (after '+') and pre-release (after '-') are cut, at least three
// dot-separated u32 parts are needed (extras are ignored), and the value is
// the decimal of major followed by minor and patch zero-padded to at least
// three digits. ok is false when that is not possible or overflows u32,
// in which case the field is omitted.
func Semver(v string) (uint32, bool) {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return 0, false
	}
	var nums [3]uint32
	for i := range nums {
		if !isDigits(parts[i]) {
			return 0, false
		}
		n, err := strconv.ParseUint(parts[i], 10, 32)
		if err != nil {
			return 0, false
		}
		nums[i] = uint32(n)
	}
	text := strconv.FormatUint(uint64(nums[0]), 10) + pad3(nums[1]) + pad3(nums[2])
	n, err := strconv.ParseUint(text, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// isDigits reports whether s is a non-empty run of ASCII digits (Rust's u32
// parser also takes a leading '+', which upstream never meets in versions).
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func pad3(n uint32) string {
	s := strconv.FormatUint(uint64(n), 10)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}
