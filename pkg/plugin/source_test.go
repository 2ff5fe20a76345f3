package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// randomRecord is the JSON record upstream's random source produces.
type randomRecord struct {
	ID, Title, Name, Text string
}

// The random source produces JSON records until max_count, keeps its total in
// its MessagePack state (advanced on ACK only), and continues from a saved
// state after a reopen.
func TestRandomSourceRunsToMaxCountAndResumesFromState(t *testing.T) {
	logs := recordLogs(t)
	src := loadSource(t, "random_source")
	if !src.SupportsAck() || src.Version() != "0.5.0-edge.4" {
		t.Fatalf("random source: ack %v, version %q; want v2 ABI and 0.5.0-edge.4", src.SupportsAck(), src.Version())
	}
	config := []byte(`{"interval":"1ms","max_count":25,"messages_range":[3,7],"payload_size":20}`)
	id := plugin.NextInstanceID()
	if err := src.Open(id, config, nil); err != nil {
		t.Fatalf("Open: %v", err)
	}
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatalf("Start: %v", err)
	}
	total := 0
	var lastState []byte
	for lastID := uint64(0); total < 25; {
		b := next(t, batches)
		if b.id != lastID+1 {
			t.Fatalf("batch id %d after %d; want consecutive ids", b.id, lastID)
		}
		lastID = b.id
		n := len(b.msg.Messages)
		if total+n > 25 || total+n < 25 && (n < 3 || n > 6) {
			t.Fatalf("batch of %d messages after %d; want 3..6 (range [3,7)), fewer only to reach 25", n, total)
		}
		for _, m := range b.msg.Messages {
			var rec randomRecord
			if err := json.Unmarshal(m.Payload, &rec); err != nil || len(rec.Text) != 20 || rec.Title != "Hello" || len(rec.ID) != 36 {
				t.Fatalf("payload %s: want a random record with a uuid and 20 characters of text (%v)", m.Payload, err)
			}
		}
		total += n
		if !b.msg.HasState {
			t.Fatalf("batch %d has no state", b.id)
		}
		lastState = b.msg.State
		if err := src.BatchResult(id, b.id, true); err != nil {
			t.Fatalf("BatchResult(ACK): %v", err)
		}
	}
	if !bytes.Equal(lastState, []byte{0x91, 25}) {
		t.Fatalf("final state % x; want 91 19 (MessagePack [25])", lastState)
	}
	empty := next(t, batches)
	if len(empty.msg.Messages) != 0 || empty.msg.HasState {
		t.Fatalf("after max_count: %d messages, state %v; want an empty batch without state", len(empty.msg.Messages), empty.msg.HasState)
	}
	if err := src.BatchResult(id, empty.id, true); err != nil {
		t.Fatalf("BatchResult: %v", err)
	}
	if err := src.Close(id); err != nil {
		t.Fatalf("Close: %v", err)
	}
	logs.waitFor(t, "closed. Total messages produced: 25")

	again := plugin.NextInstanceID()
	if err := src.Open(again, config, lastState); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer src.Close(again)
	logs.waitFor(t, "Messages produced: 25")
	deliver, batches = collect()
	if err := src.Start(again, deliver); err != nil {
		t.Fatal(err)
	}
	if b := next(t, batches); len(b.msg.Messages) != 0 {
		t.Fatalf("reopened source produced %d messages; want none (max_count reached per state)", len(b.msg.Messages))
	}
}

