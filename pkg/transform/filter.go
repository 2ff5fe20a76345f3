package transform

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// filterFields keeps or drops the top-level keys of a JSON object by
// pattern. A key listed in keep_fields always stays; any other key is kept
// iff "some pattern matches it" equals include_matching.
type filterFields struct {
	keep            map[string]struct{}
	patterns        []pattern
	includeMatching bool
}

// pattern matches a key/value pair when every part it has matches; a
// pattern with neither part matches everything.
type pattern struct {
	key   func(string) bool
	value func(any) bool
}

func newFilterFields(t table) (Transform, error) {
	keepList, err := stringList(t, "keep_fields")
	if err != nil {
		return nil, err
	}
	f := &filterFields{keep: make(map[string]struct{}, len(keepList)), includeMatching: true}
	for _, k := range keepList {
		f.keep[k] = struct{}{}
	}
	if v, ok := t["include_matching"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return nil, invalid(`"include_matching" must be a boolean, got %s`, typeName(v))
		}
		f.includeMatching = b
	}
	list, err := optionalList(t, "patterns")
	if err != nil {
		return nil, err
	}
	for i, e := range list {
		where := "patterns[" + strconv.Itoa(i) + "]"
		pt, ok := asTable(e)
		if !ok {
			return nil, invalid("%s must be a table with key_pattern and/or value_pattern, got %s", where, typeName(e))
		}
		var p pattern
		if kp := pt["key_pattern"]; kp != nil {
			if p.key, err = parseKeyPattern(kp, where+".key_pattern"); err != nil {
				return nil, err
			}
		}
		if vp := pt["value_pattern"]; vp != nil {
			if p.value, err = parseValuePattern(vp, where+".value_pattern"); err != nil {
				return nil, err
			}
		}
		f.patterns = append(f.patterns, p)
	}
	return f, nil
}

func (*filterFields) Name() string { return FilterFields }

func (f *filterFields) Apply(m *codec.Message) (bool, error) {
	if len(f.keep) == 0 && len(f.patterns) == 0 {
		return true, nil
	}
	obj := jsonObject(m)
	if obj == nil {
		return true, nil
	}
	obj.Retain(func(key string, value any) bool {
		if _, ok := f.keep[key]; ok {
			return true
		}
		return f.matches(key, value) == f.includeMatching
	})
	return true, nil
}

func (f *filterFields) matches(key string, value any) bool {
	for _, p := range f.patterns {
		if (p.key == nil || p.key(key)) && (p.value == nil || p.value(value)) {
			return true
		}
	}
	return false
}

// parseKeyPattern reads {exact|starts_with|ends_with|contains|regex = "..."}.
func parseKeyPattern(v any, where string) (func(string) bool, error) {
	tag, inner, ok := singleEntry(v)
	if !ok {
		return nil, invalid("%s must be a table with exactly one key (exact, starts_with, ends_with, contains, regex), got %s", where, typeName(v))
	}
	s, isString := inner.(string)
	if !isString {
		return nil, invalid("%s.%s must be a string, got %s", where, tag, typeName(inner))
	}
	switch tag {
	case "exact":
		return func(k string) bool { return k == s }, nil
	case "starts_with":
		return func(k string) bool { return strings.HasPrefix(k, s) }, nil
	case "ends_with":
		return func(k string) bool { return strings.HasSuffix(k, s) }, nil
	case "contains":
		return func(k string) bool { return strings.Contains(k, s) }, nil
	case "regex":
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, invalid("%s.regex: %v", where, err)
		}
		return re.MatchString, nil
	}
	return nil, invalid("%s has unknown variant %q (expected exact, starts_with, ends_with, contains or regex)", where, tag)
}

// valueUnitPatterns are the value patterns that take no argument.
var valueUnitPatterns = map[string]func(any) bool{
	"is_null":     func(v any) bool { return v == nil },
	"is_not_null": func(v any) bool { return v != nil },
	"is_string":   func(v any) bool { _, ok := v.(string); return ok },
	"is_number":   func(v any) bool { _, ok := number(v); return ok },
	"is_boolean":  func(v any) bool { _, ok := v.(bool); return ok },
	"is_object":   func(v any) bool { _, ok := v.(*codec.OrderedMap); return ok },
	"is_array":    func(v any) bool { _, ok := v.([]any); return ok },
}

