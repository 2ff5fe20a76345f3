package wire09

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// Ack levels (§9).
const (
	AckNone   uint8 = 0
	AckQuorum uint8 = 1
)

func readAck(r *iggywire.Reader) uint8 {
	a := r.U8("ack")
	if r.Err() == nil && a > AckQuorum {
		r.Failf("ack level %d is not 0 or 1", a)
	}
	return a
}

// DecodeIdentifier decodes a body that is exactly one identifier (GetStream).
func DecodeIdentifier(body []byte) (iggywire.Identifier, error) {
	r := iggywire.NewReader("identifier", body)
	id := r.Identifier("identifier")
	return id, r.End()
}
