package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Environment values arrive as plain text. Upstream guesses a type from the
// text alone and then fails when the guess does not fit the field (a password
// "123456" becomes a number). We follow the spec's recommended rule instead:
// keep the raw text and coerce it to the type of the field it sets.

// splitEnvArray reads the bracket syntax `[a, "b", c]`. ok is false when the
// value is not bracketed. Commas inside double quotes do not split.
func splitEnvArray(value string) (items []string, ok bool) {
	v := strings.TrimSpace(value)
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if strings.TrimSpace(inner) == "" {
		return []string{}, true
	}
	var current strings.Builder
	inQuotes := false
	flush := func() {
		item := strings.TrimSpace(current.String())
		item = strings.TrimPrefix(item, `"`)
		item = strings.TrimSuffix(item, `"`)
		items = append(items, item)
		current.Reset()
	}
	for _, r := range inner {
		switch {
		case r == '"':
			inQuotes = !inQuotes
			current.WriteRune(r)
		case r == ',' && !inQuotes:
			flush()
		default:
			current.WriteRune(r)
		}
	}
	flush()
	return items, true
}

// splitPathList reads a comma-separated list of paths, dropping blank items.
func splitPathList(value string) []string {
	var out []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// joinEnvArray renders items in the bracket syntax splitEnvArray reads.
func joinEnvArray(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = `"` + it + `"`
	}
	return "[" + strings.Join(quoted, ",") + "]"
}

func parseEnvBool(value string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, got %q", value)
}

func parseEnvUint(value string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(value), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("expected an unsigned %d-bit integer, got %q", bits, value)
	}
	return n, nil
}

// guessEnvJSON types a value the way upstream does when there is no target
// type (plugin_config keys): bracket array, bool, integer, finite float, else
// string. The result uses the JSON-like Go types of this package.
func guessEnvJSON(value string) any {
	if items, ok := splitEnvArray(value); ok {
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = guessEnvJSON(it)
		}
		return out
	}
	if b, err := parseEnvBool(value); err == nil {
		return b
	}
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		return n
	}
	if n, err := strconv.ParseUint(value, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(value, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return value
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
