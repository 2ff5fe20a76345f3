package codec

import (
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// NewDecoder and NewEncoder hand out their codec wrapped in a guard: a payload that makes it
// panic (a bug in it or in a library it calls) fails as an error wrapping panicerr.ErrPanic, so
// the pipeline drops that one message like any other it cannot decode.
type (
	guardedDecoder     struct{ d Decoder }
	guardedTextDecoder struct {
		guardedDecoder
		t JSONTextDecoder
	}
	guardedEncoder     struct{ e Encoder }
	guardedTextEncoder struct {
		guardedEncoder
		t JSONTextEncoder
	}
	guardedJSONEncoder struct {
		guardedTextEncoder
		j JSONEncoder
	}
)

func guardDecoder(d Decoder, err error) (Decoder, error) {
	if err != nil {
		return nil, err
	}
	if t, ok := d.(JSONTextDecoder); ok { // the guard keeps the sink's text fast path open
		return guardedTextDecoder{guardedDecoder{d}, t}, nil
	}
	return guardedDecoder{d}, nil
}

func guardEncoder(e Encoder, err error) (Encoder, error) {
	if err != nil {
		return nil, err
	}
	if j, ok := e.(JSONEncoder); ok { // the guard keeps the source's fast paths open
		return guardedJSONEncoder{guardedTextEncoder{guardedEncoder{e}, j}, j}, nil
	}
	if t, ok := e.(JSONTextEncoder); ok {
		return guardedTextEncoder{guardedEncoder{e}, t}, nil
	}
	return guardedEncoder{e}, nil
}

// AppendEncodedJSONText reports a panic as "cannot encode it" (dst unchanged), so the caller
// calls Encode, which names the error.
func (g guardedTextEncoder) AppendEncodedJSONText(dst, canonical []byte) (out []byte, ok bool) {
	defer declineOnPanic(dst, &out, &ok)
	return g.t.AppendEncodedJSONText(dst, canonical)
}

// AppendEncodedJSON is guarded as AppendEncodedJSONText is.
func (g guardedJSONEncoder) AppendEncodedJSON(dst, b []byte) (out []byte, ok bool) {
	defer declineOnPanic(dst, &out, &ok)
	return g.j.AppendEncodedJSON(dst, b)
}

// declineOnPanic, deferred, turns a panic into the answer "cannot do it" with dst unchanged.
func declineOnPanic(dst []byte, out *[]byte, ok *bool) {
	if recover() != nil {
		*out, *ok = dst, false
	}
}

func (g guardedDecoder) Schema() postcard.Schema { return g.d.Schema() }

func (g guardedDecoder) Decode(b []byte) (p Payload, err error) {
	defer panicerr.Catch(&err)
	return g.d.Decode(b)
}

// AppendJSONText reports a panic as "cannot write it" (dst unchanged), so the caller calls
// Decode, which names the error.
func (g guardedTextDecoder) AppendJSONText(dst, b []byte) (out []byte, ok bool) {
	defer declineOnPanic(dst, &out, &ok)
	return g.t.AppendJSONText(dst, b)
}

func (g guardedEncoder) Schema() postcard.Schema { return g.e.Schema() }

func (g guardedEncoder) Encode(p Payload) (b []byte, err error) {
	defer panicerr.Catch(&err)
	return g.e.Encode(p)
}
