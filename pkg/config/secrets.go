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
// of them (in any case) hold secrets. The credentials of a URL inside any string (userinfo,
// secret query parameters, token-like path segments) are masked as well (MaskURLs).
var DefaultSecretKeys = []string{"password", "passwd", "pwd", "passphrase", "secret", "token", "bearer", "jwt",
	"api_key", "apikey", "credential", "private_key", "client_key", "signing_key", "authorization", "auth_header",
	"access_key_id", "connection_string", "connection_uri"}

// SecretKeys decides which plugin_config values are secrets: those of keys whose name contains
// one of the entries, compared case-insensitively and with '-' read as '_' (api-key, X-Api-Key
// and API_KEY all contain api_key), at any depth. Empty masks nothing.
type SecretKeys []string

// Match reports whether a key of that name holds a secret.
func (k SecretKeys) Match(name string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }
	lower := norm(name)
	for _, s := range k {
		if s != "" && strings.Contains(lower, norm(s)) {
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
	case string:
		return k.MaskURLs(t)
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
		out.Write(appendJSONString(nil, k.MaskURLs(t)))
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
