package transform

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

const codecJSON = postcard.SchemaJSON

// table is one decoded config table (TOML table or JSON object).
type table = map[string]any

// asTable accepts the map types TOML and JSON decoders produce.
func asTable(v any) (table, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case *codec.OrderedMap:
		out := make(table, t.Len())
		for _, m := range t.Members() {
			out[m.Key] = m.Value
		}
		return out, true
	}
	return nil, false
}

// asList accepts []any and the typed slices decoders produce (BurntSushi
// gives []map[string]any for arrays of tables).
func asList(v any) ([]any, bool) {
	if l, ok := v.([]any); ok {
		return l, true
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Slice {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// typeName describes a config value's type in error messages in config
// terms rather than Go terms.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "an integer"
	case float32, float64, json.Number:
		return "a number"
	}
	if _, ok := asTable(v); ok {
		return "a table"
	}
	if _, ok := asList(v); ok {
		return "an array"
	}
	return fmt.Sprintf("a value of Go type %T", v)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// optionalList reads key as an array; absent or null gives nil.
func optionalList(t table, key string) ([]any, error) {
	v, ok := t[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := asList(v)
	if !ok {
		return nil, invalid("%q must be an array, got %s", key, typeName(v))
	}
	return l, nil
}

// stringList reads key as an array of strings; absent or null gives nil.
func stringList(t table, key string) ([]string, error) {
	l, err := optionalList(t, key)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, invalid("%s[%d] must be a string, got %s", key, i, typeName(e))
		}
		out[i] = s
	}
	return out, nil
}

// requiredString reads key as a string that must be present.
func requiredString(t table, key, where string) (string, error) {
	v, ok := t[key]
	if !ok {
		return "", invalid("%smissing required key %q", where, key)
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("%s%q must be a string, got %s", where, key, typeName(v))
	}
	return s, nil
}

// toFloat reads a config number (any integer type, float or json.Number) as
// float64, the type upstream uses for filter thresholds.
func toFloat(v any) (float64, bool) {
	n, err := codec.JSONFromGo(v)
	if err != nil {
		return 0, false
	}
	return codec.JSONNumber(n)
}

// singleEntry reads an externally tagged enum value written as a one-key
// table ({static = ...}, {exact = "..."}).
func singleEntry(v any) (tag string, value any, ok bool) {
	t, isTable := asTable(v)
	if !isTable || len(t) != 1 {
		return "", nil, false
	}
	for k, val := range t {
		return k, val, true
	}
	return "", nil, false
}

// describe shows a config value in an error: strings quoted, other values by
// their type.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return typeName(v)
}
