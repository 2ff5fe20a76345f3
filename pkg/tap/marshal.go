package tap

import (
	"bytes"
	"encoding/json"
)

// Marshal is the JSON of e on one line, as every writer of events writes it (a tap's SSE data, a
// dry run's output lines, so the two compare byte for byte): compact, and with <, > and & left as
// they are, so a JSON payload's text is its bytes up to the whitespace compaction removes.
func Marshal(e *Event) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
