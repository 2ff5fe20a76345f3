package config_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// FuzzMarshalYAML: whatever JSON value plugin_config holds, the YAML we write parses back to the
// same value with go.yaml.in/yaml/v3 and with go.yaml.in/yaml/v2 (YAML 1.1 resolution; PyYAML
// reads the same forms in TestMarshalYAMLRandomStringsReadBackInYAML11).
func FuzzMarshalYAML(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"b":[1,2.5,"x"],"c":{"d":null,"e":true}}`,
		`{"s":"\u0001\u007f\u0080\ufeff\ud83d\ude00","t":"tab\there","n":"a\nb\n"}`,
		`{"k":["0x1F","1_000","2001-12-14","<<","+.5","-0b1","~","yes"," lead","trail ","#c"]}`,
		`{"k":["y","N","Off","1:20","12:30:00","=","190:20:30.15","2001-12-14 21:59:43.10 -5"],"f":[1e20,5e-324]}`,
		`{"":{"1":"x"},"deep":[[[{"a":[]}]],{}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var raw any
		if dec.Decode(&raw) != nil {
			return
		}
		in, ok := jsonLike(raw)
		if !ok {
			return
		}
		checkYAMLRoundTrip(t, map[string]any{"v": in})
	})
}

// FuzzMarshalYAMLString puts one string everywhere a string can be: key, value, item.
func FuzzMarshalYAMLString(f *testing.F) {
	for _, seed := range []string{"", "a", "\x01", "\x7f", "\u0080", "\ufeff", "😀", "1_0", "0o7", "<<", "a\n", " \n", "- x", "2001-12-14t21:59:43.10-05:00",
		"y", "OFF", "1:20", "=", "\u2028", "\u0085x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // JSON strings, and so plugin_config strings, are valid UTF-8
		}
		checkYAMLRoundTrip(t, map[string]any{s: s, "list": []any{s, map[string]any{s: []any{s}}}})
	})
}

func checkYAMLRoundTrip(t *testing.T, in map[string]any) {
	t.Helper()
	out := config.MarshalYAML(in)
	var back any
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatalf("MarshalYAML wrote invalid YAML: %v\n%q", err, out)
	}
	if got := fromYAML(back); !reflect.DeepEqual(got, any(in)) {
		t.Fatalf("YAML read back differs:\n got %#v\nwant %#v\n%q", got, in, out)
	}
	if err := checkYAMLv2(out, in); err != nil {
		t.Fatalf("yaml.v2: %v", err)
	}
}

// jsonLike converts a decoded JSON value to the types config uses; false for numbers JSON
// cannot carry to a plugin (out of float range).
func jsonLike(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, ok := jsonLike(e)
			if !ok {
				return nil, false
			}
			t[k] = c
		}
		return t, true
	case []any:
		for i, e := range t {
			c, ok := jsonLike(e)
			if !ok {
				return nil, false
			}
			t[i] = c
		}
		return t, true
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return n, true
		}
		if n, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return n, true
		}
		f, err := strconv.ParseFloat(t.String(), 64)
		return f, err == nil && !math.IsInf(f, 0)
	}
	return v, true
}

// fromYAML converts what yaml.v3 decodes to the types MarshalYAML was given.
func fromYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fromYAML(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = fromYAML(e)
		}
		return t
	case int:
		return int64(t)
	}
	return v
}
