package plugin_test

import (
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

var fuzzSink struct {
	once             sync.Once
	null, stdout     *plugin.Sink
	nullID, stdoutID uint32
	err              error
}

func openFuzzSinks(t *testing.T) {
	plugin.SetLogger(discardLogger())
	open := func(name string) (*plugin.Sink, uint32) {
		sink, err := plugin.LoadSink(examplePlugin(t, name))
		if err != nil {
			fuzzSink.err = err
			return nil, 0
		}
		id := plugin.NextInstanceID()
		if err := sink.Open(id, []byte(`{}`)); err != nil {
			fuzzSink.err = err
		}
		return sink, id
	}
	fuzzSink.null, fuzzSink.nullID = open("null_sink")
	fuzzSink.stdout, fuzzSink.stdoutID = open("stdout_sink")
}

// FuzzNullSinkConsume feeds arbitrary consume buffers to the C null sink,
// whose decoder (plugin_util.h) is shared by every example plugin. The plugin
// must survive every input and agree with the Go postcard decoder: it accepts
// a call (0) exactly when all three buffers decode, and rejects it (-1)
// otherwise. The stdout sink, which also validates headers and JSON payloads
// message by message, must survive the same input with the same answer.
func FuzzNullSinkConsume(f *testing.F) {
	good := encodeBatch(postcard.SchemaJSON, []byte{0x01, 0x01, 0x04, 'a', 'w', '=', '=', 0x01, 0x04, 'd', 'g', '=', '='},
		[]byte(`{"a":1}`), []byte(`2`))
	f.Add(good.topicMeta, good.msgsMeta, good.msgs)
	f.Add([]byte{0x01, 's', 0x01, 't'}, []byte{0x03, 0xC0, 0x84, 0x3D, 0x05}, []byte{0x01, 0x00})
	f.Add([]byte{0x00, 0x00}, []byte{0x80, 0x00, 0x80, 0x00, 0x00}, []byte{0x01, 0x01, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, topicMeta, msgsMeta, msgs []byte) {
		fuzzSink.once.Do(func() { openFuzzSinks(t) })
		if fuzzSink.err != nil {
			t.Fatal(fuzzSink.err)
		}
		_, errTopic := postcard.DecodeTopicMetadata(topicMeta)
		_, errMeta := postcard.DecodeMessagesMetadata(msgsMeta)
		_, errMsgs := postcard.DecodeRawMessages(msgs)
		goAccepts := errTopic == nil && errMeta == nil && errMsgs == nil

		err := fuzzSink.null.Consume(fuzzSink.nullID, topicMeta, msgsMeta, msgs)
		code, _ := codeOf(err)
		switch {
		case err != nil && code != -1:
			t.Fatalf("consume returned %v; want 0 or -1", err)
		case goAccepts && err != nil:
			t.Fatalf("plugin rejected buffers the Go decoder accepts: %v", err)
		case !goAccepts && err == nil:
			t.Fatalf("plugin accepted buffers the Go decoder rejects: %v / %v / %v", errTopic, errMeta, errMsgs)
		}
		errStdout := fuzzSink.stdout.Consume(fuzzSink.stdoutID, topicMeta, msgsMeta, msgs)
		if (errStdout == nil) != (err == nil) {
			t.Fatalf("stdout sink answered %v where the null sink answered %v", errStdout, err)
		}
	})
}
