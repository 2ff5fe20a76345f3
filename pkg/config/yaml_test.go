package config_test

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The layout serde_yaml 0.9 / serde_yaml_ng 0.10 (libyaml's emitter) gives a serde_json value,
// worked out from their sources: indentless sequences in mappings, nested collections, the
// quoting of strings a plain scalar would misread, literal blocks with their chomping, floats as
// ryu writes them.
func TestMarshalYAMLMatchesSerdeYAML(t *testing.T) {
	cases := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"sequence in a mapping is not indented",
			map[string]any{"interval": "50ms", "messages_range": []any{int64(1), int64(3)}},
			"interval: 50ms\nmessages_range:\n- 1\n- 3\n"},
		{"mappings in a sequence",
			map[string]any{"servers": []any{map[string]any{"host": "a", "port": int64(1)}, map[string]any{"host": "b"}}},
			"servers:\n- host: a\n  port: 1\n- host: b\n"},
		{"sequences in a sequence, empty ones in flow",
			map[string]any{"m": []any{[]any{int64(1), int64(2)}, []any{}}, "e": map[string]any{}},
			"e: {}\nm:\n- - 1\n  - 2\n- []\n"},
		{"nested mappings", map[string]any{"a": map[string]any{"b": map[string]any{"c": int64(1)}}}, "a:\n  b:\n    c: 1\n"},
		{"scalars", map[string]any{"b": false, "f": 1.0, "g": 0.1, "h": 1e20, "i": -2.5e-7, "j": 123456.789, "k": 1e15, "n": nil,
			"neg": int64(-3), "u": uint64(18446744073709551615)},
			// ryu writes 1e20; an exponent after a dot and with its sign reads as a float in YAML 1.1 too
			"b: false\nf: 1.0\ng: 0.1\nh: 1.0e+20\ni: -2.5e-7\nj: 123456.789\nk: 1000000000000000.0\n'n': null\nneg: -3\nu: 18446744073709551615\n"},
		{"strings that read as something else are single-quoted",
			map[string]any{"a": "true", "b": "123", "c": "0123", "d": "", "e": "null", "f": "~", "g": "1.5", "h": "0x1F", "i": "1e5",
				"j": ".inf", "k": "+12", "l": "-0o17", "m": "1.", "n": ".5"},
			"a: 'true'\nb: '123'\nc: '0123'\nd: ''\ne: 'null'\nf: '~'\ng: '1.5'\nh: '0x1F'\ni: '1e5'\nj: '.inf'\nk: '+12'\nl: '-0o17'\nm: '1.'\n'n': '.5'\n"},
		{"strings that stay plain", map[string]any{"a": "yES", "b": "inf", "c": "a:b", "d": "it's", "e": "héllo ✓ 😀", "f": "x-y", "g": "0x", "h": "1e", "i": "1:60", "j": "0:20"},
			"a: yES\nb: inf\nc: a:b\nd: it's\ne: héllo ✓ 😀\nf: x-y\ng: 0x\nh: 1e\ni: 1:60\nj: 0:20\n"},
		{"YAML 1.1 booleans, sexagesimals and the value key are quoted (upstream leaves them plain)",
			map[string]any{"a": "yes", "b": "Off", "c": "y", "d": "N", "e": "1:20", "f": "12:30:00", "g": "=", "h": "190:20:30.15"},
			"a: 'yes'\nb: 'Off'\nc: 'y'\nd: 'N'\ne: '1:20'\nf: '12:30:00'\ng: '='\nh: '190:20:30.15'\n"},
		{"indicators and edge spaces are quoted",
			map[string]any{"a": "a: b", "b": "- x", "c": "#c", "d": "x #y", "e": " lead", "f": "trail ", "g": "*star", "h": "---", "i": "it's: x", "j": "[x"},
			"a: 'a: b'\nb: '- x'\nc: '#c'\nd: 'x #y'\ne: ' lead'\nf: 'trail '\ng: '*star'\nh: '---'\ni: 'it''s: x'\nj: '[x'\n"},
		{"escapes are double-quoted", map[string]any{"t": "tab\there", "z": "nul\x00", "q": "bell\a\"\\"},
			"q: \"bell\\a\\\"\\\\\"\nt: \"tab\\there\"\nz: \"nul\\0\"\n"},
		{"other escapes as libyaml writes them", map[string]any{"a": "\x01", "b": "\x7f", "c": "\u0080", "d": "\ufeff"},
			"a: \"\\x01\"\nb: \"\\x7F\"\nc: \"\\x80\"\nd: \"\\uFEFF\"\n"},
		{"strings a YAML 1.1 reader misreads are quoted (upstream leaves them plain)",
			map[string]any{"a": "1_000", "b": "2001-12-14", "c": "<<", "d": "0b101", "e": "+.5", "f": "x_1"},
			"a: '1_000'\nb: '2001-12-14'\nc: '<<'\nd: '0b101'\ne: '+.5'\nf: x_1\n"},
		{"line breaks are literal blocks", map[string]any{"k": "  x\ny", "m": "line1\nline2", "t": "end\n"},
			"k: |2-\n    x\n  y\nm: |-\n  line1\n  line2\nt: |\n  end\n"},
		{"kept final breaks", map[string]any{"a": "x\n\n", "b": int64(1)}, "a: |+\n  x\n\nb: 1\n"},
		{"literal in an indentless sequence", map[string]any{"s": []any{"a\nb"}}, "s:\n- |-\n  a\n  b\n"},
		{"a trailing space forbids the literal", map[string]any{"s": "a \nb"}, "s: \"a \\nb\"\n"},
		{"keys", map[string]any{"1": "x", "a b": "y", "": "z", "true": "w"}, "'': z\n'1': x\na b: 'y'\n'true': w\n"},
		{"empty", map[string]any{}, "{}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(config.MarshalYAML(c.in))
			if got != c.want {
				t.Fatalf("MarshalYAML =\n%q\nwant\n%q", got, c.want)
			}
			// What we write is YAML that reads back to the same value.
			var back any
			if err := yaml.Unmarshal([]byte(got), &back); err != nil {
				t.Fatalf("not valid YAML: %v\n%s", err, got)
			}
		})
	}
}
