package engine_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// iterator and scratch are the reply and message DecodePoll walks, kept as a connection keeps
// them.
var (
	iterator   wire09.PollIterator
	iterator08 wire08.PollIterator
	scratch    iggywire.PolledMessage
)

// decodePoll decodes a 0.9 poll reply with engine.DecodePoll.
func decodePoll(body []byte, msgs []api.InMessage, headers []api.HeaderEntry, log func(string, ...any)) (api.Batch, []api.InMessage, []api.HeaderEntry, error) {
	var err error
	if iterator, err = wire09.NewPollIterator(body); err != nil {
		return api.Batch{}, msgs, headers, err
	}
	return engine.DecodePoll(&iterator, &scratch, msgs, headers, log)
}

// pollBody is a poll reply holding msgs in one record, stamped at baseOffset.
func pollBody(tb testing.TB, baseOffset uint64, msgs []iggywire.Message) []byte {
	tb.Helper()
	record, err := wire09.AppendBatch(nil, msgs)
	if err != nil {
		tb.Fatal(err)
	}
	wire09.StampBatch(record, 2, baseOffset, 5000)
	body := iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: 2, CurrentOffset: baseOffset + uint64(len(msgs)) - 1, MessagesCount: uint32(len(msgs))})
	return append(body, record...)
}

func headerBytes(tb testing.TB) []byte {
	h, err := api.AppendUserHeaders(nil, []api.HeaderEntry{{Key: []byte("k"), Kind: iggywire.KindString, Value: []byte("v")}})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func TestDecodePoll(t *testing.T) {
	body := pollBody(t, 10, []iggywire.Message{
		{ID: [16]byte{1}, OriginTimestamp: 100, Payload: []byte("a"), Headers: headerBytes(t)},
		{ID: [16]byte{2}, OriginTimestamp: 150, Payload: []byte("bb"), Headers: []byte{0xff}},
	})
	b, msgs, headers, err := decodePoll(body, nil, nil, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if b.PartitionID != 2 || b.CurrentOffset != 11 || len(b.Messages) != 2 || len(msgs) != 2 || len(headers) != 1 {
		t.Fatalf("batch %+v", b)
	}
	m0, m1 := b.Messages[0], b.Messages[1]
	if m0.Offset != 10 || m1.Offset != 11 || m0.Timestamp != 5000 || m1.OriginTimestamp != 150 || string(m1.Payload) != "bb" || m0.ID[0] != 1 {
		t.Fatalf("messages %+v", b.Messages)
	}
	if len(m0.Headers) != 1 || string(m0.Headers[0].Value) != "v" || m1.Headers != nil {
		t.Fatalf("headers %+v / %+v: want k=v, and none for the unparsable ones", m0.Headers, m1.Headers)
	}
}

// Decoding into reused memory allocates nothing per poll.
func TestDecodePollIntoReusedMemoryDoesNotAllocate(t *testing.T) {
	msgs := make([]iggywire.Message, 100)
	for i := range msgs {
		msgs[i] = iggywire.Message{ID: [16]byte{byte(i)}, Payload: []byte("payload"), Headers: headerBytes(t)}
	}
	body := pollBody(t, 0, msgs)
	var buf api.PollBuffers
	noLog := func(string, ...any) {}
	_, buf.Msgs, buf.Headers, _ = decodePoll(body, buf.Msgs, buf.Headers, noLog)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if _, buf.Msgs, buf.Headers, err = decodePoll(body, buf.Msgs[:0], buf.Headers[:0], noLog); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per decode, want 0", allocs)
	}
}

// FuzzDecodePoll09: any 0.9 body decodes or fails, never panics, and what decodes holds as many
// messages as the prefix counts.
func FuzzDecodePoll09(f *testing.F) {
	f.Add(pollBody(f, 3, []iggywire.Message{{Payload: []byte("x"), Headers: headerBytes(f)}, {Payload: []byte("yz")}}))
	f.Add(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: wire09.PartitionResync}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, body []byte) {
		b, _, _, err := decodePoll(body, nil, nil, func(string, ...any) {})
		if err != nil {
			return
		}
		p, _, _ := iggywire.DecodePollPrefix(body)
		if uint32(len(b.Messages)) != p.MessagesCount {
			t.Fatalf("decoded %d messages, the prefix counts %d", len(b.Messages), p.MessagesCount)
		}
	})
}

// A sink's poll of 1,000 messages of 100 bytes over 0.8, decoded into reused memory.
func BenchmarkDecodePoll08x1000x100B(b *testing.B) {
	body := iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{MessagesCount: 1000})
	for i := range 1000 {
		body = wire08.AppendMessageHeader(body, wire08.MessageHeader{Offset: uint64(i), PayloadLength: 100})
		body = append(body, make([]byte, 100)...)
	}
	var msgs []api.InMessage
	var hdrs []api.HeaderEntry
	noLog := func(string, ...any) {}
	b.ReportAllocs()
	for b.Loop() {
		iterator08, _ = wire08.NewPollIterator(body)
		_, msgs, hdrs, _ = engine.DecodePoll(&iterator08, &scratch, msgs[:0], hdrs[:0], noLog)
	}
}
