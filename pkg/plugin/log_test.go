package plugin_test

import (
	"log/slog"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// loggingSink logs one line per level on open (plus odd inputs), and from
// eight threads at once on consume.
const loggingSink = `
#include "plugin_util.h"
static iggy_log_cb cb;
static void emit(uint8_t level, const char *target, const char *msg) {
    cb(level, (const uint8_t *)target, strlen(target), (const uint8_t *)msg, strlen(msg));
}
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, iggy_log_cb l) {
    (void)id; (void)c; (void)n;
    cb = l;
    emit(0, "t", "level 0"); emit(1, "t", "level 1"); emit(2, "t", "level 2");
    emit(3, "t", "level 3"); emit(4, "t", "level 4"); emit(9, "t", "level 9");
    emit(2, "bad\xff", "target not utf8");
    emit(2, "t", "message not utf8 \xc3");
    cb(2, NULL, 0, NULL, 0);
    return 0;
}
static void *spam(void *arg) {
    char msg[64];
    for (int i = 0; i < 200; i++) {
        snprintf(msg, sizeof msg, "thread %d line %d", (int)(intptr_t)arg, i);
        emit(2, "spam", msg);
    }
    return NULL;
}
int32_t iggy_sink_consume(uint32_t id, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                          const uint8_t *m, size_t mn) {
    (void)id; (void)a; (void)an; (void)b; (void)bn; (void)m; (void)mn;
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, spam, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    return 0;
}
int32_t iggy_sink_close(uint32_t id) { (void)id; return 0; }
const char *iggy_sink_version(void) { return "bad \xff version"; }
`

func TestLogCallbackMapsLevelsAndKeepsTarget(t *testing.T) {
	logs := recordLogs(t)
	sink, err := plugin.LoadSink(testkit.CompileC(t, loggingSink, "liblogging_sink"))
	if err != nil {
		t.Fatal(err)
	}
	if sink.Version() != "bad \uFFFD version" {
		t.Fatalf("Version() = %q; want invalid UTF-8 replaced lossily", sink.Version())
	}
	if err := sink.Open(plugin.NextInstanceID(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	want := []logRecord{
		{plugin.LevelTrace, "level 0", "t"},
		{slog.LevelDebug, "level 1", "t"},
		{slog.LevelInfo, "level 2", "t"},
		{slog.LevelWarn, "level 3", "t"},
		{slog.LevelError, "level 4", "t"},
		{slog.LevelError, "level 9", "t"},
		{slog.LevelInfo, "target not utf8", "connector"},
		{slog.LevelInfo, "<invalid utf8>", "t"},
		{slog.LevelInfo, "", ""},
	}
	got := logs.all()
	if len(got) != len(want) {
		t.Fatalf("got %d log records; want %d:\n%s", len(got), len(want), logs.dump())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestLogCallbackFromManyForeignThreads(t *testing.T) {
	logs := recordLogs(t)
	sink, err := plugin.LoadSink(testkit.CompileC(t, loggingSink, "liblogging_sink_threads"))
	if err != nil {
		t.Fatal(err)
	}
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	before := len(logs.all())
	b := encodeBatch(postcard.SchemaRaw, nil, []byte("x"))
	if err := sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs); err != nil {
		t.Fatal(err)
	}
	perThread := map[string]int{}
	for _, rec := range logs.all()[before:] {
		if rec.Target == "spam" {
			perThread[rec.Message[:len("thread 0")]]++
		}
	}
	if len(perThread) != 8 {
		t.Fatalf("lines came from %d threads; want 8: %v", len(perThread), perThread)
	}
	for thread, n := range perThread {
		if n != 200 {
			t.Errorf("%s: %d lines; want 200", thread, n)
		}
	}
}