// NACKs and rejected batches do not advance the state; ACKs do.
func TestRandomSourceStateAdvancesOnlyOnAck(t *testing.T) {
	recordLogs(t)
	src := loadSource(t, "random_source")
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval":"1ms","messages_range":[1,4],"payload_size":1}`), nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close(id)
	var reject atomic.Bool
	reject.Store(true)
	deliver, batches := collect()
	rejected := make(chan uint64, 1)
	if err := src.Start(id, func(batchID uint64, buf []byte) bool {
		if reject.CompareAndSwap(true, false) {
			rejected <- batchID
			return false
		}
		return deliver(batchID, buf)
	}); err != nil {
		t.Fatal(err)
	}
	produced := func(b batchOf) uint64 { return uint64(b.msg.State[1]) }

	first := <-rejected // plugin NACKs it itself, then retries under a new id
	b1 := next(t, batches)
	if b1.id != first+1 || produced(b1) != uint64(len(b1.msg.Messages)) {
		t.Fatalf("after a rejected batch: id %d state %d with %d messages; want id %d and state counting only this batch",
			b1.id, produced(b1), len(b1.msg.Messages), first+1)
	}
	if err := src.BatchResult(id, b1.id, false); err != nil {
		t.Fatalf("NACK: %v", err)
	}
	b2 := next(t, batches)
	if produced(b2) != uint64(len(b2.msg.Messages)) {
		t.Fatalf("after NACK the state is %d for %d messages; want no progress carried over", produced(b2), len(b2.msg.Messages))
	}
	if err := src.BatchResult(id, b2.id, true); err != nil {
		t.Fatalf("ACK: %v", err)
	}
	b3 := next(t, batches)
	if produced(b3) != produced(b2)+uint64(len(b3.msg.Messages)) {
		t.Fatalf("after ACK the state is %d; want %d + %d", produced(b3), produced(b2), len(b3.msg.Messages))
	}
	if code, _ := codeOf(src.BatchResult(id, b3.id+7, true)); code != -1 {
		t.Fatalf("BatchResult for a batch that is not pending: code %d; want -1", code)
	}
	if err := src.BatchResult(id, b3.id, true); err != nil {
		t.Fatalf("the pending batch must still be answerable after a wrong id: %v", err)
	}
}

// The fifth consecutive NACK stops the poll loop (docs/plugin-abi.md §4.2).
func TestFiveNacksStopTheLoop(t *testing.T) {
	logs := recordLogs(t)
	src := loadSource(t, "fault")
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval_ms":0,"messages_per_batch":1}`), nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close(id)
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		b := next(t, batches)
		if seq := b.msg.Messages[0].Payload; string(seq) != `{"seq":0}` {
			t.Fatalf("NACKed batch %d carries %s; want the rejected message again", i, seq)
		}
		err := src.BatchResult(id, b.id, false)
		if i < 5 && err != nil {
			t.Fatalf("NACK %d: %v", i, err)
		}
		if i == 5 {
			if code, _ := codeOf(err); code != -1 {
				t.Fatalf("fifth NACK: %v; want -1 (loop stopped)", err)
			}
		}
	}
	logs.waitFor(t, "after 5 consecutive NACKs")
}

// Closing with a batch in flight NACKs it inside the plugin; a late answer
// gets -1, and close returns normally.
func TestCloseWithPendingBatch(t *testing.T) {
	recordLogs(t)
	src := loadSource(t, "fault")
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval_ms":0}`), nil); err != nil {
		t.Fatal(err)
	}
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatal(err)
	}
	b := next(t, batches)
	if err := src.Close(id); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if code, _ := codeOf(src.BatchResult(id, b.id, true)); code != -1 {
		t.Fatalf("answer after close: code %d; want -1", code)
	}
}

func TestSourceStartFailures(t *testing.T) {
	recordLogs(t)
	src := loadSource(t, "fault")
	deliver, _ := collect()
	if code, _ := codeOf(src.Start(plugin.NextInstanceID(), deliver)); code != -1 {
		t.Fatalf("Start of an id never opened: code %d; want -1", code)
	}
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"handle_code":-1}`), nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close(id)
	err := src.Start(id, deliver)
	if code, _ := codeOf(err); code != -1 || err.Error() != "iggy_source_handle_v2 returned -1" {
		t.Fatalf("Start = %v; want iggy_source_handle_v2 returned -1", err)
	}
	if code, _ := codeOf(src.Open(plugin.NextInstanceID(), []byte(`{"open_code":1}`), nil)); code != 1 {
		t.Fatalf("open failure: code %d; want 1", code)
	}
}

// The fault source sends ids, timestamps and a header; state restores it.
func TestFaultSourceMessagesAndState(t *testing.T) {
	logs := recordLogs(t)
	src := loadSource(t, "fault")
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval_ms":0,"messages_per_batch":2,"payload_size":40}`), []byte{0x91, 0x07}); err != nil {
		t.Fatal(err)
	}
	defer src.Close(id)
	logs.waitFor(t, "Messages produced: 7")
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatal(err)
	}
	b := next(t, batches)
	if len(b.msg.Messages) != 2 || !bytes.Equal(b.msg.State, []byte{0x91, 9}) {
		t.Fatalf("batch: %d messages, state % x; want 2 and 91 09", len(b.msg.Messages), b.msg.State)
	}
	m := b.msg.Messages[0]
	wantHeaders := postcard.HeaderMap{{
		Key:   postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("seq")},
		Value: postcard.HeaderField{Kind: postcard.HeaderKindUint64, Value: []byte{7, 0, 0, 0, 0, 0, 0, 0}},
	}}
	if m.ID == nil || *m.ID != (postcard.Uint128{Lo: 8}) || m.Timestamp == nil || m.Checksum != nil ||
		m.Headers == nil || !headersEqual(*m.Headers, wantHeaders) {
		t.Fatalf("message %+v; want id 8, a timestamp, no checksum, header seq=7", m)
	}
	var payload struct {
		Seq int    `json:"seq"`
		Pad string `json:"pad"`
	}
	if err := json.Unmarshal(m.Payload, &payload); err != nil || payload.Seq != 7 || len(m.Payload) != 40 {
		t.Fatalf("payload %s (%d bytes): want seq 7 padded to 40 bytes (%v)", m.Payload, len(m.Payload), err)
	}
	if err := src.BatchResult(id, b.id, true); err != nil {
		t.Fatal(err)
	}
}

