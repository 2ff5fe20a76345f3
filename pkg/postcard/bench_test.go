package postcard_test

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

const (
	benchBatch       = 1000
	benchPayloadSize = 100
)

// BenchmarkAppendRawMessages encodes one consume batch (1,000 messages of
// 100-byte payloads, each with an encoded one-entry header map) into a
// reused buffer, as a sink runner does per poll.
func BenchmarkAppendRawMessages(b *testing.B) {
	benchAppendRawMessages(b, rawBatch(benchBatch, benchPayloadSize))
}

// BenchmarkAppendRawMessagesRandomIDs is BenchmarkAppendRawMessages with the fields a sink over
// Iggy 0.9 hands on: random 128-bit ids (0.9 producers draw UUIDs) and 64-bit checksums, whose
// varints take the most bytes.
func BenchmarkAppendRawMessagesRandomIDs(b *testing.B) {
	batch := rawBatch(benchBatch, benchPayloadSize)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range batch.Messages {
		m := &batch.Messages[i]
		m.ID = postcard.Uint128{Hi: r.Uint64() | 1<<63, Lo: r.Uint64()}
		m.Checksum = r.Uint64()
	}
	benchAppendRawMessages(b, batch)
}

func benchAppendRawMessages(b *testing.B, batch postcard.RawMessages) {
	dst := postcard.AppendRawMessages(nil, batch)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst = postcard.AppendRawMessages(dst[:0], batch)
	}
	reportPerMessage(b)
}

// BenchmarkDecodeProducedMessages decodes one send_cb batch (1,000 messages
// of 100-byte payloads with id, timestamp and one header each, plus state).
func BenchmarkDecodeProducedMessages(b *testing.B) {
	enc := postcard.AppendProducedMessages(nil, producedBatch(benchBatch, benchPayloadSize))
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := postcard.DecodeProducedMessages(enc); err != nil {
			b.Fatal(err)
		}
	}
	reportPerMessage(b)
}

// BenchmarkDecodeProducedMessagesNoHeaders is the same batch without
// headers, isolating the cost of base64 header decoding.
func BenchmarkDecodeProducedMessagesNoHeaders(b *testing.B) {
	batch := producedBatch(benchBatch, benchPayloadSize)
	for i := range batch.Messages {
		batch.Messages[i].Headers = nil
	}
	enc := postcard.AppendProducedMessages(nil, batch)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := postcard.DecodeProducedMessages(enc); err != nil {
			b.Fatal(err)
		}
	}
	reportPerMessage(b)
}

// BenchmarkDecodeProducedMessagesPlain decodes the random source's batch shape (no optional
// field set) into a reused slice, as a source runner does per send_cb.
func BenchmarkDecodeProducedMessagesPlain(b *testing.B) {
	batch := producedBatch(benchBatch, benchPayloadSize)
	for i := range batch.Messages {
		batch.Messages[i] = postcard.ProducedMessage{Payload: batch.Messages[i].Payload}
	}
	enc := postcard.AppendProducedMessages(nil, batch)
	reuse := make([]postcard.ProducedMessage, benchBatch)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := postcard.DecodeProducedMessagesInto(enc, reuse)
		if err != nil {
			b.Fatal(err)
		}
		reuse = v.Messages
	}
	reportPerMessage(b)
}

// BenchmarkDecodeRawMessages decodes one consume batch, as a sink plugin's
// SDK does (useful to compare with the Rust side).
func BenchmarkDecodeRawMessages(b *testing.B) {
	enc := postcard.AppendRawMessages(nil, rawBatch(benchBatch, benchPayloadSize))
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := postcard.DecodeRawMessages(enc); err != nil {
			b.Fatal(err)
		}
	}
	reportPerMessage(b)
}

func reportPerMessage(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/msg")
}
