package testkit

// The format probe: a C connector library that produces given payloads with a declared schema
// (source) and writes down what it receives (sink), for the tests of the formats, the live tap
// and the dry runs.

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FormatProbeC is a connector library (sink and source) for the format
// round-trip tests, compiled from C by the test (ProbeLibrary):
//
//   - source: plugin_config {"file": path, "schema": n} names a file of
//     hex-encoded payloads, one per line; the first poll produces all of
//     them in one batch declared with schema n (0 json ... 5 avro), later
//     polls produce nothing.
//   - sink: plugin_config {"file": path} appends every message it receives
//     to the file as "<offset> <schema> <length>\n<payload>\n", so the test
//     reads back exactly the bytes and schema label the plugin was given.
const FormatProbeC = `
#include "plugin_util.h"
#include <stdio.h>

#define TARGET "format_probe"

typedef struct probe_sink { char path[1024]; } probe_sink;
static pu_table sinks = PU_TABLE_INIT;

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    pu_log_init(log);
    probe_sink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    if (pu_json_string((pu_json){(const char *)cfg, cfg_len}, "file", s->path, sizeof s->path) != 1 ||
        pu_table_add(&sinks, id, s) != 0) {
        free(s);
        return -1;
    }
    return 0;
}

int32_t iggy_sink_consume(uint32_t id, const uint8_t *tm, size_t tm_len, const uint8_t *mm,
                          size_t mm_len, const uint8_t *msgs, size_t msgs_len) {
    probe_sink *s = pu_table_acquire(&sinks, id);
    if (!s) return -1;
    pu_consume c;
    int rc = pu_consume_begin(&c, id, TARGET, tm, tm_len, mm, mm_len, msgs, msgs_len);
    FILE *f = rc == 0 ? fopen(s->path, "ab") : NULL;
    if (rc == 0 && !f) rc = -1;
    for (uint64_t i = 0; rc == 0 && i < c.count; i++) {
        pu_raw_message m;
        pu_consume_next(&c, &m);
        fprintf(f, "%llu %u %zu\n", (unsigned long long)m.offset, c.schema, m.payload_len);
        fwrite(m.payload, 1, m.payload_len, f);
        fputc('\n', f);
    }
    if (f) fclose(f);
    pu_table_release(&sinks, id);
    return rc;
}

int32_t iggy_sink_close(uint32_t id) {
    free(pu_table_remove(&sinks, id));
    return 0;
}

const char *iggy_sink_version(void) { return "0.1.0-probe"; }

typedef struct probe_source {
    pu_loop loop;
    pu_buf payloads; /* decoded payloads, each as a varint length then bytes */
    uint64_t count, schema;
    int sent;
} probe_source;
static pu_table sources = PU_TABLE_INIT;

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static int probe_poll(void *ctx, pu_loop *loop, pu_buf *out, const char **why) {
    probe_source *s = ctx;
    (void)why;
    if (pu_loop_sleep(loop, s->sent ? 100 : 10)) return 0;
    pu_put_varint(out, s->schema);
    pu_put_varint(out, s->sent ? 0 : s->count);
    if (!s->sent) {
        pu_reader r = pu_reader_new(s->payloads.data, s->payloads.len);
        for (uint64_t i = 0; i < s->count; i++) {
            size_t n;
            const uint8_t *p = pu_get_bytes(&r, &n);
            for (int k = 0; k < 5; k++) pu_put_u8(out, 0); /* id, checksum, timestamps, headers: None */
            pu_put_bytes(out, p, n);
        }
        s->sent = 1;
    }
    pu_put_u8(out, 0); /* state: None */
    return 0;
}

static const pu_source_ops probe_ops = {probe_poll, NULL};

int32_t iggy_source_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, const uint8_t *state,
                         size_t state_len, iggy_log_cb log) {
    (void)state;
    (void)state_len;
    pu_log_init(log);
    char path[1024];
    probe_source *s = calloc(1, sizeof *s);
    if (!s) return -1;
    pu_json config = {(const char *)cfg, cfg_len};
    if (pu_json_string(config, "file", path, sizeof path) != 1 || pu_json_u64(config, "schema", &s->schema) < 0) {
        free(s);
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        free(s);
        return -1;
    }
    static char line[1 << 20];
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        pu_buf decoded = {0};
        for (size_t i = 0; i + 1 < len; i += 2)
            pu_put_u8(&decoded, (uint8_t)(hexval(line[i]) << 4 | hexval(line[i + 1])));
        pu_put_bytes(&s->payloads, decoded.data, decoded.len);
        pu_buf_free(&decoded);
        s->count++;
    }
    fclose(f);
    pu_loop_init(&s->loop, id, TARGET, s, &probe_ops);
    if (pu_table_add(&sources, id, s) != 0) return -1;
    return 0;
}

int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send) {
    probe_source *s = pu_table_acquire(&sources, id);
    if (!s) return -1;
    int32_t rc = pu_loop_start(&s->loop, send, NULL);
    pu_table_release(&sources, id);
    return rc;
}

int32_t iggy_source_batch_result(uint32_t id, uint64_t batch_id, uint8_t result) {
    probe_source *s = pu_table_acquire(&sources, id);
    if (!s) return -1;
    int32_t rc = pu_loop_batch_result(&s->loop, batch_id, result);
    pu_table_release(&sources, id);
    return rc;
}

int32_t iggy_source_close(uint32_t id) {
    probe_source *s = pu_table_remove(&sources, id);
    if (!s) return -1;
    pu_loop_stop(&s->loop);
    pu_loop_destroy(&s->loop);
    pu_buf_free(&s->payloads);
    free(s);
    return 0;
}

const char *iggy_source_version(void) { return "0.1.0-probe"; }
`

// ProbeLibrary compiles FormatProbeC (once per test).
func ProbeLibrary(tb testing.TB) string {
	tb.Helper()
	return CompileC(tb, FormatProbeC, "libformat_probe.so")
}

// ProbeSourceTOML is a source connector key running the probe library lib with the given payloads
// (declared with plugin schema pluginSchema: 0 json ... 5 avro), sending to stream/topic with the
// stream schema and extra stream keys; transforms is appended as is.
func ProbeSourceTOML(tb testing.TB, key, lib, stream, topic, streamSchema, streamExtra string, pluginSchema int, payloads [][]byte, transforms string) string {
	tb.Helper()
	var lines strings.Builder
	for _, p := range payloads {
		lines.WriteString(hex.EncodeToString(p) + "\n")
	}
	file := filepath.Join(tb.TempDir(), "payloads.hex")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf(`type = "source"
key = %q
enabled = true
version = 1
name = "probe source"
path = %q

[[streams]]
stream = %q
topic = %q
schema = %q
%s

[plugin_config]
file = %q
schema = %d
%s
`, key, lib, stream, topic, streamSchema, streamExtra, file, pluginSchema, transforms)
}
