package tap

import (
	"encoding/json"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Masking secret-named fields of a JSON payload, in place: the document is walked token by token
// and only the spans of the values to hide are replaced by "******", so a masked payload keeps
// its own key order, numbers, escapes and spacing, and differs from the original in the masked
// values alone. A field is masked when its name matches the secret-key list (at any depth, in
// arrays too) and its value is neither null nor "" (nothing to hide), as config.SecretKeys.Mask
// masks configs; an object or array under such a name is masked whole.

// maskedJSON is config.MaskedValue as a JSON string (it holds nothing to escape).
var maskedJSON = []byte(`"` + config.MaskedValue + `"`)

// maskJSON masks the values of secret-named fields of payload, which must be valid JSON; a
// payload with nothing to mask comes back unchanged, byte for byte. It always returns a copy.
func maskJSON(payload []byte, secrets Masker) json.RawMessage {
	if secrets == nil {
		return append(json.RawMessage(nil), payload...)
	}
	m := masker{in: payload, secrets: secrets}
	m.value(m.space(0))
	if m.out == nil {
		return append(json.RawMessage(nil), payload...)
	}
	return append(m.out, payload[m.copied:]...)
}

// masker walks one valid JSON document. out holds what is written so far (nil while nothing was
// masked) and copied how much of in it covers.
type masker struct {
	in      []byte
	secrets Masker
	out     []byte
	copied  int
}

// mask replaces in[start:end] by the masked value.
func (m *masker) mask(start, end int) {
	if m.out == nil {
		m.out = make([]byte, 0, len(m.in)+len(maskedJSON))
	}
	m.out = append(m.out, m.in[m.copied:start]...)
	m.out = append(m.out, maskedJSON...)
	m.copied = end
}

// space skips JSON whitespace from i.
func (m *masker) space(i int) int {
	for i < len(m.in) {
		switch m.in[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value walks the value at i (no whitespace before it) and returns the index after it.
func (m *masker) value(i int) int {
	if i >= len(m.in) {
		return i
	}
	switch m.in[i] {
	case '{':
		return m.object(i)
	case '[':
		i = m.space(i + 1)
		if i < len(m.in) && m.in[i] == ']' {
			return i + 1
		}
		for i < len(m.in) {
			i = m.space(m.value(i))
			if i >= len(m.in) || m.in[i] == ']' {
				return i + 1
			}
			i = m.space(i + 1) // ','
		}
		return i
	case '"':
		end, _ := m.str(i)
		return end
	}
	// A number, true, false or null: up to the next delimiter.
	for i < len(m.in) {
		switch m.in[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// object walks the object at i, masking the values of secret-named members.
func (m *masker) object(i int) int {
	i = m.space(i + 1)
	if i < len(m.in) && m.in[i] == '}' {
		return i + 1
	}
	for i < len(m.in) {
		keyEnd, escaped := m.str(i)
		secret := m.secret(m.in[i:keyEnd], escaped)
		start := m.space(m.space(keyEnd) + 1) // past ':'
		end := m.value(start)
		if secret && !empty(m.in[start:end]) {
			m.mask(start, end)
		}
		i = m.space(end)
		if i >= len(m.in) || m.in[i] == '}' {
			return i + 1
		}
		i = m.space(i + 1) // ','
	}
	return i
}

// str returns the index after the string literal at i and whether it holds an escape.
func (m *masker) str(i int) (int, bool) {
	escaped := false
	for i++; i < len(m.in); i++ {
		switch m.in[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return i, escaped
}

// secret reports whether the member named by the string literal lit is a secret.
func (m *masker) secret(lit []byte, escaped bool) bool {
	if len(lit) < 2 {
		return false
	}
	if !escaped {
		return m.secrets.Match(string(lit[1 : len(lit)-1]))
	}
	var name string
	if json.Unmarshal(lit, &name) != nil {
		return false
	}
	return m.secrets.Match(name)
}

// empty reports whether a value's text is null or "": nothing to hide.
func empty(v []byte) bool { return string(v) == "null" || string(v) == `""` }
