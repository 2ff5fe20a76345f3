package config_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func TestErrorFieldFindsTheField(t *testing.T) {
	for _, tc := range []struct{ text, field, message string }{
		{`invalid connector configuration: IGGY_CONNECTOR_CONFIG: key streams[0].batch_length: expected an unsigned integer, got -1`,
			"streams[0].batch_length", "expected an unsigned integer, got -1"},
		{`invalid connector configuration: new sink config "pg": key transforms.nope: unknown transform "nope"`,
			"transforms.nope", `unknown transform "nope"`},
		{`sink "k": Failed to load transforms: transform "add_fields": invalid transform config: fields[0]: missing required key "value"`,
			"transforms.add_fields.fields[0]", `missing required key "value"`},
		{`sink "k": Failed to load transforms: transform "filter_fields": no rule`, "transforms.filter_fields", "no rule"},
		{`invalid connector configuration: sink "k": streams[1].poll_interval: Invalid poll interval: bad`,
			"streams[1].poll_interval", "Invalid poll interval: bad"},
		{`invalid connector configuration: IGGY_CONNECTOR_CONFIG: key plugin_config: a: non-finite number`, "plugin_config", "a: non-finite number"},
		{`invalid connector configuration: source "k": No streams configured for source`, "", "No streams configured for source"},
		{`connectors/pg.toml: parsing TOML file failed`, "", "parsing TOML file failed"},
	} {
		field, message := config.ErrorField(tc.text)
		if field != tc.field || message != tc.message {
			t.Errorf("ErrorField(%q) = %q, %q; want %q, %q", tc.text, field, message, tc.field, tc.message)
		}
	}
}
