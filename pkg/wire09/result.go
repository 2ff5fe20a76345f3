package wire09

import "encoding/binary"

// AppendResultOK appends the success result section: count 0, the typed
// payload follows (§6.2).
func AppendResultOK(dst []byte) []byte { return append(dst, 0, 0, 0, 0) }

// AppendResultRejection appends a committed rejection: count 1, index 0 and
// the code. A rejection carries no payload.
func AppendResultRejection(dst []byte, code Status) []byte {
	dst = appendU32(dst, 1)
	dst = appendU32(dst, 0)
	return appendU32(dst, uint32(code))
}

// StripResult removes the result section of a result-framed body. On success
// it returns the payload that follows; on a rejection it returns the code
// (non-zero) of the first entry. A body too short for its count is an error,
// never a success.
func StripResult(body []byte) (payload []byte, rejection Status, err error) {
	if len(body) < 4 {
		return nil, 0, malformed("result section: " + itoa(len(body)) + " bytes, need a 4-byte count")
	}
	count := binary.LittleEndian.Uint32(body)
	if count == 0 {
		return body[4:], 0, nil
	}
	if uint64(len(body)-4) < uint64(count)*8 {
		return nil, 0, malformed("result section: " + itoa(int(count)) + " entries do not fit in " + itoa(len(body)-4) + " bytes")
	}
	code := Status(binary.LittleEndian.Uint32(body[8:]))
	if code == StatusOK {
		return nil, 0, malformed("result section: rejection entry with code 0")
	}
	return nil, code, nil
}
