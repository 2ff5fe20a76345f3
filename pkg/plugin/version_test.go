package plugin_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
)

// Every example of ffi-abi.md §5, plus edge cases of the same rules.
func TestVersionSemver(t *testing.T) {
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
		{"99999999999.0.0", 0, false},
	}
	for _, tt := range tests {
		got, ok := plugin.VersionSemver(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("VersionSemver(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestNextInstanceIDIncreases(t *testing.T) {
	a := plugin.NextInstanceID()
	b := plugin.NextInstanceID()
	if a == 0 || b != a+1 {
		t.Fatalf("NextInstanceID gave %d then %d; want a non-zero id then its successor", a, b)
	}
}
