package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// yaml11Strings are the plain scalars YAML 1.1's implicit types (yaml.org/type: bool, int, float,
// null, merge, value, timestamp) read as something other than a string, in the forms the type
// pages list, with their signs, underscores and case variants.
var yaml11Strings = []string{
	// bool
	"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
	"on", "On", "ON", "off", "Off", "OFF",
	// int: binary, octal, decimal, hexadecimal, sexagesimal
	"0b1010", "0b1_0", "-0b1", "+0b1", "017", "0_17", "-017", "0", "-0", "+0", "12", "1_000", "-1_000", "+1",
	"0x1F", "0x_1F", "-0xA", "+0xa", "1:20", "12:30:00", "-1:20", "+190:20:30", "1_0:20", "1:2",
	// float
	"1.5", "1.", ".5", "-.5", "+1.5", "1.5e+3", "1.0e-3", "1_000.5", "6.8523015e+5", "685.230_15e+03",
	"190:20:30.15", "1:20.5", "-1:20.", ".", "1.2.3", ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", ".NAN",
	// null, merge, value
	"~", "null", "Null", "NULL", "", "<<", "=",
	// timestamp
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.1Z",
	"2001-12-15 2:59:43.10", "2001-1-2 3:04:05", "2001-12-14T21:59:43Z", "2001-12-14 21:59:43.10 Z",
	"2001-12-14	21:59:43+05:30",
}

// yaml11Floats are floats whose shortest form has an exponent: YAML 1.1 reads an exponent only
// after a dot and with a sign (1.0e+20), so 1e20 would be a string to it.
var yaml11Floats = []float64{1e20, -2.5e-7, 1e-5, 5e-324, 1.7976931348623157e308, 1e16, 1.5e17, 0.0001}

// Every string a YAML 1.1 reader would read as something else is quoted, and every float is
// written so that it reads as one: PyYAML (Debian's python3-yaml, a YAML 1.1 reader), yaml.v2
// (YAML 1.1 rules) and yaml.v3 read each output back to the input, whether the string is a value,
// a list item or a key.
func TestMarshalYAMLReadsBackInYAML11(t *testing.T) {
	var docs []map[string]any
	for _, s := range yaml11Strings {
		doc := map[string]any{"value": s, "list": []any{s, map[string]any{"nested": s}}}
		if s != "value" && s != "list" {
			doc[s] = "key"
		}
		docs = append(docs, doc)
	}
	for _, f := range yaml11Floats {
		docs = append(docs, map[string]any{"value": f, "list": []any{f, -f}})
	}
	checkYAML11(t, docs)
}

// A large random corpus of strings made of the characters YAML gives meaning to (and a few
// line breaks and non-ASCII characters YAML 1.1 treats specially) reads back the same in PyYAML
// and yaml.v2, so the rule is not only right for the forms listed above. The seed is fixed: a
// failure names the string, and the run is the same every time.
func TestMarshalYAMLRandomStringsReadBackInYAML11(t *testing.T) {
	alphabet := []rune("yYnNoOeEsStTrRuUfFaAlLiI0123456789_:.-+xXbB~<=!&*#@`'\" ,[]{}|>%?\t\n\\é\u0085\u2028\ufeff😀")
	rng := rand.New(rand.NewPCG(35, 9))
	docs := make([]map[string]any, 0, 4000)
	for range cap(docs) {
		r := make([]rune, 1+rng.IntN(10))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(r)
		doc := map[string]any{"value": s, "list": []any{s}}
		if s != "value" && s != "list" {
			doc[s] = s
		}
		docs = append(docs, doc)
	}
	checkYAML11(t, docs)
}

// checkYAML11 writes each document with MarshalYAML and reads it back with yaml.v3 and yaml.v2
// in this process (checkYAMLRoundTrip), and with PyYAML in one python3 process for all of them.
func checkYAML11(t *testing.T, docs []map[string]any) {
	t.Helper()
	texts := make([]string, len(docs))
	for i, doc := range docs {
		texts[i] = string(config.MarshalYAML(doc))
		checkYAMLRoundTrip(t, doc)
	}
	results := readPyYAML(t, texts)
	for i, r := range results {
		if r.Error != "" {
			t.Errorf("PyYAML refused what MarshalYAML wrote for %#v: %s\n%s", docs[i], r.Error, texts[i])
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(r.Value))
		dec.UseNumber()
		var back any
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("PyYAML's answer %s: %v", r.Value, err)
		}
		got, _ := jsonLike(back)
		if !reflect.DeepEqual(got, any(docs[i])) {
			t.Errorf("PyYAML read back\n %s\nwant\n %#v\nfrom\n%s", r.Value, docs[i], texts[i])
		}
	}
}

// checkYAMLv2 reads out with yaml.v2 (YAML 1.1 resolution) and compares it with in.
func checkYAMLv2(out []byte, in map[string]any) error {
	var back any
	if err := yamlv2.Unmarshal(out, &back); err != nil {
		return fmt.Errorf("invalid YAML: %v\n%q", err, out)
	}
	got, err := fromYAMLv2(back)
	if err != nil {
		return fmt.Errorf("%v\n%q", err, out)
	}
	if !reflect.DeepEqual(got, any(in)) {
		return fmt.Errorf("read back differs:\n got %#v\nwant %#v\n%q", got, in, out)
	}
	return nil
}

// fromYAMLv2 converts what yaml.v2 decodes to the types MarshalYAML was given; a mapping key that
// is not a string is an error (a string key was read as something else).
func fromYAMLv2(v any) (any, error) {
	switch t := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %#v (%T) is not a string", k, k)
			}
			c, err := fromYAMLv2(e)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := fromYAMLv2(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return int64(t), nil
	}
	return v, nil
}

// pyResult is one document as testdata/pyyaml_read.py read it.
type pyResult struct {
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// readPyYAML parses every text with PyYAML in one python3 process.
func readPyYAML(t *testing.T, texts []string) []pyResult {
	t.Helper()
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "testdata/pyyaml_read.py")
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 testdata/pyyaml_read.py: %v: %s (PyYAML comes with Debian's python3-yaml: make test installs it)",
			err, strings.TrimSpace(stderr.String()))
	}
	var results []pyResult
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil || len(results) != len(texts) {
		t.Fatalf("PyYAML's answer: %v, %d results for %d documents", err, len(results), len(texts))
	}
	return results
}
