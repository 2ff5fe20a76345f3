package wire09_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Codec costs per 1,000-message batch of 100-byte payloads.
// Run: go test ./pkg/wire09 -run '^$' -bench . -benchmem

func benchBatch(b *testing.B) ([]iggywire.Message, []byte) {
	payload := make([]byte, 100)
	msgs := make([]iggywire.Message, 1000)
	for i := range msgs {
		msgs[i] = iggywire.Message{ID: [16]byte{byte(i), 1}, OriginTimestamp: uint64(i), Payload: payload}
	}
	record, err := wire09.AppendBatch(nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	return msgs, record
}

func BenchmarkAppendBatch(b *testing.B) {
	msgs, record := benchBatch(b)
	buf := make([]byte, 0, len(record))
	b.SetBytes(int64(len(record)))
	for b.Loop() {
		buf, _ = wire09.AppendBatch(buf[:0], msgs)
	}
}

func BenchmarkVerifyBatch(b *testing.B) {
	_, record := benchBatch(b)
	b.SetBytes(int64(len(record)))
	for b.Loop() {
		if _, err := wire09.VerifyBatch(record); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSlice(b *testing.B) {
	_, record := benchBatch(b)
	buf := make([]byte, 0, len(record))
	for b.Loop() {
		buf = wire09.AppendSlice(buf[:0], record, 500, 500)
	}
}

func BenchmarkPollIterator(b *testing.B) {
	_, record := benchBatch(b)
	body := append(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{MessagesCount: 1000}), record...)
	var m iggywire.PolledMessage
	for b.Loop() {
		it, _ := wire09.NewPollIterator(body)
		for it.Next(&m) {
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
}
