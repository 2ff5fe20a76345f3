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
	if t, ok := e.(JSONTextEncoder); ok { // the guard keeps the source's text fast path open
		return guardedTextEncoder{guardedEncoder{e}, t}, nil
	}
	return guardedEncoder{e}, nil
}

// AppendEncodedJSONText reports a panic as "cannot encode it" (dst unchanged), so the caller
// calls Encode, which names the error.
func (g guardedTextEncoder) AppendEncodedJSONText(dst, canonical []byte) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	return g.t.AppendEncodedJSONText(dst, canonical)
}

func (g guardedDecoder) Schema() postcard.Schema { return g.d.Schema() }

func (g guardedDecoder) Decode(b []byte) (p Payload, err error) {
	defer panicerr.Catch(&err)
	return g.d.Decode(b)
}

// AppendJSONText reports a panic as "cannot write it" (dst unchanged), so the caller calls
// Decode, which names the error.
func (g guardedTextDecoder) AppendJSONText(dst, b []byte) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	return g.t.AppendJSONText(dst, b)
}

func (g guardedEncoder) Schema() postcard.Schema { return g.e.Schema() }

func (g guardedEncoder) Encode(p Payload) (b []byte, err error) {
	defer panicerr.Catch(&err)
	return g.e.Encode(p)
}
