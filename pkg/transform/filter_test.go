package transform_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

const filterInput = `{"id":1,"user_name":"ann","user_email":"a@x.io","score":42,"ratio":0.75,"neg":-5,"big":18446744073709551615,"flag":true,"none":null,"tags":["a"],"meta":{"k":1},"note":"hello world"}`

func TestFilterFields(t *testing.T) {
	tests := []struct {
		name   string
		config string // body of [transforms.filter_fields], after enabled = true
		want   string
	}{
		{"no keep_fields and no patterns is a no-op", ``, filterInput},
		{"keep_fields alone keeps only those", `keep_fields = ["id", "note"]`, `{"id":1,"note":"hello world"}`},
		{"keep_fields with include_matching=false keeps everything",
			`keep_fields = ["id"]
include_matching = false`, filterInput},
		{"key exact", `patterns = [{ key_pattern = { exact = "score" } }]`, `{"score":42}`},
		{"key starts_with", `patterns = [{ key_pattern = { starts_with = "user_" } }]`, `{"user_name":"ann","user_email":"a@x.io"}`},
		{"key ends_with", `patterns = [{ key_pattern = { ends_with = "io" } }]`, `{"ratio":0.75}`},
		{"key contains is case-sensitive", `patterns = [{ key_pattern = { contains = "E" } }]`, `{}`},
		{"key regex is an unanchored search", `patterns = [{ key_pattern = { regex = "a[gt]" } }]`, `{"ratio":0.75,"flag":true,"tags":["a"]}`},
		{"exclude matching keys",
			`patterns = [{ key_pattern = { starts_with = "user_" } }]
include_matching = false`,
			`{"id":1,"score":42,"ratio":0.75,"neg":-5,"big":18446744073709551615,"flag":true,"none":null,"tags":["a"],"meta":{"k":1},"note":"hello world"}`},
		{"keep_fields survive exclusion",
			`keep_fields = ["user_name"]
patterns = [{ key_pattern = { starts_with = "user_" } }]
include_matching = false`,
			`{"id":1,"user_name":"ann","score":42,"ratio":0.75,"neg":-5,"big":18446744073709551615,"flag":true,"none":null,"tags":["a"],"meta":{"k":1},"note":"hello world"}`},
		{"key and value must both match", `patterns = [{ key_pattern = { starts_with = "user_" }, value_pattern = { contains = "@" } }]`, `{"user_email":"a@x.io"}`},
		{"any pattern may match", `patterns = [{ key_pattern = { exact = "id" } }, { value_pattern = "is_boolean" }]`, `{"id":1,"flag":true}`},
		{"an empty pattern matches everything", `patterns = [{}]
include_matching = false`, `{}`},
		{"value equals string", `patterns = [{ value_pattern = { equals = "ann" } }]`, `{"user_name":"ann"}`},
		{"value equals integer", `patterns = [{ value_pattern = { equals = 42 } }]`, `{"score":42}`},
		{"value equals negative integer", `patterns = [{ value_pattern = { equals = -5 } }]`, `{"neg":-5}`},
		{"value equals float matches an equal integer (decision 3)", `patterns = [{ value_pattern = { equals = 42.0 } }]`, `{"score":42}`},
		{"value equals array", `patterns = [{ value_pattern = { equals = ["a"] } }]`, `{"tags":["a"]}`},
		{"value equals object", `patterns = [{ value_pattern = { equals = { k = 1 } } }]`, `{"meta":{"k":1}}`},
		{"value contains only matches strings", `patterns = [{ value_pattern = { contains = "o" } }]`, `{"user_email":"a@x.io","note":"hello world"}`},
		{"value regex only matches strings", `patterns = [{ value_pattern = { regex = "^a" } }]`, `{"user_name":"ann","user_email":"a@x.io"}`},
		{"greater_than compares integers too (decision 3)", `patterns = [{ value_pattern = { greater_than = 1 } }]`, `{"score":42,"big":18446744073709551615}`},
		{"greater_than with a fractional limit", `patterns = [{ value_pattern = { greater_than = 0.5 } }]`, `{"id":1,"score":42,"ratio":0.75,"big":18446744073709551615}`},
		{"less_than", `patterns = [{ value_pattern = { less_than = 1 } }]`, `{"ratio":0.75,"neg":-5}`},
		{"between is inclusive", `patterns = [{ value_pattern = { between = [0.75, 42] } }]`, `{"id":1,"score":42,"ratio":0.75}`},
		{"is_null", `patterns = [{ value_pattern = "is_null" }]`, `{"none":null}`},
		{"a unit pattern given a value is refused", `patterns = [{ value_pattern = { is_number = {} } }]`, ``},
		{"is_not_null excluded", `patterns = [{ value_pattern = "is_not_null" }]
include_matching = false`, `{"none":null}`},
		{"is_string", `patterns = [{ value_pattern = "is_string" }]`, `{"user_name":"ann","user_email":"a@x.io","note":"hello world"}`},
		{"is_number covers all number kinds", `patterns = [{ value_pattern = "is_number" }]`, `{"id":1,"score":42,"ratio":0.75,"neg":-5,"big":18446744073709551615}`},
		{"is_object", `patterns = [{ value_pattern = "is_object" }]`, `{"meta":{"k":1}}`},
		{"is_array", `patterns = [{ value_pattern = "is_array" }]`, `{"tags":["a"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "[transforms.filter_fields]\nenabled = true\n" + tt.config + "\n"
			if tt.want == "" { // a config the builder must refuse
				cfg, order := fromTOML(t, doc)
				if _, err := transform.Build(cfg, order); err == nil {
					t.Fatal("Build accepted an invalid pattern")
				}
				return
			}
			if got := runJSON(t, buildTOML(t, doc), filterInput); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Integers beyond 2^53 compare exactly, not after rounding to float64.
func TestNumericFiltersCompareExactly(t *testing.T) {
	const in = `{"a":9007199254740993,"b":9007199254740992,"c":-9007199254740993}`
	tests := []struct{ pattern, want string }{
		{`{ greater_than = 9007199254740992.0 }`, `{"a":9007199254740993}`},
		{`{ less_than = -9007199254740992.0 }`, `{"c":-9007199254740993}`},
		{`{ equals = 9007199254740992.0 }`, `{"b":9007199254740992}`},
		{`{ between = [-1e300, 1e300] }`, in},
		{`{ greater_than = 1e19 }`, `{}`},
	}
	for _, tt := range tests {
		doc := "[transforms.filter_fields]\nenabled = true\npatterns = [{ value_pattern = " + tt.pattern + " }]\n"
		if got := runJSON(t, buildTOML(t, doc), in); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.pattern, got, tt.want)
		}
	}
}

// The JSON connector-config path: numbers arrive as json.Number.
func TestFilterFromJSONConfig(t *testing.T) {
	cfg := fromJSON(t, `{"filter_fields": {"enabled": true, "include_matching": true,
		"patterns": [{"value_pattern": {"between": [1, 42]}}, {"value_pattern": {"is_null": null}}]}}`)
	ts, err := transform.Build(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := runJSON(t, ts, filterInput); got != `{"id":1,"score":42,"none":null}` {
		t.Fatalf("got %s", got)
	}
}
