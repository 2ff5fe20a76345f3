package wire08_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// The worked examples of the 0.8 protocol (the official SDK v0.8.0's bytes), byte for byte, through the encoders and
// decoders of this package (the dev broker's tests check the same bytes over TCP).

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// frame builds a request with body and fails the test on an encoding error.
func frame(t testing.TB, code wire08.Command, body func([]byte) ([]byte, error)) []byte {
	t.Helper()
	b, start := wire08.StartRequest([]byte("kept"), code)
	b, err := body(b)
	if err != nil {
		t.Fatal(err)
	}
	b = wire08.FinishRequest(b, start)
	if string(b[:4]) != "kept" {
		t.Fatalf("the bytes before the frame changed: %q", b[:4])
	}
	return b[4:]
}

var (
	stream0   = iggywire.NumericID(0)
	topic0    = iggywire.TopicRef{StreamID: stream0, TopicID: iggywire.NumericID(0)}
	consumer1 = iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(1)}
)

const origin = 1_700_000_000_000_000

func TestSpecVectorRequests(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"8.1 LoginUser", frame(t, wire08.CmdLoginUser, func(b []byte) ([]byte, error) {
			return wire08.AppendLoginUser(b, wire08.LoginUser{Username: []byte("iggy"), Password: []byte("iggy"), Version: []byte("0.8.0")})
		}), "1b000000 26000000 0469676779 0469676779 05000000 302e382e30 00000000"},
		{"8.3 CreateStream", frame(t, wire08.CmdCreateStream, func(b []byte) ([]byte, error) {
			return wire08.AppendCreateStream(b, []byte("demo"))
		}), "09000000 ca000000 0464656d6f"},
		{"8.4 SendMessages, balanced, a header", frame(t, wire08.CmdSendMessages, func(b []byte) ([]byte, error) {
			return wire08.AppendSendMessages(b, wire08.SendMetadata{TopicRef: topic0, Partitioning: iggywire.Partitioning{Kind: iggywire.PartitionBalanced}},
				[]iggywire.Message{{OriginTimestamp: origin, Payload: []byte("hello"), Headers: unhex(t, "02010000006b 020100000076")}})
		}), "7b000000 65000000 12000000 010400000000 010400000000 0100 01000000" +
			"00000000 51000000 0000000000000000" +
			"0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000" +
			"00401e18240a0600 0c000000 05000000 0000000000000000 68656c6c6f 02010000006b 020100000076"},
		{"8.4 SendMessages, partition 0", frame(t, wire08.CmdSendMessages, func(b []byte) ([]byte, error) {
			return wire08.AppendSendMessages(b, wire08.SendMetadata{TopicRef: topic0, Partitioning: iggywire.Partitioning{Kind: iggywire.PartitionByID}},
				[]iggywire.Message{{OriginTimestamp: origin, Payload: []byte("hello")}})
		}), "73000000 65000000 16000000 010400000000 010400000000 020400000000 01000000" +
			"00000000 45000000 0000000000000000" +
			"0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000" +
			"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f"},
		{"8.5 PollMessages", frame(t, wire08.CmdPollMessages, func(b []byte) ([]byte, error) {
			return wire08.AppendPollMessages(b, wire08.PollMessages{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{Consumer: consumer1,
				StreamID: stream0, TopicID: iggywire.NumericID(0), Partition: iggywire.SomePartition(0)},
				Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: 10, AutoCommit: true})
		}), "2a000000 64000000 01 0104 01000000 010400000000 010400000000 01 00000000 05 0000000000000000 0a000000 01"},
		{"8.6 StoreConsumerOffset", frame(t, wire08.CmdStoreConsumerOffset, func(b []byte) ([]byte, error) {
			return wire08.AppendStoreConsumerOffset(b, iggywire.ConsumerOffsetRef{Consumer: consumer1, StreamID: stream0,
				TopicID: iggywire.NumericID(0), Partition: iggywire.SomePartition(0)}, 7)
		}), "24000000 79000000 01 0104 01000000 010400000000 010400000000 01 00000000 0700000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if want := unhex(t, tt.want); !bytes.Equal(tt.got, want) {
				t.Fatalf("request\n% x\nwant\n% x", tt.got, want)
			}
		})
	}
}

