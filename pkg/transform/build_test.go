package transform_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// docs/architecture.md, decision 2: transforms run in the order of the config file.
func TestBuildKeepsConfigFileOrder(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"file order, not enum order", `
[transforms.unwrap_envelope]
enabled = true
field = "data"
[transforms.delete_fields]
enabled = true
fields = ["x"]
[transforms.add_fields]
enabled = true
`, []string{"unwrap_envelope", "delete_fields", "add_fields"}},
		{"disabled entries are skipped", `
[transforms.filter_fields]
enabled = false
[transforms.update_fields]
enabled = true
[transforms.proto_convert]
enabled = false
`, []string{"update_fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(buildTOML(t, tt.doc)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildOrderFallsBackToEnumOrder(t *testing.T) {
	enabled := map[string]any{"enabled": true, "field": "f"}
	cfg := map[string]any{
		"unwrap_envelope": enabled, "add_fields": enabled, "filter_fields": enabled, "delete_fields": enabled,
	}
	tests := []struct {
		name  string
		order []string
		want  []string
	}{
		{"no order", nil, []string{"add_fields", "delete_fields", "filter_fields", "unwrap_envelope"}},
		{"partial order first, rest in enum order", []string{"unwrap_envelope", "filter_fields"},
			[]string{"unwrap_envelope", "filter_fields", "add_fields", "delete_fields"}},
		{"unconfigured and repeated names in order are ignored", []string{"avro_convert", "delete_fields", "delete_fields"},
			[]string{"delete_fields", "add_fields", "filter_fields", "unwrap_envelope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := transform.Build(cfg, tt.order)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(ts); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildNullEntryIsDisabled(t *testing.T) {
	ts, err := transform.Build(fromJSON(t, `{"add_fields": null, "delete_fields": {"enabled": true, "fields": ["a"]}}`), nil)
	if err != nil || !reflect.DeepEqual(names(ts), []string{"delete_fields"}) {
		t.Fatalf("Build = %v, %v; want only delete_fields", names(ts), err)
	}
}

func TestBuildEmptyConfig(t *testing.T) {
	ts, err := transform.Build(nil, nil)
	if err != nil || len(ts) != 0 {
		t.Fatalf("Build(nil) = %v, %v", ts, err)
	}
}

func TestBuildRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr error
		wantMsg string
	}{
		{"unknown type", `{"rename_fields": {"enabled": true}}`, transform.ErrUnknownTransform, `"rename_fields"`},
		{"upstream spelling only", `{"flatbuffer_convert": {"enabled": false}}`, transform.ErrUnknownTransform, `"flatbuffer_convert"`},
		{"proto_convert without its keys", `{"proto_convert": {"enabled": true}}`, transform.ErrInvalidConfig, `transform "proto_convert": invalid transform config: missing required key "source_format"`},
		{"flat_buffer_convert without its keys", `{"flat_buffer_convert": {"enabled": true}}`, transform.ErrInvalidConfig, `"flat_buffer_convert"`},
		{"avro_convert without its keys", `{"avro_convert": {"enabled": true}}`, transform.ErrInvalidConfig, `"avro_convert"`},
		{"enabled missing", `{"add_fields": {"fields": []}}`, transform.ErrInvalidConfig, `missing required key "enabled"`},
		{"enabled not a bool", `{"add_fields": {"enabled": "yes"}}`, transform.ErrInvalidConfig, `"enabled" must be a boolean, got a string`},
		{"enabled null", `{"add_fields": {"enabled": null}}`, transform.ErrInvalidConfig, `"enabled" must be a boolean, got null`},
		{"body not a table", `{"add_fields": true}`, transform.ErrInvalidConfig, `expected a table, got a boolean`},
		{"fields not an array", `{"add_fields": {"enabled": true, "fields": {"key": "a"}}}`, transform.ErrInvalidConfig, `"fields" must be an array`},
		{"field not a table", `{"add_fields": {"enabled": true, "fields": ["a"]}}`, transform.ErrInvalidConfig, `fields[0]: must be a table`},
		{"field without key", `{"add_fields": {"enabled": true, "fields": [{"value": {"static": 1}}]}}`, transform.ErrInvalidConfig, `fields[0]: missing required key "key"`},
		{"field key not a string", `{"update_fields": {"enabled": true, "fields": [{"key": 1, "value": {"static": 1}}]}}`, transform.ErrInvalidConfig, `fields[0]: "key" must be a string, got a number`},
		{"field without value", `{"add_fields": {"enabled": true, "fields": [{"key": "a"}]}}`, transform.ErrInvalidConfig, `fields[0]: missing required key "value"`},
		{"bare value", `{"add_fields": {"enabled": true, "fields": [{"key": "a", "value": 1}]}}`, transform.ErrInvalidConfig, `exactly one key, "static" or "computed"`},
		{"two-key value", `{"add_fields": {"enabled": true, "fields": [{"key": "a", "value": {"static": 1, "computed": "uuid_v4"}}]}}`, transform.ErrInvalidConfig, `exactly one key`},
		{"unknown value variant", `{"add_fields": {"enabled": true, "fields": [{"key": "a", "value": {"dynamic": 1}}]}}`, transform.ErrInvalidConfig, `unknown variant "dynamic"`},
		{"unknown computed kind", `{"add_fields": {"enabled": true, "fields": [{"key": "a", "value": {"computed": "uuid_v1"}}]}}`, transform.ErrInvalidConfig, `unknown kind "uuid_v1"`},
		{"computed not a string", `{"add_fields": {"enabled": true, "fields": [{"key": "a", "value": {"computed": 3}}]}}`, transform.ErrInvalidConfig, `value.computed must be a string`},
		{"bad condition", `{"update_fields": {"enabled": true, "fields": [{"key": "a", "value": {"static": 1}, "condition": "if_missing"}]}}`, transform.ErrInvalidConfig, `condition must be "always", "key_exists" or "key_not_exists", got "if_missing"`},
		{"delete field not a string", `{"delete_fields": {"enabled": true, "fields": ["a", 2]}}`, transform.ErrInvalidConfig, `fields[1] must be a string`},
		{"unwrap without field", `{"unwrap_envelope": {"enabled": true}}`, transform.ErrInvalidConfig, `missing required key "field"`},
		{"unwrap empty field", `{"unwrap_envelope": {"enabled": true, "field": ""}}`, transform.ErrInvalidConfig, `"field" must not be empty`},
		{"include_matching not a bool", `{"filter_fields": {"enabled": true, "include_matching": 1}}`, transform.ErrInvalidConfig, `"include_matching" must be a boolean`},
		{"keep_fields not strings", `{"filter_fields": {"enabled": true, "keep_fields": [1]}}`, transform.ErrInvalidConfig, `keep_fields[0] must be a string`},
		{"pattern not a table", `{"filter_fields": {"enabled": true, "patterns": ["x"]}}`, transform.ErrInvalidConfig, `patterns[0] must be a table`},
		{"bad key regex", `{"filter_fields": {"enabled": true, "patterns": [{"key_pattern": {"regex": "("}}]}}`, transform.ErrInvalidConfig, `patterns[0].key_pattern.regex`},
		{"bad value regex", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"regex": "[a"}}]}}`, transform.ErrInvalidConfig, `patterns[0].value_pattern.regex`},
		{"unknown key pattern", `{"filter_fields": {"enabled": true, "patterns": [{"key_pattern": {"glob": "a*"}}]}}`, transform.ErrInvalidConfig, `unknown variant "glob"`},
		{"key pattern not a string", `{"filter_fields": {"enabled": true, "patterns": [{"key_pattern": {"exact": 1}}]}}`, transform.ErrInvalidConfig, `key_pattern.exact must be a string`},
		{"unknown value pattern name", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": "is_empty"}]}}`, transform.ErrInvalidConfig, `unknown value pattern "is_empty"`},
		{"unknown value pattern variant", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"like": "a"}}]}}`, transform.ErrInvalidConfig, `unknown variant "like"`},
		{"greater_than not a number", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"greater_than": "1"}}]}}`, transform.ErrInvalidConfig, `greater_than must be a number, got a string`},
		{"between with one bound", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"between": [1]}}]}}`, transform.ErrInvalidConfig, `between must be an array of two numbers`},
		{"between with a string", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"between": [1, "2"]}}]}}`, transform.ErrInvalidConfig, `between must be an array of two numbers`},
		{"unit pattern with a value", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"is_null": 1}}]}}`, transform.ErrInvalidConfig, `is_null takes no value`},
		{"contains not a string", `{"filter_fields": {"enabled": true, "patterns": [{"value_pattern": {"contains": 1}}]}}`, transform.ErrInvalidConfig, `contains must be a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := transform.Build(fromJSON(t, tt.json), nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Build = %v, %v; want an error wrapping %v", names(ts), err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

// Upstream ignores keys it does not know inside a transform table; so do we,
// so upstream configs load unchanged.
func TestBuildIgnoresUnknownKeys(t *testing.T) {
	ts, err := transform.Build(fromJSON(t, `{"delete_fields": {"enabled": true, "fields": ["a"], "comment": "x"}}`), nil)
	if err != nil || len(ts) != 1 {
		t.Fatalf("Build = %v, %v", names(ts), err)
	}
}

// dropAll and failAll are real Transform implementations used to check how
// Run treats a drop and a failure.
type dropAll struct{}

func (dropAll) Name() string                       { return "drop_all" }
func (dropAll) Apply(*codec.Message) (bool, error) { return false, nil }

type failAll struct{}

func (failAll) Name() string                       { return "fail_all" }
func (failAll) Apply(*codec.Message) (bool, error) { return false, errors.New("boom") }

// panicAll has a bug: it panics on every message.
type panicAll struct{}

func (panicAll) Name() string                       { return "panic_all" }
func (panicAll) Apply(*codec.Message) (bool, error) { panic("nil map") }

// A transform that panics fails the message like any failing transform, and the chain stops.
func TestRunReturnsAPanicAsAFailure(t *testing.T) {
	m := jsonMessage(t, `{"a":1}`)
	keep, err := transform.Run([]transform.Transform{panicAll{}, dropAll{}}, m)
	if keep || !errors.Is(err, panicerr.ErrPanic) || !strings.HasPrefix(err.Error(), "transform panic_all: panic on malformed input: nil map") {
		t.Fatalf("Run = %v, %v; want a failure naming the transform and the panic", keep, err)
	}
}

func TestRunStopsAtFirstDropOrFailure(t *testing.T) {
	add := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [{ key = "seen", value = { static = true } }]
`)[0]
	tests := []struct {
		name       string
		chain      []transform.Transform
		wantKeep   bool
		wantErr    string
		wantOutput string
	}{
		{"all pass", []transform.Transform{add}, true, "", `{"a":1,"seen":true}`},
		{"drop is not an error", []transform.Transform{dropAll{}, add}, false, "", `{"a":1}`},
		{"failure names the transform", []transform.Transform{failAll{}, add}, false, "transform fail_all: boom", `{"a":1}`},
		{"later transforms still ran before the drop", []transform.Transform{add, dropAll{}}, false, "", `{"a":1,"seen":true}`},
		{"no transforms", nil, true, "", `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := jsonMessage(t, `{"a":1}`)
			keep, err := transform.Run(tt.chain, m)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			out, _ := codec.PayloadToFFI(m.Payload)
			if keep != tt.wantKeep || gotErr != tt.wantErr || string(out) != tt.wantOutput {
				t.Fatalf("Run = %v, %q, payload %s; want %v, %q, %s", keep, gotErr, out, tt.wantKeep, tt.wantErr, tt.wantOutput)
			}
		})
	}
}

// Order matters, which is why decision 2 (docs/architecture.md) fixes it: adding a field before or
// after unwrapping an envelope gives different payloads.
func TestConfigOrderChangesTheResult(t *testing.T) {
	addThenUnwrap := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [{ key = "v", value = { static = 1 } }]
[transforms.unwrap_envelope]
enabled = true
field = "data"
`)
	unwrapThenAdd := buildTOML(t, `
[transforms.unwrap_envelope]
enabled = true
field = "data"
[transforms.add_fields]
enabled = true
fields = [{ key = "v", value = { static = 1 } }]
`)
	in := `{"data":{"x":0}}`
	if got := runJSON(t, addThenUnwrap, in); got != `{"x":0}` {
		t.Errorf("add then unwrap = %s", got)
	}
	if got := runJSON(t, unwrapThenAdd, in); got != `{"x":0,"v":1}` {
		t.Errorf("unwrap then add = %s", got)
	}
}
