package plugin_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

func TestStdoutSinkLifecycle(t *testing.T) {
	logs := recordLogs(t)
	sink := loadSink(t, "stdout_sink")
	if sink.Version() != "0.5.0-edge.4" {
		t.Fatalf("Version() = %q; want upstream's crate version 0.5.0-edge.4", sink.Version())
	}
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{"print_payload":true}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	opened := logs.waitFor(t, "Opened stdout sink connector with ID: ")
	if opened.Level != slog.LevelInfo || opened.Target != "iggy_connector_stdout_sink" ||
		!strings.HasSuffix(opened.Message, ", print payload: true") {
		t.Fatalf("open log line = %+v; want INFO from iggy_connector_stdout_sink ending in print payload: true", opened)
	}

	b := encodeBatch(postcard.SchemaJSON, nil, []byte(`{"a":1}`), []byte(`[true,null]`), []byte(`"x"`))
	if err := sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs); err != nil {
		t.Fatalf("Consume: %v", err)
	}
	logs.waitFor(t, "received: 3 messages, schema: json, stream: s, topic: t, partition: 1, offset: 300, invocation: 1")
	logs.waitFor(t, `Message offset: 1, payload: Json([true,null])`)

	if err := sink.Close(id); err != nil {
		t.Fatalf("Close: %v", err)
	}
	logs.waitFor(t, "is closed.")
	if code, ok := codeOf(sink.Close(id)); !ok || code != -1 {
		t.Fatalf("second Close: code %d (CodeError %v); want -1 for an unknown id", code, ok)
	}
	if code, _ := codeOf(sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs)); code != -1 {
		t.Fatalf("Consume after Close: code %d; want -1", code)
	}
}

// Messages with undecodable headers or invalid JSON are dropped one by one,
// as upstream's SDK does, while the call itself succeeds.
func TestStdoutSinkDropsBadMessages(t *testing.T) {
	logs := recordLogs(t)
	sink := loadSink(t, "stdout_sink")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer sink.Close(id)
	good := encodeBatch(postcard.SchemaJSON, nil, []byte(`1`), []byte(`not json`), []byte(`{}`))
	badHeaders := encodeBatch(postcard.SchemaJSON, []byte{0x01, 0x01, 0x02, '!', '!', 0x01, 0x00}, []byte(`1`))
	withHeaders := encodeBatch(postcard.SchemaText, postcard.AppendHeaderMap(nil, postcard.HeaderMap{{
		Key:   postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("k")},
		Value: postcard.HeaderField{Kind: postcard.HeaderKindUint64, Value: []byte{1, 0, 0, 0, 0, 0, 0, 0}},
	}}), []byte("plain text"), []byte{0xff, 0xfe})

	for _, step := range []struct {
		batch sinkBatch
		want  string
	}{
		{good, "received: 2 messages, schema: json"},
		{badHeaders, "received: 0 messages, schema: json"},
		{withHeaders, "received: 1 messages, schema: text"},
	} {
		if err := sink.Consume(id, step.batch.topicMeta, step.batch.msgsMeta, step.batch.msgs); err != nil {
			t.Fatalf("Consume: %v", err)
		}
		logs.waitFor(t, step.want)
	}
	rec := logs.waitFor(t, "Failed to decode message headers")
	if rec.Level != slog.LevelError || rec.Target != "iggy_connector_sdk::sink" {
		t.Fatalf("header failure logged as %+v; want ERROR from iggy_connector_sdk::sink", rec)
	}
}

func TestSinkRejectsMalformedBuffers(t *testing.T) {
	recordLogs(t)
	sink := loadSink(t, "stdout_sink")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer sink.Close(id)
	good := encodeBatch(postcard.SchemaRaw, nil, []byte("abc"))
	tests := []struct {
		name                      string
		topicMeta, msgsMeta, msgs []byte
	}{
		{"truncated topic metadata", []byte{0x05, 's'}, good.msgsMeta, good.msgs},
		{"unknown schema", good.topicMeta, []byte{0x01, 0x00, 0x09}, good.msgs},
		{"length prefix past the end", good.topicMeta, good.msgsMeta, []byte{0x01, 0x01, 0x00, 0, 0, 0, 0, 0, 0xff, 0xff, 0x03}},
		{"empty messages buffer", good.topicMeta, good.msgsMeta, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sink.Consume(id, tt.topicMeta, tt.msgsMeta, tt.msgs)
			var ce *plugin.CodeError
			if !errors.As(err, &ce) || ce.Code != -1 || ce.Op != "iggy_sink_consume" {
				t.Fatalf("Consume = %v; want iggy_sink_consume returned -1", err)
			}
		})
	}
	if err := sink.Consume(id, good.topicMeta, good.msgsMeta, good.msgs); err != nil {
		t.Fatalf("a good batch after bad ones: %v", err)
	}
}

