package version_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/version"
)

// Every example of docs/plugin-abi.md §5 and docs/http-api.md §4.2.1, plus edge cases of the same rules.
func TestSemver(t *testing.T) {
	tests := []struct {
		in     string
		want   uint32
		wantOK bool
	}{
		{"0.5.0-edge.4", 5000, true},
		{"1.2.3", 1002003, true},
		{"0.3.0", 3000, true},
		{"2.10.7+build.5", 2010007, true},
		{"1.2", 0, false},
		{"v1.2.3", 0, false},
		{"4295.0.0", 0, false},
		{"4294.967.295", 4294967295, true},
		{"1.1000.0", 11000000, true},
		{"1.2.3.4", 1002003, true},
		{"1.2.3-rc.1+meta", 1002003, true},
		{"1.2.x", 0, false},
		{"1. 2.3", 0, false},
		{"-1.2.3", 0, false},
		{"", 0, false},
		{"0.1.12", 1012, true},
		{"1.2.3.beta", 1002003, true},
		{"4.294.967", 4294967, true},
		{"4294.967.296", 0, false},
		{"unknown", 0, false},
		{"1.2.-3", 0, false},
		{"99999999999.0.0", 0, false},
	}
	for _, tt := range tests {
		got, ok := version.Semver(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Semver(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}
