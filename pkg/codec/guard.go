package codec

import (
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// NewDecoder and NewEncoder hand out their codec wrapped in a guard: a payload that makes it
// panic (a bug in it or in a library it calls) fails as an error wrapping panicerr.ErrPanic, so
// the pipeline drops that one message like any other it cannot decode.
type (
	guardedDecoder struct{ d Decoder }
	guardedEncoder struct{ e Encoder }
)

func guardDecoder(d Decoder, err error) (Decoder, error) {
	if err != nil {
		return nil, err
	}
	return guardedDecoder{d}, nil
}

func guardEncoder(e Encoder, err error) (Encoder, error) {
	if err != nil {
		return nil, err
	}
	return guardedEncoder{e}, nil
}

func (g guardedDecoder) Schema() postcard.Schema { return g.d.Schema() }

func (g guardedDecoder) Decode(b []byte) (p Payload, err error) {
	defer panicerr.Catch(&err)
	return g.d.Decode(b)
}

func (g guardedEncoder) Schema() postcard.Schema { return g.e.Schema() }

func (g guardedEncoder) Encode(p Payload) (b []byte, err error) {
	defer panicerr.Catch(&err)
	return g.e.Encode(p)
}
