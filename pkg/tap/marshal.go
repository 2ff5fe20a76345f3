package tap

import (
	"bytes"
	"encoding/json"
)

// Marshal is the JSON of e on one line, as every writer of events writes it (a tap's SSE data, a
// dry run's output lines, the supervisor's fleet merge, so they compare byte for byte): compact,
// and with <, > and & left as they are in every string, so a JSON payload's text is its bytes up
// to the whitespace compaction removes, and a text payload or a header reads as written.
func Marshal(e *Event) ([]byte, error) { return encode(e) }

// quote is s as a JSON string, written as Marshal writes the strings of an Event: <, > and &
// unescaped (U+2028 and U+2029 escaped, as encoding/json always does, so the text stays
// safe to embed in JavaScript). Text payloads and string headers are rendered with it.
func quote(s string) json.RawMessage {
	b, _ := encode(s) // a string always encodes
	return b
}

// encode is v's JSON without HTML escaping and without the encoder's trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