func headersEqual(a, b postcard.HeaderMap) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key.Kind != b[i].Key.Kind || a[i].Value.Kind != b[i].Value.Kind ||
			!bytes.Equal(a[i].Key.Value, b[i].Key.Value) || !bytes.Equal(a[i].Value.Value, b[i].Value.Value) {
			return false
		}
	}
	return true
}

// docs/architecture.md, decision 8: a source with the pre-ack ABI loads and runs without acks.
func TestLegacySourceRunsWithoutAcks(t *testing.T) {
	recordLogs(t)
	lib := testkit.BuildPlugins(t) + "/" + testkit.LegacyFaultPlugin
	src, err := plugin.LoadSource(lib)
	if err != nil {
		t.Fatalf("LoadSource(legacy): %v", err)
	}
	if src.SupportsAck() {
		t.Fatal("legacy source reports SupportsAck")
	}
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval_ms":1,"messages_per_batch":1}`), nil); err != nil {
		t.Fatal(err)
	}
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatalf("Start(legacy): %v", err)
	}
	for want := uint64(1); want <= 3; want++ {
		b := next(t, batches)
		if b.id != want || string(b.msg.Messages[0].Payload) != `{"seq":`+itoa64(want-1)+`}` {
			t.Fatalf("legacy batch %d: %+v; want host-numbered batches of consecutive messages", want, b)
		}
	}
	if err := src.BatchResult(id, 1, true); !errors.Is(err, plugin.ErrNoLegacyAck) {
		t.Fatalf("BatchResult on a legacy source = %v; want ErrNoLegacyAck", err)
	}
	if err := src.Close(id); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// burstSource calls send from eight threads at once, 100 batches each,
// without waiting for answers, and counts what the host accepted and acked.
const burstSource = `
#include "plugin_util.h"
#define THREADS 8
#define BATCHES 100
typedef struct { uint32_t id; iggy_send_cb send; int thread; } job;
static pthread_t threads[THREADS];
static job jobs[THREADS];
static _Atomic int accepted, acked;
static void *run(void *arg) {
    job *j = arg;
    for (int i = 0; i < BATCHES; i++) {
        pu_buf b = {0};
        char payload[32];
        int n = snprintf(payload, sizeof payload, "%d:%d", j->thread, i);
        pu_put_varint(&b, IGGY_SCHEMA_TEXT);
        pu_put_varint(&b, 1);
        for (int k = 0; k < 5; k++) pu_put_u8(&b, 0);
        pu_put_bytes(&b, payload, (size_t)n);
        pu_put_u8(&b, 0);
        uint64_t batch = (uint64_t)j->thread * BATCHES + (uint64_t)i + 1;
        if (j->send(j->id, batch, b.data, b.len) == 0) accepted++;
        memset(b.data, 0xEE, b.len); /* the host must have copied it */
        pu_buf_free(&b);
    }
    return NULL;
}
int32_t iggy_source_open(uint32_t id, const uint8_t *c, size_t n, const uint8_t *s, size_t sn, iggy_log_cb l) {
    (void)id; (void)c; (void)n; (void)s; (void)sn; pu_log_init(l); return 0;
}
int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send) {
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (job){id, send, t};
        pthread_create(&threads[t], NULL, run, &jobs[t]);
    }
    return 0;
}
int32_t iggy_source_batch_result(uint32_t id, uint64_t batch, uint8_t r) {
    (void)id; (void)batch; if (r == 0) acked++; return 0;
}
int32_t iggy_source_close(uint32_t id) {
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    pu_log(IGGY_LOG_INFO, "burst", "burst source %u: accepted %d, acked %d", id, accepted, acked);
    return 0;
}
const char *iggy_source_version(void) { return "0.0.1"; }
`

