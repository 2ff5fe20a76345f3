package transform

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// buggyText is a text transform with a bug: its text form panics.
type buggyText struct{}

func (buggyText) Name() string                                { return "buggy" }
func (buggyText) Apply(*codec.Message) (bool, error)          { return true, nil }
func (buggyText) ApplyJSONText([]byte, []byte) ([]byte, bool) { panic("text form bug") }

// A panicking text form reads as "cannot prove it": the sink then takes the decoded path.
func TestTextTransformsReturnAPanicAsNotOK(t *testing.T) {
	ts := TextTransforms([]Transform{buggyText{}})
	if len(ts) != 1 {
		t.Fatalf("TextTransforms = %d transforms, want 1", len(ts))
	}
	out, ok := ts[0].ApplyJSONText([]byte("kept"), []byte(`{}`))
	if ok || string(out) != "kept" {
		t.Fatalf("ApplyJSONText = %q, %v; want dst unchanged and false", out, ok)
	}
}
