package devbroker_test

import (
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// A 0.8 client (the official SDK) and a 0.9 client (raw frames) on one broker
// see the same streams, topics, messages and offsets.

// verifyRecords checks every record of a poll reply as a server admits a
// send: frame checksums, batch checksum, layout.
func verifyRecords(t *testing.T, body []byte) {
	t.Helper()
	_, records, err := iggywire.DecodePollPrefix(body)
	if err != nil {
		t.Fatal(err)
	}
	for len(records) > 0 {
		h, err := wire09.DecodeBatchHeader(records)
		if err != nil || h.Length > uint64(len(records)) {
			t.Fatalf("record header %+v: %v", h, err)
		}
		if _, err := wire09.VerifyBatch(records[:h.Length]); err != nil {
			t.Fatalf("a polled record does not verify: %v", err)
		}
		records = records[h.Length:]
	}
}

func TestCrossProtocolMessagesAndOffsets(t *testing.T) {
	srv := testkit.StartBroker(t)
	sdk := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, sdk, 2) // "demo"/"events", created over 0.8
	raw := loggedIn09(t, srv)
	demo, events := iggywire.NamedID("demo"), iggywire.NamedID("events")

	// 0.8 -> 0.9: ids (explicit and server-filled), payloads, user headers, timestamps.
	key, err := iggcon.NewHeaderKeyString("k")
	if err != nil {
		t.Fatal(err)
	}
	headers := []iggcon.HeaderEntry{{Key: key, Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte("v")}}}
	explicitID := iggcon.MessageID{0x6f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	withID, err := iggcon.NewIggyMessage([]byte("from 0.8"), iggcon.WithID(explicitID), iggcon.WithUserHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := iggcon.NewIggyMessage([]byte("plain"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sdk.SendMessages(stream, topic, iggcon.PartitionId(1), []iggcon.IggyMessage{withID, plain, plain}); err != nil {
		t.Fatal(err)
	}
	stored, err := srv.Messages("demo", "events")
	if err != nil || len(stored) != 3 {
		t.Fatalf("stored = %d, %v", len(stored), err)
	}
	pollFrom := func(partition uint32, offset uint64, count uint32) []byte {
		return raw.Do(wire09.OpNonReplicated, wire09.CmdPollMessages, must[[]byte](t)(wire09.AppendPollMessages(nil, wire09.PollMessages{
			Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(1)}, StreamID: demo, TopicID: events,
			Partition: iggywire.SomePartition(partition), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: offset}, Count: count}))).Payload(t)
	}
	body := pollFrom(1, 0, 10)
	verifyRecords(t, body)
	got := poll09(t, raw, wire09.PollMessages{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(1)},
		StreamID: demo, TopicID: events, Partition: iggywire.SomePartition(1), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollFirst}, Count: 10})
	if len(got.msgs) != 3 || got.prefix.CurrentOffset != 2 {
		t.Fatalf("0.9 poll of 0.8 messages = %+v, %d messages", got.prefix, len(got.msgs))
	}
	for i, m := range got.msgs {
		s := stored[i]
		if m.Offset != s.Offset || m.ID != s.ID || string(m.Payload) != string(s.Payload) || string(m.Headers) != string(s.UserHeaders) ||
			m.Timestamp != s.Timestamp || m.OriginTimestamp != s.OriginTimestamp {
			t.Errorf("message %d over 0.9 = %+v, stored %+v", i, m, s)
		}
	}
	if got.msgs[0].ID != [16]byte(explicitID) || got.msgs[1].ID == ([16]byte{}) {
		t.Errorf("ids = %x, %x", got.msgs[0].ID, got.msgs[1].ID)
	}
	slice := pollFrom(1, 1, 1) // part of a 0.8 batch: a record whose frame delta places it
	verifyRecords(t, slice)
	it, _ := wire09.NewPollIterator(slice)
	var m iggywire.PolledMessage
	if !it.Next(&m) || m.Offset != 1 || string(m.Payload) != "plain" {
		t.Errorf("sliced 0.8 batch = %+v, %v", m, it.Err())
	}

	// 0.9 -> 0.8: ids stay as sent (zero too), headers and payloads unchanged.
	tlv := must[[]byte](t)(wire09.AppendTLV(nil, wire09.TLVEntry{KeyKind: iggywire.KindString, Key: []byte("k"), ValueKind: iggywire.KindString, Value: []byte("v")}))
	sent := []iggywire.Message{
		{ID: [16]byte{0xaa, 1}, OriginTimestamp: 1_700_000_000_000_000, Payload: []byte("from 0.9"), Headers: tlv},
		{OriginTimestamp: 1_700_000_000_000_001, Payload: []byte("zero id")},
	}
	raw.Do(wire09.OpSendMessages, 0, sendBody(t, demo, events, iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: 0}, sent))
	if err := sdk.SendMessages(stream, topic, iggcon.PartitionId(0), []iggcon.IggyMessage{plain}); err != nil {
		t.Fatal(err)
	}
	consumer := iggcon.NewSingleConsumer(id(t, "reader"))
	polled, err := sdk.PollMessages(stream, topic, consumer, iggcon.FirstPollingStrategy(), 10, false, ptr(uint32(0)))
	if err != nil || len(polled.Messages) != 3 {
		t.Fatalf("0.8 poll of 0.9 messages = %+v, %v", polled, err)
	}
	for i, want := range sent {
		h := polled.Messages[i].Header
		if h.Offset != uint64(i) || [16]byte(h.Id) != want.ID || string(polled.Messages[i].Payload) != string(want.Payload) ||
			string(polled.Messages[i].UserHeaders) != string(want.Headers) || h.OriginTimestamp != want.OriginTimestamp || h.Checksum == 0 {
			t.Errorf("message %d over 0.8 = %+v, sent %+v", i, polled.Messages[i], want)
		}
	}
	if h := polled.Messages[2].Header; h.Offset != 2 || string(polled.Messages[2].Payload) != "plain" {
		t.Errorf("the 0.8 message after the 0.9 batch = %+v", h)
	}
	mixed := pollFrom(0, 0, 10) // a 0.9 record then a converted 0.8 batch
	verifyRecords(t, mixed)
	if p, _, _ := iggywire.DecodePollPrefix(mixed); p.MessagesCount != 3 || p.CurrentOffset != 2 {
		t.Errorf("mixed poll prefix = %+v", p)
	}

	// Offsets: stored over 0.9 under a consumer name, read over 0.8, and back.
	raw.Do(wire09.OpStoreConsumerOffset, 0, must[[]byte](t)(wire09.AppendStoreConsumerOffset(nil, wire09.StoreConsumerOffset{
		ConsumerOffsetRef: iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NamedID("reader")},
			StreamID: demo, TopicID: events, Partition: iggywire.SomePartition(0)}, Offset: 1, Ack: wire09.AckQuorum}))).Payload(t)
	offset, err := sdk.GetConsumerOffset(consumer, stream, topic, ptr(uint32(0)))
	if err != nil || offset == nil || offset.StoredOffset != 1 {
		t.Fatalf("0.8 reads the 0.9 offset: %+v, %v", offset, err)
	}
	if err := sdk.StoreConsumerOffset(consumer, stream, topic, 2, ptr(uint32(0))); err != nil {
		t.Fatal(err)
	}
	o, found, err := wire09.DecodeConsumerOffset(raw.Do(wire09.OpNonReplicated, wire09.CmdGetConsumerOffset, must[[]byte](t)(wire09.AppendGetConsumerOffset(nil,
		iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NamedID("reader")}, StreamID: demo, TopicID: events}))).Payload(t))
	if err != nil || !found || o.StoredOffset != 2 {
		t.Fatalf("0.9 reads the 0.8 offset: %+v %v %v", o, found, err)
	}

	// One group, members over both protocols: the partitions split between them.
	create := must[[]byte](t)(wire09.AppendCreateConsumerGroup(nil, wire09.CreateConsumerGroup{TopicRef: iggywire.TopicRef{StreamID: demo, TopicID: events}, Name: []byte("g1")}))
	raw.Do(wire09.OpCreateConsumerGroup, 0, create).Payload(t)
	joinRef := must[[]byte](t)(iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: iggywire.TopicRef{StreamID: demo, TopicID: events}, GroupID: iggywire.NamedID("g1")}))
	raw.Do(wire09.OpJoinConsumerGroup, 0, joinRef).Payload(t)
	if err := sdk.JoinConsumerGroup(stream, topic, id(t, "g1")); err != nil {
		t.Fatal(err)
	}
	details, err := sdk.GetConsumerGroup(stream, topic, id(t, "g1"))
	if err != nil || len(details.Members) != 2 {
		t.Fatalf("0.8 sees the group as %+v, %v", details, err)
	}
	a := raw.Do(wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup, joinRef)
	if assignment, err := wire09.DecodeGroupAssignment(a.Body); err != nil || assignment.Partitions.Len() != 1 {
		t.Errorf("the 0.9 member's assignment = %+v, %v; want one of the two partitions", assignment, err)
	}

	// Streams made over 0.9 show over 0.8.
	raw.Do(wire09.OpCreateStream, 0, []byte{4, 'n', 'i', 'n', 'e'}).Payload(t)
	if st, err := sdk.GetStream(id(t, "nine")); err != nil || st.Name != "nine" {
		t.Fatalf("0.8 GetStream of a 0.9 stream = %+v, %v", st, err)
	}
}
