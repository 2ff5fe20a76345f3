package wire08_test

import (
	"bytes"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	binaryserialization "github.com/apache/iggy/foreign/go/binary_serialization"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// The official Go SDK v0.8.0 is the reference of these bytes: every request our 0.8 client
// writes is the SDK's request for the same call, and every poll reply is read as the SDK reads it.

// recordingServer answers every request on its connections, keeping each request's bytes: a
// login with user id 0, the cluster metadata with one node (itself), anything else an empty OK.
func recordingServer(t *testing.T) (addr string, requests <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	out := make(chan []byte, 256)
	_, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)
	answers := map[wire08.Command][]byte{
		wire08.CmdLoginUser:          wire08.AppendLoginReply(nil, 0),
		wire08.CmdLoginWithToken:     wire08.AppendLoginReply(nil, 0),
		wire08.CmdGetClusterMetadata: wire08.AppendClusterMetadata(nil, wire08.ClusterMetadata{Name: []byte("c"), Nodes: []wire08.ClusterNode{{Name: []byte("n"), IP: []byte("127.0.0.1"), TCPPort: uint16(port)}}}),
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				for {
					head := make([]byte, wire08.RequestHeadSize)
					if _, err := io.ReadFull(conn, head); err != nil {
						return
					}
					length, code := wire08.DecodeRequestHead(head)
					req := append(head, make([]byte, length-4)...)
					if _, err := io.ReadFull(conn, req[wire08.RequestHeadSize:]); err != nil {
						return
					}
					if code != wire08.CmdGetClusterMetadata {
						out <- req
					}
					answer := answers[code]
					if _, err := conn.Write(append(wire08.AppendReplyHead(nil, iggywire.StatusOK, len(answer)), answer...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), out
}

// recordingSDK is an SDK client of a recordingServer.
func recordingSDK(t *testing.T) (*tcp.IggyTcpClient, <-chan []byte) {
	t.Helper()
	log.SetOutput(io.Discard) // the SDK logs its leader check with the standard logger
	addr, requests := recordingServer(t)
	sdk, err := tcp.NewIggyTcpClient(tcp.WithServerAddress(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Close() })
	return sdk, requests
}

func sdkID[T uint32 | string](t testing.TB, v T) iggcon.Identifier {
	t.Helper()
	id, err := iggcon.NewIdentifier(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ours is the wire identifier of an SDK one.
func ours(id iggcon.Identifier) iggywire.Identifier {
	if id.Kind == iggcon.NumericId {
		n, _ := id.Uint32()
		return iggywire.NumericID(n)
	}
	s, _ := id.String()
	return iggywire.NamedID(s)
}

// call runs an SDK call whose reply the recording server cannot answer properly (the SDK then
// fails or panics decoding it: only its request matters here).
func call(fn func()) {
	defer func() { _ = recover() }()
	fn()
}

func next(t *testing.T, requests <-chan []byte) []byte {
	t.Helper()
	select {
	case r := <-requests:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the SDK wrote no request")
		return nil
	}
}

// Every request the 0.8 client makes is the SDK's for the same call, for numeric and named
// identifiers.
func TestRequestsMatchTheSDK(t *testing.T) {
	sdk, requests := recordingSDK(t)
	partition := uint32(3)
	for _, ids := range [][2]iggcon.Identifier{{sdkID(t, uint32(0)), sdkID(t, uint32(4_000_000_000))}, {sdkID(t, "orders"), sdkID(t, strings.Repeat("t", 255))}} {
		stream, topic := ids[0], ids[1]
		ref := iggywire.TopicRef{StreamID: ours(stream), TopicID: ours(topic)}
		group := sdkID(t, "workers")
		gref := iggywire.GroupRef{TopicRef: ref, GroupID: ours(group)}
		groupConsumer := iggcon.NewGroupConsumer(group)
		offsetRef := iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: gref.GroupID},
			StreamID: ref.StreamID, TopicID: ref.TopicID, Partition: iggywire.SomePartition(partition)}
		noPartition := offsetRef
		noPartition.Partition = iggywire.OptionalPartition{}
		tests := []struct {
			name string
			sdk  func()
			ours []byte
		}{
			{"login user", func() { _, _ = sdk.LoginUser("iggy", "secret") }, frame(t, wire08.CmdLoginUser, func(b []byte) ([]byte, error) {
				return wire08.AppendLoginUser(b, wire08.LoginUser{Username: []byte("iggy"), Password: []byte("secret"), Version: []byte("0.8.0")})
			})},
			{"login with token", func() { _, _ = sdk.LoginWithPersonalAccessToken("pat-secret") }, frame(t, wire08.CmdLoginWithToken, func(b []byte) ([]byte, error) {
				return wire08.AppendLoginToken(b, []byte("pat-secret"))
			})},
			{"ping", func() { _ = sdk.Ping() }, wire08.AppendRequest(nil, wire08.CmdPing, nil)},
			{"get stream", func() { call(func() { _, _ = sdk.GetStream(stream) }) }, frame(t, wire08.CmdGetStream, func(b []byte) ([]byte, error) {
				return iggywire.AppendIdentifier(b, ref.StreamID)
			})},
			{"create stream", func() { call(func() { _, _ = sdk.CreateStream("orders") }) }, frame(t, wire08.CmdCreateStream, func(b []byte) ([]byte, error) {
				return wire08.AppendCreateStream(b, []byte("orders"))
			})},
			{"get topic", func() { call(func() { _, _ = sdk.GetTopic(stream, topic) }) }, frame(t, wire08.CmdGetTopic, func(b []byte) ([]byte, error) {
				return iggywire.AppendTopicRef(b, ref)
			})},
			{"create topic", func() {
				call(func() {
					_, _ = sdk.CreateTopic(stream, "events", 12, iggcon.CompressionAlgorithmNone, iggcon.Duration(3_600_000_000), 2<<30, nil)
				})
			}, frame(t, wire08.CmdCreateTopic, func(b []byte) ([]byte, error) {
				return wire08.AppendCreateTopic(b, wire08.CreateTopic{StreamID: ref.StreamID, PartitionsCount: 12, Compression: wire08.CompressionNone,
					MessageExpiry: 3_600_000_000, MaxTopicSize: 2 << 30, Name: []byte("events")})
			})},
			{"create partitions", func() { _ = sdk.CreatePartitions(stream, topic, 5) }, frame(t, wire08.CmdCreatePartitions, func(b []byte) ([]byte, error) {
				return wire08.AppendPartitions(b, wire08.Partitions{TopicRef: ref, Count: 5})
			})},
			{"delete partitions", func() { _ = sdk.DeletePartitions(stream, topic, 2) }, frame(t, wire08.CmdDeletePartitions, func(b []byte) ([]byte, error) {
				return wire08.AppendPartitions(b, wire08.Partitions{TopicRef: ref, Count: 2})
			})},
			{"get consumer group", func() { call(func() { _, _ = sdk.GetConsumerGroup(stream, topic, group) }) }, frame(t, wire08.CmdGetConsumerGroup, func(b []byte) ([]byte, error) {
				return iggywire.AppendGroupRef(b, gref)
			})},
			{"create consumer group", func() { call(func() { _, _ = sdk.CreateConsumerGroup(stream, topic, "workers") }) }, frame(t, wire08.CmdCreateConsumerGroup, func(b []byte) ([]byte, error) {
				return wire08.AppendCreateConsumerGroup(b, ref, []byte("workers"))
			})},
			{"join consumer group", func() { _ = sdk.JoinConsumerGroup(stream, topic, group) }, frame(t, wire08.CmdJoinConsumerGroup, func(b []byte) ([]byte, error) {
				return iggywire.AppendGroupRef(b, gref)
			})},
			{"leave consumer group", func() { _ = sdk.LeaveConsumerGroup(stream, topic, group) }, frame(t, wire08.CmdLeaveConsumerGroup, func(b []byte) ([]byte, error) {
				return iggywire.AppendGroupRef(b, gref)
			})},
			{"store offset", func() { _ = sdk.StoreConsumerOffset(groupConsumer, stream, topic, 42, &partition) }, frame(t, wire08.CmdStoreConsumerOffset, func(b []byte) ([]byte, error) {
				return wire08.AppendStoreConsumerOffset(b, offsetRef, 42)
			})},
			{"get offset", func() { _, _ = sdk.GetConsumerOffset(groupConsumer, stream, topic, &partition) }, frame(t, wire08.CmdGetConsumerOffset, func(b []byte) ([]byte, error) {
				return wire08.AppendConsumerOffsetRef(b, offsetRef)
			})},
			{"delete offset", func() { _ = sdk.DeleteConsumerOffset(groupConsumer, stream, topic, &partition) }, frame(t, wire08.CmdDeleteConsumerOffset, func(b []byte) ([]byte, error) {
				return wire08.AppendConsumerOffsetRef(b, offsetRef)
			})},
			{"group poll, next", func() {
				call(func() {
					_, _ = sdk.PollMessages(stream, topic, groupConsumer, iggcon.NextPollingStrategy(), 1000, false, nil)
				})
			}, frame(t, wire08.CmdPollMessages, func(b []byte) ([]byte, error) {
				return wire08.AppendPollMessages(b, wire08.PollMessages{ConsumerOffsetRef: noPartition, Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: 1000})
			})},
			{"partition poll from an offset, auto commit", func() {
				call(func() {
					_, _ = sdk.PollMessages(stream, topic, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(77), 5, true, &partition)
				})
			}, frame(t, wire08.CmdPollMessages, func(b []byte) ([]byte, error) {
				return wire08.AppendPollMessages(b, wire08.PollMessages{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{
					Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(0)}, StreamID: ref.StreamID,
					TopicID: ref.TopicID, Partition: iggywire.SomePartition(partition)}, Strategy: iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: 77},
					Count: 5, AutoCommit: true})
			})},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.sdk()
				if got := next(t, requests); !bytes.Equal(got, tt.ours) {
					t.Fatalf("the SDK writes\n% x\nwe write\n% x", got, tt.ours)
				}
			})
		}
	}
}