func TestSpecVectorReplies(t *testing.T) {
	// 8.1: the login reply, user id 0.
	if id, err := wire08.DecodeLoginReply(unhex(t, "00000000")); err != nil || id != 0 {
		t.Fatalf("login reply: %d, %v", id, err)
	}
	// 8.2: one healthy leader at 127.0.0.1:8090.
	meta := unhex(t, "0b000000 73696e676c652d6e6f6465 01000000 09000000 696767792d6e6f6465 09000000 3132372e302e302e31 9a1f 901f b80b 9c1f 0000")
	m := wire08.ClusterMetadata{Name: []byte("single-node"), Nodes: []wire08.ClusterNode{{Name: []byte("iggy-node"), IP: []byte("127.0.0.1"),
		TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WSPort: 8092}}}
	if got := wire08.AppendClusterMetadata(nil, m); !bytes.Equal(got, meta) {
		t.Fatalf("cluster metadata\n% x\nwant\n% x", got, meta)
	}
	if got, err := wire08.DecodeClusterMetadata(meta); err != nil || len(got.Nodes) != 1 || got.Nodes[0].TCPPort != 8090 || string(got.Nodes[0].IP) != "127.0.0.1" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	// 8.3: the stream record.
	stream := unhex(t, "00000000 00401e18240a0600 00000000 0000000000000000 0000000000000000 0464656d6f")
	if got := wire08.AppendStream(nil, wire08.Stream{CreatedAt: origin, Name: []byte("demo")}); !bytes.Equal(got, stream) {
		t.Fatalf("stream record\n% x\nwant\n% x", got, stream)
	}
	// 8.5: a poll reply with one message, whose checksum the server computes.
	reply := unhex(t, "00000000 0000000000000000 01000000"+
		"f9c40db80c4ba572 6f1c2a3b4c5d4e7f8a9bacbdcedfe0f1 0000000000000000 4022201824 0a0600"+
		"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f")
	it, err := wire08.NewPollIterator(reply)
	if err != nil {
		t.Fatal(err)
	}
	var msg iggywire.PolledMessage
	if !it.Next(&msg) || msg.Offset != 0 || msg.Timestamp != 1_700_000_000_123_456 || msg.OriginTimestamp != origin ||
		msg.Checksum != 0x72a54b0cb80dc4f9 || string(msg.Payload) != "hello" || len(msg.Headers) != 0 || msg.ID[0] != 0x6f {
		t.Fatalf("message %+v", msg)
	}
	if it.Next(&msg) || it.Err() != nil {
		t.Fatalf("a second message, or %v", it.Err())
	}
	stored := bytes.Clone(reply[16:])
	clear(stored[:8])
	wire08.StampMessage(stored, 0, 1_700_000_000_123_456)
	if !bytes.Equal(stored, reply[16:]) {
		t.Fatalf("stamped\n% x\nwant\n% x", stored, reply[16:])
	}
}

// A source's batch of 1,000 messages of 100 bytes, encoded into a reused buffer.
func BenchmarkAppendSendMessages1000x100B(b *testing.B) {
	msgs := make([]iggywire.Message, 1000)
	for i := range msgs {
		msgs[i] = iggywire.Message{OriginTimestamp: 1, Payload: bytes.Repeat([]byte{'x'}, 100)}
	}
	md := wire08.SendMetadata{TopicRef: iggywire.TopicRef{StreamID: iggywire.NamedID("bench"), TopicID: iggywire.NamedID("source")},
		Partitioning: iggywire.Partitioning{Kind: iggywire.PartitionBalanced}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		frame, start := wire08.StartRequest(buf[:0], wire08.CmdSendMessages)
		frame, err := wire08.AppendSendMessages(frame, md, msgs)
		if err != nil {
			b.Fatal(err)
		}
		buf = wire08.FinishRequest(frame, start)
	}
}
