package logging_test

import (
	"errors"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

func TestParseLevelChange(t *testing.T) {
	for _, tc := range []struct {
		body    string
		filter  string // "<nil>" for a reset
		persist bool
	}{
		{`"debug"`, "debug", false},
		{` "info,iggy_connector_stdout_sink=trace" `, "info,iggy_connector_stdout_sink=trace", false},
		{`{"filter": "warn", "persist": true}`, "warn", true},
		{`{"filter": null}`, "<nil>", false},
		{`null`, "<nil>", false},
		{`{"persist": true}`, "<nil>", true},
	} {
		c, err := logging.ParseLevelChange([]byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		got := "<nil>"
		if c.Filter != nil {
			got = *c.Filter
		}
		if got != tc.filter || c.Persist != tc.persist {
			t.Errorf("%s: filter %q persist %v, want %q %v", tc.body, got, c.Persist, tc.filter, tc.persist)
		}
	}
	for _, body := range []string{`"debug,x=loud"`, `{"filter": "x[span]=debug"}`, `{"level": "debug"}`, `42`, `{"filter": 3}`, ``} {
		if _, err := logging.ParseLevelChange([]byte(body)); !errors.Is(err, logging.ErrBadLevelChange) {
			t.Errorf("%q: %v, want ErrBadLevelChange", body, err)
		}
	}
}

// The filter a plugin is opened with lets through what the host would take of its lines, and no
// less than the ceiling.
func TestPluginFilter(t *testing.T) {
	for _, tc := range []struct {
		host, ceiling, want string
	}{
		{"info", "off", "info"},
		{"warn,connector=debug", "off", "debug"},
		{"info,iggy_connectors::runner=trace,iggy_connector_stdout_sink=trace", "off", "info,iggy_connector_stdout_sink=trace"},
		{"info,iggy_connector_stdout_sink=error", "debug", "debug,iggy_connector_stdout_sink=debug"},
		{"trace", "debug", "trace"},
		{"error,connector=off", "off", "off"},
	} {
		ceiling, err := logging.ParseLevel(tc.ceiling)
		if err != nil {
			t.Fatal(err)
		}
		if got := logging.PluginFilter(logging.MustParseFilter(tc.host), ceiling); got != tc.want {
			t.Errorf("host %q ceiling %s: plugin filter %q, want %q", tc.host, tc.ceiling, got, tc.want)
		}
	}
}
