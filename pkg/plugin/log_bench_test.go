package plugin_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// chattySink logs one DEBUG line per message through pu_log, as a plugin tracing each record
// would, and otherwise does what the null sink does.
const chattySink = `
#include "plugin_util.h"
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, iggy_log_cb l) {
    (void)id; (void)c; (void)n;
    pu_log_init(l);
    return 0;
}
int32_t iggy_sink_consume(uint32_t id, const uint8_t *tm, size_t tml, const uint8_t *mm, size_t mml,
                          const uint8_t *m, size_t ml) {
    pu_consume c;
    if (pu_consume_begin(&c, id, "iggy_connector_chatty", tm, tml, mm, mml, m, ml) != 0) return -1;
    for (uint64_t i = 0; i < c.count; i++) {
        pu_raw_message msg;
        pu_consume_next(&c, &msg);
        pu_log(IGGY_LOG_DEBUG, "iggy_connector_chatty", "consumed message at offset %llu with %zu bytes",
               (unsigned long long)msg.offset, msg.payload_len);
    }
    return 0;
}
int32_t iggy_sink_close(uint32_t id) { (void)id; return 0; }
const char *iggy_sink_version(void) { return "0.1.0"; }
`

// BenchmarkPluginDebugLinePerMessage prices the plugin log ceiling (runner/loglevel.go): a plugin
// logging a DEBUG line per message while the runner's filter is at info. "plugin-filters": the
// plugin was opened with RUST_LOG=info and drops the line itself (upstream's default);
// "host-drops": opened with RUST_LOG=debug (a ceiling of debug, so a run-time change to debug
// would show it), the line crosses into Go and the runner's filter drops it; "host-writes": the
// runner's filter is at debug too and the line is written (JSON, to io.Discard).
func BenchmarkPluginDebugLinePerMessage(b *testing.B) {
	for _, tc := range []struct{ name, pluginFilter, hostFilter string }{
		{"plugin-filters", "info", "info"},
		{"host-drops", "debug", "info"},
		{"host-writes", "debug", "debug"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.Setenv("RUST_LOG", tc.pluginFilter)
			h, err := logging.NewHandler(io.Discard, logging.Options{Format: logging.FormatJSON, Filter: tc.hostFilter, Target: logging.TargetRunner})
			if err != nil {
				b.Fatal(err)
			}
			plugin.SetLogger(slog.New(h))
			b.Cleanup(func() { plugin.SetLogger(nil) })
			sink, err := plugin.LoadSink(testkit.CompileC(b, chattySink, "libchatty_sink_"+tc.name))
			if err != nil {
				b.Fatal(err)
			}
			id := plugin.NextInstanceID()
			if err := sink.Open(id, []byte(`{}`)); err != nil {
				b.Fatal(err)
			}
			defer sink.Close(id)
			topicMeta := postcard.AppendTopicMetadata(nil, postcard.TopicMetadata{Stream: "bench", Topic: "events"})
			msgsMeta := postcard.AppendMessagesMetadata(nil, postcard.MessagesMetadata{PartitionID: 1, CurrentOffset: 1_001_000, Schema: postcard.SchemaRaw})
			msgs := postcard.AppendRawMessages(nil, benchRawMessages())
			b.ReportAllocs()
			for b.Loop() {
				if err := sink.Consume(id, topicMeta, msgsMeta, msgs); err != nil {
					b.Fatal(err)
				}
			}
			reportPerMessage(b, benchMessages)
		})
	}
}
