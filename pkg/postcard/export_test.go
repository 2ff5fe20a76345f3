package postcard

// Internal helpers exposed to the black-box tests, which check them
// against the spec's examples directly.

var (
	AppendUvarint = appendUvarint
	AppendUint128 = appendUint128
)

// DecodeUvarint32, DecodeUvarint64 and DecodeUint128 decode one varint of
// the given width from the start of b.
func DecodeUvarint32(b []byte) (uint32, error) { r := reader{buf: b}; return r.uint32() }
func DecodeUvarint64(b []byte) (uint64, error) { r := reader{buf: b}; return r.uint64() }
func DecodeUint128(b []byte) (Uint128, error)  { r := reader{buf: b}; return r.uint128() }

// DecodeBase64 decodes one header value text.
func DecodeBase64(text []byte) ([]byte, error) {
	return decodeBase64(text, func(n int) []byte { return make([]byte, n) })
}

// DecodeProducedMessagesSlow decodes b field by field only, without the plain-message fast path.
func DecodeProducedMessagesSlow(b []byte) (ProducedMessages, error) {
	slowProducedOnly = true
	defer func() { slowProducedOnly = false }()
	return DecodeProducedMessages(b)
}

// PutUvarint and PutUint128 are the room-assuming varint writers of AppendRawMessages.
var (
	PutUvarint = putUvarint
	PutUint128 = putUint128
)
