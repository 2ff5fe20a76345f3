package plugin_test

import (
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// filteringSink logs through pu_log, as the example plugins do: one line per level under the
// plugin's target and one under the SDK's.
const filteringSink = `
#include "plugin_util.h"
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, iggy_log_cb l) {
    (void)id; (void)c; (void)n;
    pu_log_init(l);
    static const char *names[] = {"trace", "debug", "info", "warn", "error"};
    for (uint8_t lvl = 0; lvl <= 4; lvl++) {
        pu_log(lvl, "iggy_connector_filtering", "own %s", names[lvl]);
        pu_log(lvl, "iggy_connector_sdk::sink", "sdk %s", names[lvl]);
    }
    return 0;
}
int32_t iggy_sink_consume(uint32_t id, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                          const uint8_t *m, size_t mn) {
    (void)id; (void)a; (void)an; (void)b; (void)bn; (void)m; (void)mn;
    return 0;
}
int32_t iggy_sink_close(uint32_t id) { (void)id; return 0; }
const char *iggy_sink_version(void) { return "0.1.0"; }
`

// The example plugins filter their own lines by RUST_LOG as the process environment holds it at
// their first open, as upstream's SDK does (ffi-abi: filtering happens in the plugin): lines below
// it never reach the host, whatever the host's logger would take.
func TestExamplePluginsFilterByRustLogAtFirstOpen(t *testing.T) {
	for _, tc := range []struct{ rustLog, want string }{
		{"", "own info|sdk info|own warn|sdk warn|own error|sdk error"},
		{"debug", "own debug|sdk debug|own info|sdk info|own warn|sdk warn|own error|sdk error"},
		{"warn,iggy_connector_filtering=trace", "own trace|own debug|own info|own warn|sdk warn|own error|sdk error"},
		{"off,iggy_connector_sdk=error, iggy_connector_sdk::sink = info", "sdk info|sdk warn|sdk error"},
		{"info,x[span]=trace,bogus=loud", "own info|sdk info|own warn|sdk warn|own error|sdk error"},
		{"1", "own error|sdk error"},
	} {
		t.Run(tc.rustLog, func(t *testing.T) {
			t.Setenv("RUST_LOG", tc.rustLog)
			logs := recordLogs(t) // the host takes every level
			sink, err := plugin.LoadSink(testkit.CompileC(t, filteringSink, "libfiltering_sink"))
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.Open(plugin.NextInstanceID(), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range logs.all() {
				got = append(got, r.Message)
			}
			if strings.Join(got, "|") != tc.want {
				t.Fatalf("RUST_LOG=%q: the plugin sent %q, want %q", tc.rustLog, got, tc.want)
			}
		})
	}
}
