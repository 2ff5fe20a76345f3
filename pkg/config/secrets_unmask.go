package config

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A client that read a masked config (GET .../configs/active) and sends it back keeps its
// secrets: Unmask gives every masked value its real one again. A masked value is kept only when
// everything else in plugin_config is what the earlier version holds, arrays, tables, sibling
// keys and the absence of new keys included, so a stored secret can never be sent along with a
// new host, URL, node list or any other change of where the connector connects. Changing anything
// else means sending the secrets again.

// Unmask returns a copy of posted in which every masked value (MaskedValue at a key k matches, or
// a string whose URL credentials MaskURLs masked) takes the real value at the same path in the
// first of previous that posted equals everywhere else (Differs finds no difference). When none
// does, posted comes back unchanged with the paths of its masked values (as
// plugin_config.a.b[0].password), sorted: the secrets the client must send again. A posted config
// without masked values comes back as it is.
func (k SecretKeys) Unmask(posted map[string]any, previous ...map[string]any) (map[string]any, []string) {
	if posted == nil || len(k) == 0 {
		return posted, nil
	}
	masked := k.maskedPaths(posted, nil, nil)
	if len(masked) == 0 {
		return posted, nil
	}
	for _, prev := range previous {
		if _, differs := k.Differs(posted, prev); !differs {
			out := cloneValue(posted).(map[string]any)
			k.restore(out, prev)
			return out, nil
		}
	}
	missing := make([]string, len(masked))
	for i, p := range masked {
		missing[i] = formatPath(p)
	}
	slices.Sort(missing)
	return posted, missing
}

// Differs reports whether posted differs from prev anywhere but at its masked values, and the
// path of the first difference found (keys in sorted order), as plugin_config.hosts[1]. A masked
// value matches a real value it could be the mask of: MaskedValue at a secret key matches any
// value that is neither null nor "" (what Mask shows as MaskedValue); a string with masked URL
// credentials matches the string MaskURLs turns into it. Numbers compare by value (a TOML 1.0
// and a JSON 1 are the same number).
func (k SecretKeys) Differs(posted, prev map[string]any) (string, bool) {
	if prev == nil {
		return "plugin_config", true
	}
	if path, ok := k.diff(posted, prev, nil); ok {
		return formatPath(path), true
	}
	return "", false
}

// diff returns the path of the first difference of p from q, and whether there is one.
func (k SecretKeys) diff(p, q any, path []pathStep) ([]pathStep, bool) {
	switch pt := p.(type) {
	case map[string]any:
		qt, ok := q.(map[string]any)
		if !ok {
			return path, true
		}
		keys := make([]string, 0, len(pt)+len(qt))
		for key := range pt {
			keys = append(keys, key)
		}
		for key := range qt {
			if _, ok := pt[key]; !ok {
				keys = append(keys, key) // a key the client removed
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			here := append(path[:len(path):len(path)], pathStep{key: key})
			pv, inP := pt[key]
			qv, inQ := qt[key]
			if !inP || !inQ {
				return here, true
			}
			if pv == MaskedValue && k.Match(key) {
				if qv == nil || qv == "" {
					return here, true // nothing was masked there
				}
				continue
			}
			if d, ok := k.diff(pv, qv, here); ok {
				return d, true
			}
		}
		return nil, false
	case []any:
		qt, ok := q.([]any)
		if !ok || len(qt) != len(pt) {
			return path, true
		}
		for i := range pt {
			if d, ok := k.diff(pt[i], qt[i], append(path[:len(path):len(path)], pathStep{index: i, isIndex: true})); ok {
				return d, true
			}
		}
		return nil, false
	case string:
		qs, ok := q.(string)
		if !ok {
			return path, true
		}
		if qs == pt || k.maskedURLOf(pt, qs) {
			return nil, false
		}
		return path, true
	}
	if sameNumber(p, q) || reflect.DeepEqual(p, q) {
		return nil, false
	}
	return path, true
}

// maskedURLOf reports whether s is real with its URL credentials masked.
func (k SecretKeys) maskedURLOf(s, real string) bool {
	return s != real && maskedURL(s) && k.MaskURLs(real) == s
}

// maskedURL reports whether s may hold a URL with masked credentials.
func maskedURL(s string) bool {
	return strings.Contains(s, "://") && strings.Contains(s, MaskedValue)
}

// maskedPaths lists the paths of the masked values in v.
func (k SecretKeys) maskedPaths(v any, path []pathStep, out [][]pathStep) [][]pathStep {
	switch t := v.(type) {
	case map[string]any:
		for key, e := range t {
			here := append(path[:len(path):len(path)], pathStep{key: key})
			if e == MaskedValue && k.Match(key) {
				out = append(out, here)
				continue
			}
			out = k.maskedPaths(e, here, out)
		}
	case []any:
		for i, e := range t {
			out = k.maskedPaths(e, append(path[:len(path):len(path)], pathStep{index: i, isIndex: true}), out)
		}
	case string:
		if maskedURL(t) && k.MaskURLs(t) == t {
			out = append(out, path)
		}
	}
	return out
}

// restore replaces, in out (a clone of a posted config that Differs found equal to prev), every
// masked value by the real one of prev.
func (k SecretKeys) restore(out, prev any) {
	switch t := out.(type) {
	case map[string]any:
		q := prev.(map[string]any)
		for key, e := range t {
			switch {
			case e == MaskedValue && k.Match(key):
				t[key] = cloneValue(q[key])
			default:
				if s, ok := e.(string); ok {
					if real, _ := q[key].(string); k.maskedURLOf(s, real) {
						t[key] = real
					}
					continue
				}
				k.restore(e, q[key])
			}
		}
	case []any:
		q := prev.([]any)
		for i, e := range t {
			if s, ok := e.(string); ok {
				if real, _ := q[i].(string); k.maskedURLOf(s, real) {
					t[i] = real
				}
				continue
			}
			k.restore(e, q[i])
		}
	}
}

// sameNumber reports whether a and b are numbers (int64, uint64, float64) of the same value.
func sameNumber(a, b any) bool {
	x, ok1 := numberValue(a)
	y, ok2 := numberValue(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

func numberValue(v any) (*big.Float, bool) {
	switch t := v.(type) {
	case int64:
		return new(big.Float).SetInt64(t), true
	case uint64:
		return new(big.Float).SetUint64(t), true
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, false // not numbers a config holds
		}
		return new(big.Float).SetFloat64(t), true
	}
	return nil, false
}

// pathStep is one step into a JSON-like value: a key, or an index.
type pathStep struct {
	key     string
	index   int
	isIndex bool
}

func formatPath(path []pathStep) string {
	var b strings.Builder
	b.WriteString("plugin_config")
	for _, step := range path {
		if step.isIndex {
			b.WriteString("[" + strconv.Itoa(step.index) + "]")
		} else {
			b.WriteString("." + step.key)
		}
	}
	return b.String()
}