// randomBatch is a batch with every shape a runner sends: ids zero or set, payloads of 1 byte to a
// few KiB, none to several headers of every wire kind.
func randomBatch(rng *rand.Rand) []api.OutMessage {
	msgs := make([]api.OutMessage, 1+rng.IntN(40))
	for i := range msgs {
		m := &msgs[i]
		if rng.IntN(2) == 0 {
			for j := range m.ID {
				m.ID[j] = byte(rng.UintN(256))
			}
		}
		m.Payload = make([]byte, 1+rng.IntN(3000))
		for j := range m.Payload {
			m.Payload[j] = byte(rng.UintN(256))
		}
		for range rng.IntN(4) {
			kind := iggywire.KindRaw + uint8(rng.IntN(int(iggywire.KindFloat64-iggywire.KindRaw+1)))
			n := api.FixedHeaderSize(kind)
			if n == 0 {
				n = 1 + rng.IntN(40)
			}
			m.Headers = append(m.Headers, api.HeaderEntry{Key: []byte{'k', byte('a' + rng.IntN(26))}, Kind: kind, Value: bytes.Repeat([]byte{byte(rng.UintN(256))}, n)})
		}
	}
	return msgs
}

// sdkMessages are the SDK's messages for msgs, stamped with origin timestamp now.
func sdkMessages(t testing.TB, msgs []api.OutMessage, now uint64) []iggcon.IggyMessage {
	t.Helper()
	out := make([]iggcon.IggyMessage, len(msgs))
	for i, m := range msgs {
		headers, err := api.AppendUserHeaders(nil, m.Headers)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = iggcon.IggyMessage{Header: iggcon.MessageHeader{Id: m.ID, OriginTimestamp: now, PayloadLength: uint32(len(m.Payload)),
			UserHeaderLength: uint32(len(headers))}, Payload: m.Payload, UserHeaders: headers}
	}
	return out
}

