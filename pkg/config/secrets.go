package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaskedValue replaces a secret in API answers and log lines.
const MaskedValue = masked

// DefaultSecretKeys are the default http.secret_keys: plugin_config keys whose name contains one
// of them (in any case) hold secrets.
var DefaultSecretKeys = []string{"password", "secret", "token", "api_key", "apikey", "credentials", "private_key"}

// SecretKeys decides which plugin_config values are secrets: those of keys whose name contains
// one of the entries, compared case-insensitively, at any depth. Empty masks nothing.
type SecretKeys []string

// Match reports whether a key of that name holds a secret.
func (k SecretKeys) Match(name string) bool {
	lower := strings.ToLower(name)
	for _, s := range k {
		if s != "" && strings.Contains(lower, strings.ToLower(s)) {
			return true
		}
	}
	return false
}

// Mask returns a deep copy of v (a plugin_config table, or any JSON-like value) in which the
// value of every matching key, at any depth and inside arrays, is MaskedValue; null and ""
// are kept, as there is nothing to hide. nil stays nil.
func (k SecretKeys) Mask(v map[string]any) map[string]any {
	if v == nil {
		return nil
	}
	return k.mask(v).(map[string]any)
}

func (k SecretKeys) mask(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for key, e := range t {
			if k.Match(key) && e != nil && e != "" {
				out[key] = MaskedValue
				continue
			}
			out[key] = k.mask(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = k.mask(e)
		}
		return out
	}
	return v
}

// MaskSecrets returns a copy of c whose plugin_config has its secrets masked.
func (c Connector) MaskSecrets(k SecretKeys) Connector {
	if len(k) == 0 || c.PluginConfig == nil {
		return c
	}
	c.PluginConfig = k.Mask(c.PluginConfig)
	return c
}

// Unmask returns a copy of posted in which every MaskedValue at a matching key takes the real
// value found at the same path in the first of previous that has one there (not masked itself):
// a client that read a masked config and sent it back keeps the secrets. The paths still masked,
// for which no previous config holds a value, are returned (as plugin_config.a.b[0].password).
func (k SecretKeys) Unmask(posted map[string]any, previous ...map[string]any) (map[string]any, []string) {
	if posted == nil || len(k) == 0 {
		return posted, nil
	}
	var missing []string
	out := k.unmask(posted, nil, previous, &missing).(map[string]any)
	return out, missing
}

// pathStep is one step into a JSON-like value: a key, or an index when key is "".
type pathStep struct {
	key   string
	index int
}

func (k SecretKeys) unmask(v any, path []pathStep, previous []map[string]any, missing *[]string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for key, e := range t {
			here := append(path[:len(path):len(path)], pathStep{key: key})
			if e == MaskedValue && k.Match(key) {
				if real, ok := lookupPrevious(here, previous); ok {
					out[key] = cloneValue(real)
					continue
				}
				*missing = append(*missing, formatPath(here))
				out[key] = e
				continue
			}
			out[key] = k.unmask(e, here, previous, missing)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = k.unmask(e, append(path[:len(path):len(path)], pathStep{index: i}), previous, missing)
		}
		return out
	}
	return v
}

func lookupPrevious(path []pathStep, previous []map[string]any) (any, bool) {
	for _, prev := range previous {
		var cur any = prev
		found := prev != nil
		for _, step := range path {
			if !found {
				break
			}
			switch t := cur.(type) {
			case map[string]any:
				cur, found = t[step.key]
				found = found && step.key != ""
			case []any:
				found = step.key == "" && step.index < len(t)
				if found {
					cur = t[step.index]
				}
			default:
				found = false
			}
		}
		if found && cur != MaskedValue {
			return cur, true
		}
	}
	return nil, false
}

func formatPath(path []pathStep) string {
	var b strings.Builder
	b.WriteString("plugin_config")
	for _, step := range path {
		if step.key == "" {
			b.WriteString("[" + strconv.Itoa(step.index) + "]")
		} else {
			b.WriteString("." + step.key)
		}
	}
	return b.String()
}

// MaskJSON returns a JSON document with the value of every matching key masked, wherever it is
// (error texts quote whole config documents); compact, member order kept. Text that is not JSON
// comes back unchanged.
func (k SecretKeys) MaskJSON(doc []byte) []byte {
	var buf bytes.Buffer
	if len(k) == 0 || json.Compact(&buf, doc) != nil {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var out bytes.Buffer
	if err := k.maskTokens(dec, &out); err != nil {
		return buf.Bytes() // unreachable for compacted JSON; never leak a half-masked text
	}
	return out.Bytes()
}

// maskTokens copies one JSON value from dec to out, masking the values of matching keys.
func (k SecretKeys) maskTokens(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			out.WriteByte('{')
			for first := true; dec.More(); first = false {
				keyTok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := keyTok.(string)
				if !first {
					out.WriteByte(',')
				}
				out.Write(appendJSONString(nil, key))
				out.WriteByte(':')
				if k.Match(key) {
					var raw json.RawMessage
					if err := dec.Decode(&raw); err != nil {
						return err
					}
					if s := string(raw); s == "null" || s == `""` {
						out.Write(raw)
					} else {
						out.Write(appendJSONString(nil, MaskedValue))
					}
					continue
				}
				if err := k.maskTokens(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				if err := k.maskTokens(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			out.WriteByte(']')
		}
	case string:
		out.Write(appendJSONString(nil, t))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	default:
		return fmt.Errorf("unexpected JSON token %v", tok)
	}
	return nil
}
