package devbroker

import (
	"bytes"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// FuzzConnection09 feeds arbitrary byte streams to a 0.9 connection, seeded
// with a login and valid requests of every kind the broker handles: it never
// panics, and what it writes back is well-formed frames.
func FuzzConnection09(f *testing.F) {
	client := wire09.U128{Lo: 7, Hi: 9}
	frame := func(op wire09.Operation, code wire09.Command, request, session uint64, body []byte) []byte {
		h := wire09.RequestHeader{Client: client, Operation: op, Code: code, Request: request, Session: session}
		return wire09.AppendRequest(nil, &h, body)
	}
	login, _ := wire09.AppendLoginPassword(nil, wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte("f"), SDKVersion: []byte("1")}, []byte("iggy"), []byte("iggy"))
	demo, events := iggywire.NamedID("demo"), iggywire.NumericID(0)
	ref := iggywire.TopicRef{StreamID: demo, TopicID: events}
	group, _ := iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: ref, GroupID: iggywire.NamedID("g")})
	send, _ := wire09.AppendSendMetadata(nil, wire09.SendMetadata{StreamID: demo, TopicID: events, Partitioning: iggywire.Partitioning{Kind: iggywire.PartitionBalanced}, MessagesCount: 1})
	send, _ = wire09.AppendBatch(send, []iggywire.Message{{ID: [16]byte{1}, OriginTimestamp: 5, Payload: []byte("hi")}})
	poll, _ := wire09.AppendPollMessages(nil, wire09.PollMessages{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: iggywire.NamedID("g")},
		StreamID: demo, TopicID: events, Partition: iggywire.SomePartition(0), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: 5, AutoCommit: true})
	store, _ := wire09.AppendStoreConsumerOffset(nil, wire09.StoreConsumerOffset{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(1)}, StreamID: demo, TopicID: events}, Offset: 0, Ack: 1})
	topic, _ := wire09.AppendCreateTopic(nil, wire09.CreateTopic{StreamID: demo, PartitionsCount: 2, Name: []byte("t")})
	stream := []byte{1, 's'}
	refBody, _ := iggywire.AppendTopicRef(nil, ref)
	requests := [][]byte{
		frame(wire09.OpNonReplicated, wire09.CmdPing, 1, 0, nil),
		frame(wire09.OpRegister, 0, 0, 0, login),
		frame(wire09.OpCreateStream, 0, 1, 1, stream),
		frame(wire09.OpCreateTopic, 0, 2, 1, topic),
		frame(wire09.OpJoinConsumerGroup, 0, 3, 1, group),
		frame(wire09.OpSendMessages, 0, 4, 1, send),
		frame(wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup, 4, 1, group),
		frame(wire09.OpNonReplicated, wire09.CmdPollMessages, 4, 1, poll),
		frame(wire09.OpStoreConsumerOffset, 0, 4, 1, store),
		frame(wire09.OpNonReplicated, wire09.CmdGetTopic, 4, 1, refBody),
		frame(wire09.OpNonReplicated, wire09.CmdGetConsumerGroup, 4, 1, group),
		frame(wire09.OpNonReplicated, wire09.CmdGetStreams, 4, 1, nil),
		frame(wire09.OpLeaveConsumerGroup, 0, 4, 1, group),
		frame(wire09.OpLogout, 0, 5, 1, nil),
	}
	f.Add(bytes.Join(requests, nil))
	f.Add(bytes.Join(requests[:3], nil))
	f.Fuzz(func(t *testing.T, input []byte) {
		var out bytes.Buffer
		c := newFuzzConnection(t, input, &out)
		c.sess.authenticated = false
		_ = c.serve09()
		_ = c.w.Flush()
		replies := out.Bytes()
		for len(replies) > 0 {
			reply, err := wire09.ReadFrame(bytes.NewReader(replies), nil)
			if err != nil {
				t.Fatalf("unreadable reply frame: %v", err)
			}
			switch wire09.FrameTypeOf(reply) {
			case wire09.FrameReply:
				h, _ := wire09.DecodeReplyHeader(reply)
				if h.Status != 0 && len(reply) != wire09.HeaderSize {
					t.Fatalf("status %d with a %d-byte body", h.Status, len(reply)-wire09.HeaderSize)
				}
				if !h.Operation.Defined() {
					t.Fatalf("reply echoes operation %d", h.Operation)
				}
			case wire09.FrameEviction:
			default:
				t.Fatalf("frame type %d written to a client", wire09.FrameTypeOf(reply))
			}
			replies = replies[len(reply):]
		}
	})
}