// ourMessages are the wire messages of msgs, as the client's engine prepares them.
func ourMessages(t testing.TB, msgs []api.OutMessage, now uint64) []iggywire.Message {
	t.Helper()
	out := make([]iggywire.Message, len(msgs))
	for i, m := range msgs {
		headers, err := api.AppendUserHeaders(nil, m.Headers)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = iggywire.Message{ID: m.ID, OriginTimestamp: now, Payload: m.Payload, Headers: headers}
	}
	return out
}

// A SendMessages request is byte for byte what the SDK's SendMessages writes for the same batch,
// for every identifier and partitioning kind.
func TestSendMessagesMatchesTheSDK(t *testing.T) {
	sdk, requests := recordingSDK(t)
	key, err := iggcon.EntityIdString("order-7")
	if err != nil {
		t.Fatal(err)
	}
	ids := []iggcon.Identifier{sdkID(t, uint32(0)), sdkID(t, uint32(4_000_000_000)), sdkID(t, "a"), sdkID(t, strings.Repeat("n", 255))}
	parts := []struct {
		sdk  iggcon.Partitioning
		ours iggywire.Partitioning
	}{
		{iggcon.None(), iggywire.Partitioning{Kind: iggywire.PartitionBalanced}},
		{iggcon.PartitionId(3), iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: 3}},
		{key, iggywire.Partitioning{Kind: iggywire.PartitionByMessageKey, Key: []byte("order-7")}},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 60 {
		stream, topic, p := ids[round%len(ids)], ids[(round/2)%len(ids)], parts[round%len(parts)]
		msgs := randomBatch(rng)
		now := rng.Uint64()
		if err := sdk.SendMessages(stream, topic, p.sdk, sdkMessages(t, msgs, now)); err != nil {
			t.Fatal(err)
		}
		want := next(t, requests)
		got := frame(t, wire08.CmdSendMessages, func(b []byte) ([]byte, error) {
			return wire08.AppendSendMessages(b, wire08.SendMetadata{TopicRef: iggywire.TopicRef{StreamID: ours(stream), TopicID: ours(topic)},
				Partitioning: p.ours}, ourMessages(t, msgs, now))
		})
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: request differs from the SDK's at byte %d of %d/%d", round, firstDifference(got, want), len(got), len(want))
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// pollReply builds a PolledMessages payload: partition, current offset, count, then each
// message's header, payload and user headers.
func pollReply(partition uint32, current uint64, msgs ...[2][]byte) []byte {
	b := iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: partition, CurrentOffset: current, MessagesCount: uint32(len(msgs))})
	for i, m := range msgs {
		payload, headers := m[0], m[1]
		var id [16]byte
		for j := range id {
			id[j] = byte(16*i + j)
		}
		b = wire08.AppendMessageHeader(b, wire08.MessageHeader{Checksum: uint64(0xc0ffee + i), ID: id, Offset: uint64(100 + i),
			Timestamp: uint64(2000 + i), OriginTimestamp: uint64(3000 + i), HeadersLength: uint32(len(headers)), PayloadLength: uint32(len(payload))})
		b = append(append(b, payload...), headers...)
	}
	return b
}