// parseValuePattern reads a unit pattern written as a bare string
// ("is_null") or as a one-key table, or {equals|contains|regex|greater_than|
// less_than|between = ...}.
func parseValuePattern(v any, where string) (func(any) bool, error) {
	if name, ok := v.(string); ok {
		if match, ok := valueUnitPatterns[name]; ok {
			return match, nil
		}
		return nil, invalid("%s: unknown value pattern %q", where, name)
	}
	tag, inner, ok := singleEntry(v)
	if !ok {
		return nil, invalid("%s must be a pattern name or a table with exactly one key, got %s", where, typeName(v))
	}
	if match, ok := valueUnitPatterns[tag]; ok {
		if inner != nil {
			return nil, invalid("%s.%s takes no value", where, tag)
		}
		return match, nil
	}
	switch tag {
	case "equals":
		want, err := codec.JSONFromGo(inner)
		if err != nil {
			return nil, invalid("%s.equals: %v", where, err)
		}
		return func(v any) bool { return jsonEqual(v, want) }, nil
	case "contains", "regex":
		s, isString := inner.(string)
		if !isString {
			return nil, invalid("%s.%s must be a string, got %s", where, tag, typeName(inner))
		}
		if tag == "contains" {
			return func(v any) bool { str, ok := v.(string); return ok && strings.Contains(str, s) }, nil
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, invalid("%s.regex: %v", where, err)
		}
		return func(v any) bool { str, ok := v.(string); return ok && re.MatchString(str) }, nil
	case "greater_than", "less_than":
		limit, ok := toFloat(inner)
		if !ok {
			return nil, invalid("%s.%s must be a number, got %s", where, tag, typeName(inner))
		}
		if tag == "greater_than" {
			return func(v any) bool { c, ok := compareToFloat(v, limit); return ok && c > 0 }, nil
		}
		return func(v any) bool { c, ok := compareToFloat(v, limit); return ok && c < 0 }, nil
	case "between":
		bounds, ok := asList(inner)
		if !ok || len(bounds) != 2 {
			return nil, invalid("%s.between must be an array of two numbers [low, high], got %s", where, typeName(inner))
		}
		low, okLow := toFloat(bounds[0])
		high, okHigh := toFloat(bounds[1])
		if !okLow || !okHigh {
			return nil, invalid("%s.between must be an array of two numbers [low, high]", where)
		}
		return func(v any) bool {
			cLow, ok1 := compareToFloat(v, low)
			cHigh, ok2 := compareToFloat(v, high)
			return ok1 && ok2 && cLow >= 0 && cHigh <= 0
		}, nil
	}
	return nil, invalid("%s has unknown variant %q", where, tag)
}

// number normalises a JSON number of the model (int64, uint64, float64).
func number(v any) (any, bool) {
	switch v.(type) {
	case int64, uint64, float64:
		return v, true
	}
	return nil, false
}

// compareToFloat compares a JSON number with f by exact value (docs/architecture.md, decision 3:
// integers and floats compare by value, unlike upstream where only floats
// ever match). ok is false for non-numbers and NaN.
func compareToFloat(v any, f float64) (int, bool) {
	if math.IsNaN(f) {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		if math.IsNaN(n) {
			return 0, false
		}
		return cmpFloat(n, f), true
	case int64:
		return compareIntFloat(n, f), true
	case uint64:
		return compareUintFloat(n, f), true
	}
	return 0, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

const two63 = 9223372036854775808.0  // 2^63, exact in float64
const two64 = 18446744073709551616.0 // 2^64, exact in float64

// compareIntFloat compares without rounding i to float64, so large integers
// near 2^53 and beyond still compare exactly.
func compareIntFloat(i int64, f float64) int {
	if f >= two63 {
		return -1
	}
	if f < -two63 {
		return 1
	}
	whole := math.Trunc(f)
	if c := cmpInt(i, int64(whole)); c != 0 {
		return c
	}
	return -cmpFloat(f-whole, 0) // i equals the whole part: the fraction decides
}

func compareUintFloat(u uint64, f float64) int {
	if f < 0 {
		return 1
	}
	if f >= two64 {
		return -1
	}
	whole := math.Trunc(f)
	w := uint64(whole)
	switch {
	case u < w:
		return -1
	case u > w:
		return 1
	}
	return -cmpFloat(f-whole, 0)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// jsonEqual is deep equality on the JSON model: numbers by value across
// int64, uint64 and float64 (docs/architecture.md, decision 3), objects regardless of key order
// (as upstream's map equality), arrays element by element.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64, uint64, float64:
		return numbersEqual(x, b)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *codec.OrderedMap:
		y, ok := b.(*codec.OrderedMap)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, m := range x.Members() {
			other, ok := y.Get(m.Key)
			if !ok || !jsonEqual(m.Value, other) {
				return false
			}
		}
		return true
	}
	return false
}

func numbersEqual(a, b any) bool {
	switch y := b.(type) {
	case float64:
		c, ok := compareToFloat(a, y)
		return ok && c == 0
	case int64:
		switch x := a.(type) {
		case int64:
			return x == y
		case uint64:
			return y >= 0 && x == uint64(y)
		case float64:
			return numbersEqual(b, a)
		}
	case uint64:
		switch x := a.(type) {
		case uint64:
			return x == y
		case int64:
			return x >= 0 && uint64(x) == y
		case float64:
			return numbersEqual(b, a)
		}
	}
	return false
}
