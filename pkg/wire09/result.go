package wire09

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// AppendResultOK appends the success result section: count 0, the typed
// payload follows (§6.2).
func AppendResultOK(dst []byte) []byte { return append(dst, 0, 0, 0, 0) }

// AppendResultRejection appends a committed rejection: count 1, index 0 and
// the code. A rejection carries no payload.
func AppendResultRejection(dst []byte, code iggywire.Status) []byte {
	dst = iggywire.AppendU32(dst, 1)
	dst = iggywire.AppendU32(dst, 0)
	return iggywire.AppendU32(dst, uint32(code))
}

// StripResult removes the result section of a result-framed body. On success
// it returns the payload that follows; on a rejection it returns the code
// (non-zero) of the first entry. A body too short for its count is an error,
// never a success.
func StripResult(body []byte) (payload []byte, rejection iggywire.Status, err error) {
	if len(body) < 4 {
		return nil, 0, iggywire.Malformed("result section: " + itoa(len(body)) + " bytes, need a 4-byte count")
	}
	count := binary.LittleEndian.Uint32(body)
	if count == 0 {
		return body[4:], 0, nil
	}
	if uint64(len(body)-4) < uint64(count)*8 {
		return nil, 0, iggywire.Malformed("result section: " + itoa(int(count)) + " entries do not fit in " + itoa(len(body)-4) + " bytes")
	}
	code := iggywire.Status(binary.LittleEndian.Uint32(body[8:]))
	if code == iggywire.StatusOK {
		return nil, 0, iggywire.Malformed("result section: rejection entry with code 0")
	}
	return nil, code, nil
}
