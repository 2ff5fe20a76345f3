package codec_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// obj builds an OrderedMap from alternating keys and values.
func obj(kv ...any) *codec.OrderedMap {
	m := codec.NewOrderedMap(len(kv) / 2)
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// sameValue compares two values of the JSON model, including Go types
// (uint64 1 differs from int64 1) and object key order.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case *codec.OrderedMap:
		y, ok := b.(*codec.OrderedMap)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, m := range x.Members() {
			n := y.Members()[i]
			if m.Key != n.Key || !sameValue(m.Value, n.Value) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestParseJSONValueModel(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"null", `null`, nil},
		{"true", ` true `, true},
		{"false", "\n\tfalse\r", false},
		{"non-negative integer is uint64", `42`, uint64(42)},
		{"zero is uint64", `0`, uint64(0)},
		{"negative integer is int64", `-42`, int64(-42)},
		{"minus zero is int64 zero", `-0`, int64(0)},
		{"largest uint64", `18446744073709551615`, uint64(math.MaxUint64)},
		{"smallest int64", `-9223372036854775808`, int64(math.MinInt64)},
		{"fraction is float64", `1.5`, 1.5},
		{"integral fraction stays float64", `2.0`, 2.0},
		{"exponent is float64", `1e3`, 1000.0},
		{"negative exponent", `-25E-1`, -2.5},
		{"underflow becomes zero", `1e-400`, 0.0},
		{"string", `"héllo"`, "héllo"},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"unicode escape", `"\u00e9\u20AC"`, "é€"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"raw control character accepted as upstream does", "\"a\x01b\"", "a\x01b"},
		{"empty array", `[]`, []any{}},
		{"array", `[1,-1,1.0,"a",null,[true]]`, []any{uint64(1), int64(-1), 1.0, "a", nil, []any{true}}},
		{"empty object", `{}`, obj()},
		{"object keeps key order", `{"z":1,"a":2,"m":3}`, obj("z", uint64(1), "a", uint64(2), "m", uint64(3))},
		{"duplicate key keeps first position, last value", `{"a":1,"b":2,"a":3}`, obj("a", uint64(3), "b", uint64(2))},
		{"nested", `{"a":{"b":[{"c":null}]}}`, obj("a", obj("b", []any{obj("c", nil)}))},
		{"nested objects and arrays interleave", `{"a":[{"b":1},[2,{"c":[3]}]],"d":{"e":{}}}`,
			obj("a", []any{obj("b", uint64(1)), []any{uint64(2), obj("c", []any{uint64(3)})}}, "d", obj("e", obj()))},
		{"escaped key equals a plain key", `{"k":1,"\u006b":2}`, obj("k", uint64(2))},
		{"large object with a duplicate key", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k0":"last"}`,
			obj("k0", "last", "k1", uint64(1), "k2", uint64(2), "k3", uint64(3), "k4", uint64(4), "k5", uint64(5), "k6", uint64(6), "k7", uint64(7),
				"k8", uint64(8), "k9", uint64(9), "k10", uint64(10), "k11", uint64(11), "k12", uint64(12), "k13", uint64(13), "k14", uint64(14), "k15", uint64(15), "k16", uint64(16))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseJSON(%q): %v", tt.in, err)
			}
			if !sameValue(got, tt.want) {
				t.Fatalf("ParseJSON(%q) = %#v (%T), want %#v (%T)", tt.in, got, got, tt.want, tt.want)
			}
		})
	}
}

func TestParseJSONRejects(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty input", ``, "unexpected end of input"},
		{"only whitespace", `   `, "unexpected end of input"},
		{"trailing content", `{} x`, "after the top-level value"},
		{"two values", `1 2`, "after the top-level value"},
		{"integer above uint64", `18446744073709551616`, "does not fit 64 bits"},
		{"integer below int64", `-9223372036854775809`, "does not fit 64 bits"},
		{"float overflow", `1e400`, "out of the float64 range"},
		{"huge exponent", `1e99999999999`, "exponent too large"},
		{"leading zero", `01`, "invalid number"},
		{"leading plus", `+1`, "unexpected"},
		{"bare minus", `-`, "invalid number"},
		{"dot without digits", `1.`, "no digit after '.'"},
		{"exponent without digits", `1e+`, "no digit in the exponent"},
		{"number glued to letters", `1x`, "invalid number"},
		{"literal glued to letters", `truex`, "invalid literal"},
		{"misspelt literal", `nul`, "invalid literal"},
		{"invalid UTF-8", "\"\xff\"", "not valid UTF-8"},
		{"unterminated string", `"abc`, "unterminated string"},
		{"bad escape", `"\x"`, "invalid escape"},
		{"short unicode escape", `"\u12"`, "invalid \\u escape"},
		{"lone high surrogate", `"\ud83d"`, "without a low surrogate"},
		{"high surrogate with a non-surrogate", `"\ud83d\u0041"`, "without a low surrogate"},
		{"lone low surrogate", `"\ude00"`, "lone low surrogate"},
		{"trailing comma in array", `[1,]`, "unexpected ']'"},
		{"trailing comma in object", `{"a":1,}`, "expected an object key"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"non-string key", `{1:2}`, "expected an object key"},
		{"unterminated array", `[1`, "unterminated array"},
		{"unterminated object", `{"a":1`, "unterminated object"},
		{"single quotes", `'a'`, "unexpected"},
		{"too deep", strings.Repeat("[", codec.MaxJSONDepth+1) + strings.Repeat("]", codec.MaxJSONDepth+1), "nesting deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := codec.ParseJSON([]byte(tt.in))
			if !errors.Is(err, codec.ErrInvalidJSON) {
				t.Fatalf("ParseJSON(%q) = %#v, %v; want an error wrapping ErrInvalidJSON", tt.in, v, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("ParseJSON(%q) error %q does not mention %q", tt.in, err, tt.wantMsg)
			}
		})
	}
}