func TestSendCallbacksFromManyForeignThreadsAtOnce(t *testing.T) {
	logs := recordLogs(t)
	src, err := plugin.LoadSource(testkit.CompileC(t, burstSource, "libburst_source"))
	if err != nil {
		t.Fatal(err)
	}
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[uint64]string{}
	answers := make(chan uint64, 800)
	err = src.Start(id, func(batchID uint64, buf []byte) bool {
		msg, err := postcard.DecodeProducedMessages(buf)
		if err != nil || len(msg.Messages) != 1 {
			return false
		}
		mu.Lock()
		seen[batchID] = string(msg.Messages[0].Payload)
		mu.Unlock()
		answers <- batchID
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 800 {
		select {
		case batchID := <-answers:
			if err := src.BatchResult(id, batchID, true); err != nil {
				t.Fatalf("BatchResult(%d): %v", batchID, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("burst batches stopped arriving")
		}
	}
	if err := src.Close(id); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, "accepted 800, acked 800")
	for batchID, payload := range seen {
		thread, i := (batchID-1)/100, (batchID-1)%100
		if want := itoa64(thread) + ":" + itoa64(i); payload != want {
			t.Fatalf("batch %d carried %q; want %q (copied before the plugin scribbled over it)", batchID, payload, want)
		}
	}
	if len(seen) != 800 {
		t.Fatalf("saw %d distinct batches; want 800", len(seen))
	}
}

func itoa64(n uint64) string { return strconv.FormatUint(n, 10) }

// nil state is NULL ("no state"); an empty non-nil state is passed as a
// non-NULL pointer, which a plugin treats as a corrupt state.
func TestSourceStateNilVersusEmpty(t *testing.T) {
	logs := recordLogs(t)
	src := loadSource(t, "random_source")
	fresh := plugin.NextInstanceID()
	if err := src.Open(fresh, []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close(fresh)
	logs.waitFor(t, "Opened random source connector with ID: "+itoa64(uint64(fresh)))
	if rec, ok := logs.find("Failed to deserialize state"); ok {
		t.Fatalf("nil state reached the plugin as a state: %+v", rec)
	}
	corrupt := plugin.NextInstanceID()
	if err := src.Open(corrupt, []byte(`{}`), []byte{}); err != nil {
		t.Fatal(err)
	}
	defer src.Close(corrupt)
	rec := logs.waitFor(t, "Failed to deserialize state for Random source connector with ID: "+itoa64(uint64(corrupt)))
	if rec.Level != slog.LevelWarn {
		t.Fatalf("corrupt state logged at %v; want WARN", rec.Level)
	}
}

func TestSourceContextVariants(t *testing.T) {
	recordLogs(t)
	src := loadSource(t, "fault")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := plugin.NextInstanceID()
	if err := src.OpenContext(ctx, id, []byte(`{"interval_ms":0}`), nil); err != nil {
		t.Fatalf("OpenContext: %v", err)
	}
	deliver, batches := collect()
	if err := src.Start(id, deliver); err != nil {
		t.Fatal(err)
	}
	b := next(t, batches)
	if err := src.BatchResultContext(ctx, id, b.id, true); err != nil {
		t.Fatalf("BatchResultContext: %v", err)
	}
	if code, _ := codeOf(src.BatchResultContext(ctx, id, b.id, true)); code != -1 {
		t.Fatalf("answering the same batch twice: code %d; want -1", code)
	}
	if err := src.CloseContext(ctx, id); err != nil {
		t.Fatalf("CloseContext: %v", err)
	}

	hung := plugin.NextInstanceID()
	if err := src.Open(hung, []byte(`{"close_hang":true}`), nil); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer stop()
	if err := src.CloseContext(short, hung); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CloseContext on a hung close = %v; want context.DeadlineExceeded", err)
	}
}
