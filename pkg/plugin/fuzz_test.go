package plugin_test

import (
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

var fuzzSink struct {
	once sync.Once
	sink *plugin.Sink
	id   uint32
	err  error
}

// FuzzNullSinkConsume feeds arbitrary consume buffers to the C null sink,
// whose decoder (plugin_util.h) is shared by every example plugin. The plugin
// must survive every input and agree with the Go postcard decoder: it accepts
// a call (0) exactly when all three buffers decode, and rejects it (-1)
// otherwise.
func FuzzNullSinkConsume(f *testing.F) {
	good := encodeBatch(postcard.SchemaJSON, []byte{0x01, 0x01, 0x04, 'a', 'w', '=', '=', 0x01, 0x04, 'd', 'g', '=', '='},
		[]byte(`{"a":1}`), []byte(`2`))
	f.Add(good.topicMeta, good.msgsMeta, good.msgs)
	f.Add([]byte{0x01, 's', 0x01, 't'}, []byte{0x03, 0xC0, 0x84, 0x3D, 0x05}, []byte{0x01, 0x00})
	f.Add([]byte{0x00, 0x00}, []byte{0x80, 0x00, 0x80, 0x00, 0x00}, []byte{0x01, 0x01, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, topicMeta, msgsMeta, msgs []byte) {
		fuzzSink.once.Do(func() {
			plugin.SetLogger(discardLogger())
			fuzzSink.sink, fuzzSink.err = plugin.LoadSink(examplePlugin(t, "null_sink"))
			if fuzzSink.err == nil {
				fuzzSink.id = plugin.NextInstanceID()
				fuzzSink.err = fuzzSink.sink.Open(fuzzSink.id, []byte(`{}`))
			}
		})
		if fuzzSink.err != nil {
			t.Fatal(fuzzSink.err)
		}
		_, errTopic := postcard.DecodeTopicMetadata(topicMeta)
		_, errMeta := postcard.DecodeMessagesMetadata(msgsMeta)
		_, errMsgs := postcard.DecodeRawMessages(msgs)
		goAccepts := errTopic == nil && errMeta == nil && errMsgs == nil

		err := fuzzSink.sink.Consume(fuzzSink.id, topicMeta, msgsMeta, msgs)
		code, _ := codeOf(err)
		switch {
		case err != nil && code != -1:
			t.Fatalf("consume returned %v; want 0 or -1", err)
		case goAccepts && err != nil:
			t.Fatalf("plugin rejected buffers the Go decoder accepts: %v", err)
		case !goAccepts && err == nil:
			t.Fatalf("plugin accepted buffers the Go decoder rejects: %v / %v / %v", errTopic, errMeta, errMsgs)
		}
	})
}