// Decoders are shared by a connector's consumers, so parsing must be safe
// from several goroutines at once (run with -race).
func TestParseJSONConcurrently(t *testing.T) {
	const doc = `{"id":1,"user":{"name":"a","tags":["x","y"]},"v":[1.5,-2]}`
	done := make(chan error)
	for range 4 {
		go func() {
			for range 500 {
				v, err := codec.ParseJSON([]byte(doc))
				if err != nil {
					done <- err
					return
				}
				if out, _ := codec.MarshalJSON(v); string(out) != doc {
					done <- errors.New("round trip gave " + string(out))
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseJSONAcceptsMaximumDepth(t *testing.T) {
	in := strings.Repeat("[", codec.MaxJSONDepth) + strings.Repeat("]", codec.MaxJSONDepth)
	if _, err := codec.ParseJSON([]byte(in)); err != nil {
		t.Fatalf("nesting of exactly MaxJSONDepth rejected: %v", err)
	}
}

// Floats are written the way Rust's ryu crate writes them, so payloads that
// pass through the runtime come out byte-identical to upstream's.
func TestAppendJSONFloatsLikeRyu(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{100, "100.0"},
		{12345.678, "12345.678"},
		{123456789, "123456789.0"},
		{1e15, "1000000000000000.0"},
		{1234567890123456, "1234567890123456.0"},
		{1e16, "1e16"},
		{1.5e16, "1.5e16"},
		{1e21, "1e21"},
		{1.2345678901234568e17, "1.2345678901234568e17"},
		{0.0001, "0.0001"},
		{0.00001, "0.00001"},
		{0.000001, "1e-6"},
		{1.5e-7, "1.5e-7"},
		{1.25e-5, "0.0000125"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e308"},
	}
	for _, tt := range tests {
		got, err := codec.AppendJSON(nil, tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("AppendJSON(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, `null`},
		{"booleans", []any{true, false}, `[true,false]`},
		{"integers", []any{int64(-7), uint64(math.MaxUint64), 3, int8(-1), uint16(9)}, `[-7,18446744073709551615,3,-1,9]`},
		{"no HTML escaping", "<a href=\"x\">&</a>", `"<a href=\"x\">&</a>"`},
		{"control characters", "\b\t\n\f\r\x00\x1f\x7f", `"\b\t\n\f\r\u0000\u001f` + "\x7f" + `"`},
		{"backslash and non-ASCII", `\é€😀`, `"\\é€😀"`},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "\"a\ufffdb\""},
		{"ordered object", obj("z", uint64(1), "a", obj(), "m", []any{}), `{"z":1,"a":{},"m":[]}`},
		{"plain map sorted", map[string]any{"b": 1, "a": "x"}, `{"a":"x","b":1}`},
		{"json.Number integer", json.Number("12"), `12`},
		{"json.Number float", json.Number("12.50"), `12.5`},
		{"float32", float32(0.5), `0.5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.AppendJSON([]byte("prefix:"), tt.in)
			if err != nil {
				t.Fatalf("AppendJSON: %v", err)
			}
			if string(got) != "prefix:"+tt.want {
				t.Fatalf("AppendJSON = %s, want prefix:%s", got, tt.want)
			}
		})
	}
}

func TestAppendJSONRejects(t *testing.T) {
	for name, v := range map[string]any{
		"NaN":              math.NaN(),
		"infinity":         []any{math.Inf(1)},
		"unsupported type": obj("ch", make(chan int)),
		"bad json.Number":  json.Number("12x"),
	} {
		if out, err := codec.AppendJSON(nil, v); !errors.Is(err, codec.ErrInvalidJSON) {
			t.Errorf("%s: AppendJSON = %q, %v; want ErrInvalidJSON", name, out, err)
		}
	}
}

func TestJSONRoundTripIsByteExact(t *testing.T) {
	for _, in := range []string{
		`{"id":1,"name":"n\u0001\"","tags":["a","b"],"price":12.5,"delta":-3,"ratio":1e-7,"ok":true,"none":null}`,
		`[1.0,-0.0,0.0,1e21,123456789012345680000.0]`,
		`"\u001f"`,
	} {
		v, err := codec.ParseJSON([]byte(in))
		if err != nil {
			t.Fatalf("ParseJSON(%s): %v", in, err)
		}
		out, err := codec.MarshalJSON(v)
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		reparsed, err := codec.ParseJSON(out)
		if err != nil || !sameValue(reparsed, v) {
			t.Fatalf("round trip of %s changed the value: %s", in, out)
		}
	}
	// Canonical compact input comes back byte for byte.
	canonical := `{"b":[1,-2,3.5,"x"],"a":{"c":null,"d":false},"e":1e21}`
	v, _ := codec.ParseJSON([]byte(canonical))
	if out, _ := codec.MarshalJSON(v); string(out) != canonical {
		t.Fatalf("MarshalJSON(ParseJSON(%s)) = %s", canonical, out)
	}
}

func TestOrderedMapKeepsInsertionOrder(t *testing.T) {
	for _, size := range []int{3, 40} { // 40 exercises the key index
		t.Run("", func(t *testing.T) {
			m := codec.NewOrderedMap(0)
			var want []string
			for i := range size {
				key := string(rune('A' + i))
				m.Set(key, uint64(i))
				want = append(want, key)
			}
			m.Set("B", "replaced") // stays in place
			if !m.Delete("A") || m.Delete("missing") {
				t.Fatal("Delete reported the wrong presence")
			}
			want = want[1:]
			m.Retain(func(key string, _ any) bool { return key != "C" })
			want = append(want[:1], want[2:]...)
			m.Set("new", nil)
			want = append(want, "new")

			if got := m.Keys(); !reflect.DeepEqual(got, want) {
				t.Fatalf("keys = %v, want %v", got, want)
			}
			if v, ok := m.Get("B"); !ok || v != "replaced" {
				t.Fatalf("Get(B) = %v, %v", v, ok)
			}
			if v, ok := m.Remove("new"); !ok || v != nil || m.Has("new") {
				t.Fatalf("Remove(new) = %v, %v; still present: %v", v, ok, m.Has("new"))
			}
			if got := m.Len(); got != len(want)-1 {
				t.Fatalf("Len = %d, want %d", got, len(want)-1)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	orig := obj("list", []any{obj("x", uint64(1))})
	c := codec.Clone(orig).(*codec.OrderedMap)
	inner, _ := c.Get("list")
	inner.([]any)[0].(*codec.OrderedMap).Set("x", "changed")
	out, _ := codec.MarshalJSON(orig)
	if string(out) != `{"list":[{"x":1}]}` {
		t.Fatalf("changing the clone changed the original: %s", out)
	}
}

func TestJSONFromGo(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"TOML integer, positive", int64(5), uint64(5)},
		{"TOML integer, negative", int64(-5), int64(-5)},
		{"Go int", 7, uint64(7)},
		{"float", 2.5, 2.5},
		{"json.Number integer", json.Number("9007199254740993"), uint64(9007199254740993)},
		{"json.Number float", json.Number("1.5"), 1.5},
		{"table becomes a sorted object", map[string]any{"b": true, "a": "x"}, obj("a", "x", "b", true)},
		{"array of tables", []map[string]any{{"k": int64(1)}}, []any{obj("k", uint64(1))}},
		{"string slice", []string{"a"}, []any{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.JSONFromGo(tt.in)
			if err != nil || !sameValue(got, tt.want) {
				t.Fatalf("JSONFromGo(%#v) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
		})
	}
	for name, bad := range map[string]any{"NaN": math.NaN(), "channel": make(chan int), "int-keyed map": map[int]any{1: 2}} {
		if _, err := codec.JSONFromGo(bad); !errors.Is(err, codec.ErrInvalidJSON) {
			t.Errorf("JSONFromGo(%s) error = %v, want ErrInvalidJSON", name, err)
		}
	}
}

func TestJSONNumber(t *testing.T) {
	tests := []struct {
		in     any
		want   float64
		wantOK bool
	}{
		{int64(-3), -3, true},
		{uint64(1 << 63), 1 << 63, true},
		{2.5, 2.5, true},
		{"7", 0, false},
		{int(7), 0, false}, // not a model value: JSONFromGo first
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := codec.JSONNumber(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("JSONNumber(%#v) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}
