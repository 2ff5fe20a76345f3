package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// logRecord is one plugin log line as the host logged it.
type logRecord struct {
	Level   slog.Level
	Message string
	Target  string
}

// logRecorder is a slog.Handler keeping every record; plugin threads write
// to it concurrently.
type logRecorder struct {
	mu      sync.Mutex
	records []logRecord
	changed chan struct{}
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	lr := logRecord{Level: rec.Level, Message: rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "connector_target" {
			lr.Target = a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, lr)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	return nil
}

func (r *logRecorder) all() []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logRecord(nil), r.records...)
}

// find returns the first record whose message contains text.
func (r *logRecorder) find(text string) (logRecord, bool) {
	for _, rec := range r.all() {
		if strings.Contains(rec.Message, text) {
			return rec, true
		}
	}
	return logRecord{}, false
}

// waitFor waits until a record containing text arrives (plugins log from
// their own threads, so lines may land after the call that caused them).
func (r *logRecorder) waitFor(t *testing.T, text string) logRecord {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if rec, ok := r.find(text); ok {
			return rec
		}
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no plugin log line containing %q; got:\n%s", text, r.dump())
		}
	}
}

func (r *logRecorder) dump() string {
	var b strings.Builder
	for _, rec := range r.all() {
		fmt.Fprintf(&b, "  %v [%s] %s\n", rec.Level, rec.Target, rec.Message)
	}
	return b.String()
}

// recordLogs routes plugin logs to a fresh recorder for the test's duration.
func recordLogs(t *testing.T) *logRecorder {
	t.Helper()
	r := &logRecorder{changed: make(chan struct{}, 1)}
	plugin.SetLogger(slog.New(r))
	t.Cleanup(func() { plugin.SetLogger(nil) })
	return r
}

// examplePlugin resolves and returns the path of a compiled example plugin.
func examplePlugin(t testing.TB, name string) string {
	t.Helper()
	dir := testkit.BuildPlugins(t)
	path, err := pluginpath.ResolvePath(filepath.Join(dir, "libiggy_connector_"+name))
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	return path
}

func loadSink(t testing.TB, name string) *plugin.Sink {
	t.Helper()
	s, err := plugin.LoadSink(examplePlugin(t, name))
	if err != nil {
		t.Fatalf("load sink %s: %v", name, err)
	}
	return s
}

func loadSource(t testing.TB, name string) *plugin.Source {
	t.Helper()
	s, err := plugin.LoadSource(examplePlugin(t, name))
	if err != nil {
		t.Fatalf("load source %s: %v", name, err)
	}
	return s
}

// sinkBatch is the three consume buffers.
type sinkBatch struct{ topicMeta, msgsMeta, msgs []byte }

// encodeBatch encodes payloads as one consume call on stream s, topic t,
// partition 1, with offsets from 0 and the given schema.
func encodeBatch(schema postcard.Schema, headers []byte, payloads ...[]byte) sinkBatch {
	msgs := make([]postcard.RawMessage, len(payloads))
	for i, p := range payloads {
		msgs[i] = postcard.RawMessage{
			ID:        postcard.Uint128{Lo: uint64(i + 1)},
			Offset:    uint64(i),
			Timestamp: 1700000000000000,
			Headers:   headers,
			Payload:   p,
		}
	}
	return sinkBatch{
		topicMeta: postcard.AppendTopicMetadata(nil, postcard.TopicMetadata{Stream: "s", Topic: "t"}),
		msgsMeta:  postcard.AppendMessagesMetadata(nil, postcard.MessagesMetadata{PartitionID: 1, CurrentOffset: 300, Schema: schema}),
		msgs:      postcard.AppendRawMessages(nil, postcard.RawMessages{Schema: schema, Messages: msgs}),
	}
}

// batchOf is a source batch as delivered to the host.
type batchOf struct {
	id  uint64
	msg postcard.ProducedMessages
	err error
}

// collect returns a deliver func that decodes every batch onto a channel and
// accepts it.
func collect() (func(uint64, []byte) bool, chan batchOf) {
	ch := make(chan batchOf, 64)
	return func(id uint64, buf []byte) bool {
		msg, err := postcard.DecodeProducedMessages(buf)
		select {
		case ch <- batchOf{id, msg, err}:
			return true
		default:
			return false // test not keeping up: reject, the plugin NACKs
		}
	}, ch
}

func next(t *testing.T, ch chan batchOf) batchOf {
	t.Helper()
	select {
	case b := <-ch:
		if b.err != nil {
			t.Fatalf("batch %d does not decode: %v", b.id, b.err)
		}
		return b
	case <-time.After(15 * time.Second):
		t.Fatal("no batch from the source plugin within 15s")
		return batchOf{}
	}
}

func codeOf(err error) (int32, bool) {
	var ce *plugin.CodeError
	if errors.As(err, &ce) {
		return ce.Code, true
	}
	return 0, false
}

// discardLogger drops every record (for fuzzing, where plugin error lines
// would flood the output).
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