// polled is what a reader takes from a poll reply.
type polled struct {
	partition uint32
	current   uint64
	msgs      []iggywire.PolledMessage
}

// sdkPolled is the SDK's reading of a reply; ok is false when the SDK fails or panics on it.
func sdkPolled(body []byte) (p polled, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m, err := binaryserialization.DeserializeFetchMessagesResponse(body, iggcon.MESSAGE_COMPRESSION_NONE)
	if err != nil {
		return polled{}, false
	}
	p = polled{partition: m.PartitionId, current: m.CurrentOffset}
	for _, msg := range m.Messages {
		p.msgs = append(p.msgs, iggywire.PolledMessage{Offset: msg.Header.Offset, Timestamp: msg.Header.Timestamp,
			OriginTimestamp: msg.Header.OriginTimestamp, ID: msg.Header.Id, Checksum: msg.Header.Checksum,
			Payload: msg.Payload, Headers: msg.UserHeaders})
	}
	return p, true
}

func ourPolled(body []byte) (polled, error) {
	it, err := wire08.NewPollIterator(body)
	if err != nil {
		return polled{}, err
	}
	p := polled{partition: it.Prefix().PartitionID, current: it.Prefix().CurrentOffset}
	var m iggywire.PolledMessage
	for it.Next(&m) {
		p.msgs = append(p.msgs, m)
	}
	return p, it.Err()
}

