package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
)

// JSONFromGo converts a value decoded from configuration (TOML via
// BurntSushi/toml, or encoding/json, preferably with UseNumber) into the JSON
// value model: integers become int64 when negative and uint64 otherwise,
// json.Number follows ParseJSON's rules, maps become *OrderedMap with sorted
// keys (as upstream's config maps are ordered), slices become []any and
// TOML datetimes become RFC 3339 strings. NaN, infinities and other types are
// errors wrapping ErrInvalidJSON.
func JSONFromGo(v any) (any, error) {
	return jsonFromGo(v, 0)
}

// JSONNumber reads a number of the JSON value model (int64, uint64 or
// float64) as float64; ok is false for any other value.
func JSONNumber(v any) (f float64, ok bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func jsonFromGo(v any, depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", ErrInvalidJSON, MaxJSONDepth)
	}
	switch t := v.(type) {
	case nil, bool, string, uint64:
		return v, nil
	case int64:
		return signedToModel(t), nil
	case int:
		return signedToModel(int64(t)), nil
	case int8:
		return signedToModel(int64(t)), nil
	case int16:
		return signedToModel(int64(t)), nil
	case int32:
		return signedToModel(int64(t)), nil
	case uint:
		return uint64(t), nil
	case uint8:
		return uint64(t), nil
	case uint16:
		return uint64(t), nil
	case uint32:
		return uint64(t), nil
	case float32:
		return finiteFloat(float64(t))
	case float64:
		return finiteFloat(t)
	case json.Number:
		return numberFromText(string(t))
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	case *OrderedMap:
		return Clone(t), nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := jsonFromGo(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := NewOrderedMap(len(keys))
		for _, k := range keys {
			c, err := jsonFromGo(t[k], depth+1)
			if err != nil {
				return nil, err
			}
			out.Set(k, c)
		}
		return out, nil
	}
	// Other slice and map types (e.g. []map[string]any for TOML arrays of
	// tables) go through reflection.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			c, err := jsonFromGo(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		generic := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			generic[it.Key().String()] = it.Value().Interface()
		}
		return jsonFromGo(generic, depth)
	}
	return nil, fmt.Errorf("%w: cannot convert Go type %T", ErrInvalidJSON, v)
}

func signedToModel(i int64) any {
	if i < 0 {
		return i
	}
	return uint64(i)
}

func finiteFloat(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: %v cannot be represented in JSON", ErrInvalidJSON, f)
	}
	return f, nil
}
