package plugin_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

const (
	benchMessages    = 1000
	benchPayloadSize = 100
)

// benchRawMessages is a 1,000-message batch of 100-byte payloads, shaped like
// what a sink pump hands over (ids, offsets, timestamps, no headers).
func benchRawMessages() postcard.RawMessages {
	payload := bytes.Repeat([]byte("p"), benchPayloadSize)
	msgs := make([]postcard.RawMessage, benchMessages)
	for i := range msgs {
		msgs[i] = postcard.RawMessage{
			ID:              postcard.Uint128{Hi: 0x0123456789abcdef, Lo: uint64(i) * 0x9e3779b97f4a7c15},
			Offset:          1_000_000 + uint64(i),
			Checksum:        0xdeadbeefcafe + uint64(i),
			Timestamp:       1_700_000_000_000_000 + uint64(i),
			OriginTimestamp: 1_700_000_000_000_000 + uint64(i),
			Payload:         payload,
		}
	}
	return postcard.RawMessages{Schema: postcard.SchemaRaw, Messages: msgs}
}

func reportPerMessage(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perOp), "ns/msg")
}

func BenchmarkEncodeRawMessages1000x100B(b *testing.B) {
	batch := benchRawMessages()
	buf := postcard.AppendRawMessages(nil, batch)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = postcard.AppendRawMessages(buf[:0], batch)
	}
	reportPerMessage(b, benchMessages)
}

// One iggy_sink_consume call of a pre-encoded batch into the null sink, which
// walks and validates every message.
func BenchmarkConsumeNullSink1000x100B(b *testing.B) {
	sink := loadSink(b, "null_sink")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{}`)); err != nil {
		b.Fatal(err)
	}
	defer sink.Close(id)
	topicMeta := postcard.AppendTopicMetadata(nil, postcard.TopicMetadata{Stream: "bench", Topic: "events"})
	msgsMeta := postcard.AppendMessagesMetadata(nil, postcard.MessagesMetadata{PartitionID: 1, CurrentOffset: 1_001_000, Schema: postcard.SchemaRaw})
	msgs := postcard.AppendRawMessages(nil, benchRawMessages())
	b.SetBytes(int64(len(msgs)))
	b.ReportAllocs()
	for b.Loop() {
		if err := sink.Consume(id, topicMeta, msgsMeta, msgs); err != nil {
			b.Fatal(err)
		}
	}
	reportPerMessage(b, benchMessages)
}

// The host's whole sink-side cost per batch: encode into a reused buffer,
// then consume.
func BenchmarkEncodeAndConsumeNullSink1000x100B(b *testing.B) {
	sink := loadSink(b, "null_sink")
	id := plugin.NextInstanceID()
	if err := sink.Open(id, []byte(`{}`)); err != nil {
		b.Fatal(err)
	}
	defer sink.Close(id)
	topicMeta := postcard.AppendTopicMetadata(nil, postcard.TopicMetadata{Stream: "bench", Topic: "events"})
	msgsMeta := postcard.AppendMessagesMetadata(nil, postcard.MessagesMetadata{PartitionID: 1, CurrentOffset: 1_001_000, Schema: postcard.SchemaRaw})
	batch := benchRawMessages()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = postcard.AppendRawMessages(buf[:0], batch)
		if err := sink.Consume(id, topicMeta, msgsMeta, buf); err != nil {
			b.Fatal(err)
		}
	}
	reportPerMessage(b, benchMessages)
}

// Batches of 1,000 messages (100-byte JSON payloads with id, timestamp and a
// header) sent by the fault source from its own thread: the send callback
// copies, decodes with postcard and hands the batch over; the benchmark
// goroutine ACKs it. ns/msg is the whole round trip including the plugin's
// production; decode-ns/msg is DecodeProducedMessages alone, inside the callback.
func BenchmarkSendCallbackDecode1000x100B(b *testing.B) {
	src := loadSource(b, "fault")
	id := plugin.NextInstanceID()
	if err := src.Open(id, []byte(`{"interval_ms":0,"messages_per_batch":1000,"payload_size":100}`), nil); err != nil {
		b.Fatal(err)
	}
	defer src.Close(id)
	var decodeNanos atomic.Int64
	batches := make(chan uint64, 1)
	failed := make(chan error, 1)
	err := src.Start(id, func(batchID uint64, buf []byte) bool {
		start := time.Now()
		msgs, err := postcard.DecodeProducedMessages(buf)
		decodeNanos.Add(int64(time.Since(start)))
		if err == nil && len(msgs.Messages) != benchMessages {
			err = errMessageCount(len(msgs.Messages))
		}
		if err != nil {
			select {
			case failed <- err:
			default:
			}
			return false
		}
		batches <- batchID
		return true
	})
	if err != nil {
		b.Fatal(err)
	}
	first := true
	b.ReportAllocs()
	for b.Loop() {
		if first { // do not count the time before the loop was running
			first = false
			decodeNanos.Store(0)
		}
		select {
		case batchID := <-batches:
			if err := src.BatchResult(id, batchID, true); err != nil {
				b.Fatal(err)
			}
		case err := <-failed:
			b.Fatal(err)
		case <-time.After(10 * time.Second):
			b.Fatal("no batch from the fault source")
		}
	}
	reportPerMessage(b, benchMessages)
	b.ReportMetric(float64(decodeNanos.Load())/float64(b.N)/benchMessages, "decode-ns/msg")
}

type errMessageCount int

func (n errMessageCount) Error() string {
	return "batch of " + itoa64(uint64(n)) + " messages; want 1000"
}
