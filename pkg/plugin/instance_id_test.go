package plugin_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
)

func TestNextInstanceIDIncreases(t *testing.T) {
	a := plugin.NextInstanceID()
	b := plugin.NextInstanceID()
	if a == 0 || b != a+1 {
		t.Fatalf("NextInstanceID gave %d then %d; want a non-zero id then its successor", a, b)
	}
}
