package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaskedValue replaces a secret in API answers and log lines.
const MaskedValue = masked

// DefaultSecretKeys are the default http.secret_keys: plugin_config keys whose name contains one
// of them (in any case) hold secrets. The userinfo of a URL inside any string is masked as well
// (MaskURLUserinfo).
var DefaultSecretKeys = []string{"password", "passwd", "pwd", "secret", "token", "bearer", "api_key", "apikey",
	"credential", "private_key", "auth_header", "access_key_id", "connection_string", "connection_uri"}

// urlUserinfo finds the userinfo of URLs in a text: the scheme, then everything up to the last
// '@' before the host's end, so a password holding '@' is covered whole.
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]+)@`)

// MaskURLUserinfo masks the userinfo of every URL in s: "mongodb://u:p@h" becomes
// "mongodb://u:******@h", and a userinfo with no password ("https://tok@h", a token as user name)
// is masked whole. Text without "://" comes back as it is.
func MaskURLUserinfo(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlUserinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlUserinfo.FindStringSubmatch(m)
		if user, _, hasPassword := strings.Cut(sub[2], ":"); hasPassword {
			return sub[1] + user + ":" + MaskedValue + "@"
		}
		return sub[1] + MaskedValue + "@"
	})
}

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
	case string:
		return MaskURLUserinfo(t)
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
// value found at the same path in the first of previous that has one there (not masked itself)
// and sends it to the same place: every key beside it, and beside each table above it, that names
// a connection target (targetKey: host, url, endpoint, ...) or holds a URL is unchanged. A string
// whose URL userinfo was masked takes the previous string that masks to it (so its host and path
// are the same). A client that read a masked config and sent it back keeps the secrets; one that
// points them elsewhere does not. The paths still masked are returned (as
// plugin_config.a.b[0].password), sorted.
func (k SecretKeys) Unmask(posted map[string]any, previous ...map[string]any) (map[string]any, []string) {
	if posted == nil || len(k) == 0 {
		return posted, nil
	}
	u := unmasker{keys: k, root: posted, previous: previous}
	out := u.unmask(posted, nil).(map[string]any)
	slices.Sort(u.missing)
	return out, u.missing
}

// unmasker is one Unmask call.
type unmasker struct {
	keys     SecretKeys
	root     map[string]any
	previous []map[string]any
	missing  []string
}

// pathStep is one step into a JSON-like value: a key, or an index when key is "".
type pathStep struct {
	key   string
	index int
}

func (u *unmasker) unmask(v any, path []pathStep) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for key, e := range t {
			here := append(path[:len(path):len(path)], pathStep{key: key})
			if e == MaskedValue && u.keys.Match(key) {
				out[key] = u.restore(e, here, func(prev map[string]any, real any) bool {
					return real != MaskedValue && u.sameTarget(prev, here)
				})
				continue
			}
			out[key] = u.unmask(e, here)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = u.unmask(e, append(path[:len(path):len(path)], pathStep{index: i}))
		}
		return out
	case string:
		if MaskURLUserinfo(t) == t && strings.Contains(t, MaskedValue+"@") {
			return u.restore(t, path, func(_ map[string]any, real any) bool {
				s, ok := real.(string)
				return ok && s != t && MaskURLUserinfo(s) == t
			})
		}
	}
	return v
}

// restore returns the value at path in the first previous config that accept takes, or masked
// (noting the path as missing) when none does.
func (u *unmasker) restore(masked any, path []pathStep, accept func(prev map[string]any, real any) bool) any {
	for _, prev := range u.previous {
		if real, ok := lookup(prev, path); ok && accept(prev, real) {
			return cloneValue(real)
		}
	}
	u.missing = append(u.missing, formatPath(path))
	return masked
}

// sameTarget reports whether, at every table on the way to path, the scalar keys beside the step
// that name a connection target or hold a URL are the same in posted and prev (compared masked,
// as the client saw them).
func (u *unmasker) sameTarget(prev map[string]any, path []pathStep) bool {
	for depth, step := range path {
		if step.key == "" {
			continue // array elements are not each other's targets
		}
		postedTable, _ := lookup(u.root, path[:depth])
		prevTable, _ := lookup(prev, path[:depth])
		a, _ := postedTable.(map[string]any)
		b, _ := prevTable.(map[string]any)
		for _, table := range []map[string]any{a, b} {
			for key, v := range table {
				if key == step.key || isContainer(v) || !(targetKey(key) || holdsURL(v)) {
					continue // a table or array beside it is compared when a path leads into it
				}
				if !reflect.DeepEqual(u.keys.mask(a[key]), u.keys.mask(b[key])) {
					return false
				}
			}
		}
	}
	return true
}

// targetWords name keys that say where a connector connects or writes.
var targetWords = []string{"host", "url", "uri", "endpoint", "addr", "server", "port", "bucket", "database", "dsn",
	"region", "domain", "account", "path", "target", "broker", "cluster", "tenant", "project"}

func targetKey(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range targetWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func holdsURL(v any) bool {
	s, ok := v.(string)
	return ok && strings.Contains(s, "://")
}

// lookup finds the value at path in root.
func lookup(root map[string]any, path []pathStep) (any, bool) {
	if root == nil {
		return nil, false
	}
	var cur any = root
	for _, step := range path {
		switch t := cur.(type) {
		case map[string]any:
			v, ok := t[step.key]
			if !ok || step.key == "" {
				return nil, false
			}
			cur = v
		case []any:
			if step.key != "" || step.index >= len(t) {
				return nil, false
			}
			cur = t[step.index]
		default:
			return nil, false
		}
	}
	return cur, true
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
		out.Write(appendJSONString(nil, MaskURLUserinfo(t)))
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
