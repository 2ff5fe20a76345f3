package transform

import (
	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// TextTransform is a Transform that can also edit the JSON text of a payload
// directly, so a sink can skip decoding and re-encoding it.
type TextTransform interface {
	Transform
	// ApplyJSONText appends to dst the payload text that decoding src,
	// Apply and codec.AppendJSON would give, byte for byte, and keeps the
	// message. ok is false, with dst unchanged, when it cannot prove that for
	// this src (not canonical JSON, or an edit the text form does not do);
	// the caller then takes the decoded path.
	ApplyJSONText(dst, src []byte) (out []byte, ok bool)
}

// TextTransforms returns ts as TextTransforms when every one of them is one
// (and there is at least one), else nil.
func TextTransforms(ts []Transform) []TextTransform {
	if len(ts) == 0 {
		return nil
	}
	out := make([]TextTransform, 0, len(ts))
	for _, t := range ts {
		tt, ok := t.(TextTransform)
		if !ok {
			return nil
		}
		out = append(out, guardedText{tt})
	}
	return out
}

// guardedText reports a panic of a text form as "cannot prove it" (dst unchanged), so the
// message takes the decoded path, where Run turns a panic into that message's failure.
type guardedText struct{ TextTransform }

func (g guardedText) ApplyJSONText(dst, src []byte) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	return g.TextTransform.ApplyJSONText(dst, src)
}

// addFieldsText is what add_fields needs to append its members to an
// object's text: each key's string literal and, for static values, the
// value's text. ok is false when the configuration has something the text
// form does not do (a key set twice, whose second value would replace the
// first in place).
type addFieldsText struct {
	quotedKeys [][]byte
	static     [][]byte // nil entry: a computed value, written per message
	ok         bool
}

func newAddFieldsText(fields []field) addFieldsText {
	t := addFieldsText{ok: true}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.key] {
			t.ok = false
		}
		seen[f.key] = true
		key, _ := codec.AppendJSON(nil, f.key)
		t.quotedKeys = append(t.quotedKeys, key)
		var static []byte
		if f.value.computed == "" {
			var err error
			if static, err = codec.AppendJSON(nil, f.value.static); err != nil {
				t.ok = false
			}
		}
		t.static = append(t.static, static)
	}
	return t
}

// ApplyJSONText implements TextTransform: on a canonical object without any
// of the keys, Apply appends each key at the end, in order.
func (a *addFields) ApplyJSONText(dst, src []byte) ([]byte, bool) {
	if !a.text.ok || !codec.CanonicalObjectWithout(src, a.text.quotedKeys) {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, src[:len(src)-1]...)
	for i, f := range a.fields {
		if i > 0 || len(src) > 2 { // "{}" has no member to follow
			dst = append(dst, ',')
		}
		dst = append(dst, a.text.quotedKeys[i]...)
		dst = append(dst, ':')
		if static := a.text.static[i]; static != nil {
			dst = append(dst, static...)
			continue
		}
		var err error
		if dst, err = codec.AppendJSON(dst, f.value.produce()); err != nil {
			return dst[:start], false
		}
	}
	return append(dst, '}'), true
}