func TestSinkOpenFailures(t *testing.T) {
	recordLogs(t)
	stdout := loadSink(t, "stdout_sink")
	fault := loadSink(t, "fault")
	taken := plugin.NextInstanceID()
	if err := stdout.Open(taken, []byte(`{}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer stdout.Close(taken)

	tests := []struct {
		name   string
		sink   *plugin.Sink
		id     uint32
		config string
		want   int32
	}{
		{"connector open fails", fault, plugin.NextInstanceID(), `{"open_code":1}`, 1},
		{"config of the wrong type", stdout, plugin.NextInstanceID(), `{"print_payload":"yes"}`, -1},
		{"config not JSON", stdout, plugin.NextInstanceID(), `{print_payload`, -1},
		{"absent config is null", stdout, plugin.NextInstanceID(), ``, -1},
		{"id already open", stdout, taken, `{}`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sink.Open(tt.id, []byte(tt.config))
			want := "iggy_sink_open returned " + strconv.Itoa(int(tt.want))
			if code, ok := codeOf(err); !ok || code != tt.want || err.Error() != want {
				t.Fatalf("Open(%s) = %v; want %q", tt.config, err, want)
			}
		})
	}
}

func TestFaultSinkConsumeCodes(t *testing.T) {
	recordLogs(t)
	sink := loadSink(t, "fault")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{"consume_code":1,"consume_fail_count":2,"close_code":1}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	b := encodeBatch(postcard.SchemaRaw, nil, []byte("x"))
	var codes []int32
	for range 3 {
		code, _ := codeOf(sink.Consume(id, b.topicMeta, b.msgsMeta, b.msgs))
		codes = append(codes, code)
	}
	if codes[0] != 1 || codes[1] != 1 || codes[2] != 0 {
		t.Fatalf("consume codes = %v; want [1 1 0] (two injected failures, then success)", codes)
	}
	if code, _ := codeOf(sink.Close(id)); code != 1 {
		t.Fatalf("Close code = %d; want the injected 1", code)
	}
}

// A hung consume cannot be cancelled; ConsumeContext stops waiting for it.
func TestConsumeContextAbandonsHungCall(t *testing.T) {
	recordLogs(t)
	sink := loadSink(t, "fault")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{"hang_on_batch":1}`)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	b := encodeBatch(postcard.SchemaRaw, nil, []byte("x"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := sink.ConsumeContext(ctx, id, b.topicMeta, b.msgsMeta, b.msgs)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ConsumeContext on a hung plugin = %v; want context.DeadlineExceeded", err)
	}
	// The id is now lost by contract; nothing else may be called for it.
}

func TestContextVariantsPassResults(t *testing.T) {
	recordLogs(t)
	sink := loadSink(t, "fault")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := plugin.NextInstanceID()
	if err := sink.OpenContext(ctx, id, []byte(`{"consume_code":2}`)); err != nil {
		t.Fatalf("OpenContext: %v", err)
	}
	b := encodeBatch(postcard.SchemaRaw, nil, []byte("x"))
	if code, _ := codeOf(sink.ConsumeContext(ctx, id, b.topicMeta, b.msgsMeta, b.msgs)); code != 2 {
		t.Fatalf("ConsumeContext code = %d; want the injected 2", code)
	}
	if err := sink.CloseContext(ctx, id); err != nil {
		t.Fatalf("CloseContext: %v", err)
	}
	canceled, stop := context.WithCancel(context.Background())
	stop()
	if err := sink.OpenContext(canceled, plugin.NextInstanceID(), []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenContext with a canceled context = %v; want context.Canceled", err)
	}
}