// same compares readings the way a caller reads them: no headers is no headers, however spelled.
func same(a, b polled) bool {
	if len(a.msgs) != len(b.msgs) || a.partition != b.partition || a.current != b.current {
		return false
	}
	for i := range a.msgs {
		x, y := a.msgs[i], b.msgs[i]
		if len(x.Headers) == 0 && len(y.Headers) == 0 {
			x.Headers, y.Headers = nil, nil
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// One string header "k" = "v".
var wireHeader = []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}

func TestPollRepliesReadAsTheSDKReadsThem(t *testing.T) {
	two := pollReply(1, 101, [2][]byte{[]byte("one"), nil}, [2][]byte{[]byte("two"), nil})
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"no messages", pollReply(3, 9)},
		{"two messages, one with a header", pollReply(1, 101, [2][]byte{[]byte("hello"), nil}, [2][]byte{[]byte(`{"a":1}`), wireHeader})},
		{"headers the client cannot parse are kept as bytes", pollReply(1, 100, [2][]byte{[]byte("x"), {9, 9, 9}})},
		{"a truncated last payload is left out", two[:16+64+3+64+1]},
		{"a truncated last header is left out", two[:16+64+3+30]},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, ok := sdkPolled(c.body)
			if !ok {
				t.Fatal("the SDK rejects the vector")
			}
			if got, err := ourPolled(c.body); err != nil || !same(got, want) {
				t.Fatalf("read %+v, %v\nthe SDK reads %+v", got, err, want)
			}
		})
	}
}

// FuzzPollIterator: every reply the SDK reads is read the same way, and the replies the SDK
// panics on are an error instead of a panic.
func FuzzPollIterator(f *testing.F) {
	f.Add(pollReply(1, 101, [2][]byte{[]byte("hello"), nil}, [2][]byte{[]byte(`{"a":1}`), wireHeader}))
	f.Add(pollReply(2, 7, [2][]byte{[]byte("x"), {1, 0, 0, 0}}))
	f.Add(pollReply(0, 0))
	f.Fuzz(func(t *testing.T, body []byte) {
		body = body[:len(body):len(body)] // a reply buffer is exactly its length, or the SDK reads past it
		got, err := ourPolled(body)
		want, ok := sdkPolled(body)
		if !ok {
			if err == nil && len(body) >= iggywire.PollPrefixSize {
				t.Fatalf("the SDK fails on %x, we read %+v", body, got)
			}
			return
		}
		if err != nil || !same(got, want) {
			t.Fatalf("body %x: we read %+v, %v; the SDK reads %+v", body, got, err, want)
		}
	})
}

// ReadReply refuses a reply announcing more than its request can be answered with, without
// reading (or reserving) it, and grows its buffer only as bytes arrive.
func TestReadReplyIsBounded(t *testing.T) {
	huge := wire08.AppendReplyHead(nil, iggywire.StatusOK, 0xFFFFFFF0)
	if _, err := wire08.ReadReply(bytes.NewReader(huge), nil, 1<<20); !strings.Contains(err.Error(), "4294967280 bytes announced") {
		t.Fatalf("error %v", err)
	}
	short := append(wire08.AppendReplyHead(nil, iggywire.StatusOK, 1000), "only this"...)
	got, err := wire08.ReadReply(bytes.NewReader(short), nil, 1<<20)
	if err == nil || cap(got) > 1<<17 {
		t.Fatalf("a reply cut short: %v, buffer of %d bytes", err, cap(got))
	}
	refused := wire08.AppendReplyHead(nil, iggywire.StatusTopicIDNotFound, 0)
	if _, err := wire08.ReadReply(bytes.NewReader(refused), nil, 0); err != iggywire.StatusTopicIDNotFound {
		t.Fatalf("error %v, want the status", err)
	}
	ok := append(wire08.AppendReplyHead(nil, iggywire.StatusOK, 4), 1, 2, 3, 4)
	if got, err := wire08.ReadReply(bytes.NewReader(ok), make([]byte, 0, 64), 4); err != nil || !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Fatalf("read %v, %v", got, err)
	}
}
