package runner_test

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// formatProbeC is a connector library (sink and source) for the format
// round-trip tests, compiled from C by the test:
//
//   - source: plugin_config {"file": path, "schema": n} names a file of
//     hex-encoded payloads, one per line; the first poll produces all of
//     them in one batch declared with schema n (0 json ... 5 avro), later
//     polls produce nothing.
//   - sink: plugin_config {"file": path} appends every message it receives
//     to the file as "<offset> <schema> <length>\n<payload>\n", so the test
//     reads back exactly the bytes and schema label the plugin was given.
const formatProbeC = `
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

// probeLibrary compiles formatProbeC once per test.
func probeLibrary(t *testing.T) string {
	t.Helper()
	return testkit.CompileC(t, formatProbeC, "libformat_probe.so")
}

// received is one message as the probe sink wrote it down.
type received struct {
	Offset  uint64
	Schema  int // the label the plugin got: 0 json ... 5 avro
	Payload []byte
}

// readReceived parses the probe sink's file; a missing file is no messages yet.
func readReceived(t *testing.T, path string) []received {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []received
	r := bufio.NewReader(f)
	for {
		header, err := r.ReadString('\n')
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m received
		var n int
		if _, err := fmt.Sscanf(header, "%d %d %d\n", &m.Offset, &m.Schema, &n); err != nil {
			t.Fatalf("probe file header %q: %v", header, err)
		}
		m.Payload = make([]byte, n+1)
		if _, err := io.ReadFull(r, m.Payload); err != nil {
			return out // the sink is still writing this record
		}
		m.Payload = m.Payload[:n]
		out = append(out, m)
	}
}

// waitReceived waits until the probe sink has written n messages.
func waitReceived(t *testing.T, path string, n int, runners ...*testkit.RunnerProc) []received {
	t.Helper()
	var got []received
	if !testkit.Within(waitLong, func() bool {
		got = readReceived(t, path)
		if len(got) >= n {
			return true
		}
		for _, r := range runners {
			if r.Exited() {
				t.Fatalf("runner exited while waiting for %d messages (have %d):\n%s", n, len(got), r.Logs())
			}
		}
		return false
	}) {
		t.Fatalf("the sink received %d of %d messages", len(got), n)
	}
	return got
}

// expectMiddleTwoSkipped checks a probe sink that was sent good, bad, bad, good messages: it
// receives offsets 0 and 3 only, counts two errors, and its logs mention every wantLogs text.
func expectMiddleTwoSkipped(t *testing.T, sink *testkit.RunnerProc, out string, wantLogs ...string) {
	t.Helper()
	got := waitReceived(t, out, 2, sink)
	sink.WaitUntil(t, waitLong, "the endpoint", func() bool { _, err := sink.Health(); return err == nil })
	sink.WaitUntil(t, waitLong, "two errors", func() bool { return sink.Stats(t).Errors == 2 })
	if len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 3 {
		t.Errorf("sink received %+v, want offsets 0 and 3", got)
	}
	logs := sink.Logs()
	for _, want := range wantLogs {
		if !strings.Contains(logs, want) {
			t.Errorf("logs do not mention %q:\n%s", want, logs)
		}
	}
}

// probeSourceTOML is a source connector running the probe with the given
// payloads (declared with plugin schema pluginSchema), sending to
// stream/topic with the stream schema and extra stream keys; transforms is
// appended as is.
func probeSourceTOML(t *testing.T, lib, stream, topic, streamSchema, streamExtra string, pluginSchema int, payloads [][]byte, transforms string) string {
	t.Helper()
	var lines strings.Builder
	for _, p := range payloads {
		lines.WriteString(hex.EncodeToString(p) + "\n")
	}
	file := filepath.Join(t.TempDir(), "payloads.hex")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`type = "source"
key = "probe_source"
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
`, lib, stream, topic, streamSchema, streamExtra, file, pluginSchema, transforms)
}

// probeSinkTOML is a sink connector running the probe, writing to file.
func probeSinkTOML(lib, stream, topic, streamSchema, streamExtra, file, transforms string) string {
	return fmt.Sprintf(`type = "sink"
key = "probe_sink"
enabled = true
version = 1
name = "probe sink"
path = %q

[[streams]]
stream = %q
topics = [%q]
schema = %q
poll_interval = "10ms"
%s

[plugin_config]
file = %q
%s
`, lib, stream, topic, streamSchema, streamExtra, file, transforms)
}

// sendRaw sends payloads to the topic's partition 0 through the official SDK.
func sendRaw(t *testing.T, srv *devbroker.Server, stream, topic string, payloads [][]byte) {
	t.Helper()
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	batch := make([]iggcon.IggyMessage, len(payloads))
	for i, p := range payloads {
		m, err := iggcon.NewIggyMessage(p)
		if err != nil {
			t.Fatal(err)
		}
		batch[i] = m
	}
	if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch); err != nil {
		t.Fatalf("SDK send: %v", err)
	}
}

// jsonLines renders JSON payloads as the bytes a plugin would produce.
func jsonLines(docs ...string) [][]byte {
	out := make([][]byte, len(docs))
	for i, d := range docs {
		out[i] = []byte(d)
	}
	return out
}
