package devbroker_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
	"github.com/zeebo/xxh3"
)

// The 0.9 protocol driven with raw frames built by pkg/wire09 (docs/iggy-protocol-0.9.md §13).

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func loggedIn09(t *testing.T, srv *devbroker.Server) *testkit.Raw09 {
	t.Helper()
	c := testkit.DialRaw09(t, srv.Addr())
	c.Login("iggy", "iggy")
	return c
}

func loginBody(t testing.TB, version uint32, username, password string) []byte {
	return must[[]byte](t)(wire09.AppendLoginPassword(nil, wire09.LoginPrefix{ProtocolVersion: version,
		SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0-edge.4")}, []byte(username), []byte(password)))
}

func TestProtocol09LoginAndSessionGate(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithToken("secret-token"))

	c := testkit.DialRaw09(t, srv.Addr())
	if r := c.Do(wire09.OpNonReplicated, wire09.CmdPing, nil); r.Status() != 0 || len(r.Body) != 0 || r.Header.Request != 1 || r.Header.Operation != wire09.OpNonReplicated {
		t.Fatalf("ping before login = %+v", r.Header)
	}
	for _, code := range []wire09.Command{wire09.CmdGetStreams, wire09.CmdGetClusterMetadata} {
		if r := c.Do(wire09.OpNonReplicated, code, nil); r.Status() != iggywire.StatusUnauthenticated || len(r.Body) != 0 {
			t.Fatalf("code %d before login = status %d", code, r.Status())
		}
	}
	login := c.Login("iggy", "iggy")
	if login.Session == 0 || login.ProtocolVersion != wire09.ProtocolVersion {
		t.Fatalf("login reply = %+v", login)
	}
	meta, err := wire09.DecodeClusterMetadata(c.Do(wire09.OpNonReplicated, wire09.CmdGetClusterMetadata, nil).Payload(t))
	if err != nil || len(meta.Nodes) != 1 || meta.Nodes[0].Role != wire09.RoleLeader || meta.Nodes[0].Status != wire09.NodeHealthy {
		t.Fatalf("cluster metadata = %+v, %v", meta, err)
	}
	second := testkit.DialRaw09(t, srv.Addr())
	if next := second.Login("iggy", "iggy"); next.Session <= login.Session {
		t.Errorf("session ids do not count up: %d then %d", login.Session, next.Session)
	}
	tokenBody := must[[]byte](t)(wire09.AppendLoginToken(nil, wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion,
		SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0")}, []byte("secret-token")))
	if r := testkit.DialRaw09(t, srv.Addr()).Do(wire09.OpRegister, 0, tokenBody); r.Eviction != nil || r.Status() != 0 {
		t.Fatalf("token login = %+v / %+v", r.Header, r.Eviction)
	}

	evictions := []struct {
		name   string
		op     wire09.Operation
		code   wire09.Command
		body   []byte
		reason wire09.EvictionReason
	}{
		{"create stream before login", wire09.OpCreateStream, 0, []byte{2, 's', '1'}, wire09.EvictNoSession},
		{"send before login", wire09.OpSendMessages, 0, nil, wire09.EvictNoSession},
		{"legacy login code 38", wire09.OpNonReplicated, wire09.CmdLoginUser, nil, wire09.EvictMalformedLogin},
		{"legacy token login code 44", wire09.OpNonReplicated, wire09.CmdLoginWithPAT, nil, wire09.EvictMalformedLogin},
		{"wrong password", wire09.OpRegister, 0, loginBody(t, wire09.ProtocolVersion, "iggy", "nope"), wire09.EvictInvalidCredentials},
		{"unknown token", wire09.OpRegister, 0, must[[]byte](t)(wire09.AppendLoginToken(nil, wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion,
			SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0")}, []byte("other"))), wire09.EvictInvalidToken},
		{"protocol version 0", wire09.OpRegister, 0, loginBody(t, 0, "iggy", "iggy"), wire09.EvictIncompatibleProtocol},
		{"protocol 0.12", wire09.OpRegister, 0, loginBody(t, wire09.PackVersion(0, 12, 0), "iggy", "iggy"), wire09.EvictIncompatibleProtocol},
		{"empty login body", wire09.OpRegister, 0, nil, wire09.EvictMalformedLogin},
		{"login without credentials", wire09.OpRegister, 0, loginBody(t, wire09.ProtocolVersion, "iggy", "iggy")[:24], wire09.EvictMalformedLogin},
	}
	for _, tt := range evictions {
		t.Run(tt.name, func(t *testing.T) {
			c := testkit.DialRaw09(t, srv.Addr())
			if tt.op != wire09.OpRegister && tt.op != wire09.OpNonReplicated {
				c.Session = 1 // a plausible session: the connection is still not bound
			}
			r := c.Do(tt.op, tt.code, tt.body)
			if r.Eviction == nil || r.Eviction.Reason != tt.reason || r.Eviction.Client != c.Client {
				t.Fatalf("reply = %+v, eviction %+v; want eviction %d naming the client", r.Header, r.Eviction, tt.reason)
			}
			if tt.reason == wire09.EvictIncompatibleProtocol && (r.Eviction.VersionMax != 11264 || r.Eviction.VersionMin != 11264) {
				t.Errorf("version window = %d..%d, want 11264..11264", r.Eviction.VersionMin, r.Eviction.VersionMax)
			}
			c.ExpectClosed()
		})
	}
}

// Frames that fail §3.5 are dropped without a reply; the connection stays usable.
func TestProtocol09InvalidRequestsAreDropped(t *testing.T) {
	srv := testkit.StartBroker(t)
	c := loggedIn09(t, srv)
	header := func(mutate func(*wire09.RequestHeader)) []byte {
		h := wire09.RequestHeader{Client: c.Client, Operation: wire09.OpCreateStream, Request: 50, Session: c.Session}
		mutate(&h)
		return wire09.AppendRequest(nil, &h, []byte{2, 'x', 'x'})
	}
	replyFrame := wire09.AppendReply(nil, &wire09.ReplyHeader{Operation: wire09.OpNonReplicated}, nil)
	dropped := map[string][]byte{
		"zero client":              header(func(h *wire09.RequestHeader) { h.Client = wire09.U128{} }),
		"operation 0":              header(func(h *wire09.RequestHeader) { h.Operation = 0 }),
		"undefined operation":      header(func(h *wire09.RequestHeader) { h.Operation = 200 }),
		"metadata without session": header(func(h *wire09.RequestHeader) { h.Session = 0 }),
		"metadata without request": header(func(h *wire09.RequestHeader) { h.Request = 0 }),
		"register with a request":  header(func(h *wire09.RequestHeader) { h.Operation, h.Session = wire09.OpRegister, 0 }),
		"session never issued":     header(func(h *wire09.RequestHeader) { h.Session = c.Session + 1000 }),
		"a reply frame":            replyFrame,
	}
	for name, frame := range dropped {
		c.Write(frame)
		c.Counter = 7 // the ping's request number tells its reply apart
		if r := c.Do(wire09.OpNonReplicated, wire09.CmdPing, nil); r.Header.Request != 7 || r.Status() != 0 {
			t.Fatalf("%s: the next reply is %+v, want the ping's", name, r.Header)
		}
	}
	streams := c.Do(wire09.OpNonReplicated, wire09.CmdGetStreams, nil).Payload(t)
	if len(streams) != 0 {
		t.Errorf("a dropped create ran: streams %x", streams)
	}
}

// A frame that cannot be framed closes that connection only.
func TestProtocol09BadFramesCloseOnlyTheirConnection(t *testing.T) {
	srv := testkit.StartBroker(t)
	bystander := loggedIn09(t, srv)
	sized := func(size uint32, frameType byte) []byte {
		b := make([]byte, wire09.HeaderSize)
		binary.LittleEndian.PutUint32(b[48:], size)
		b[60] = frameType
		return b
	}
	tests := map[string][]byte{
		"size below the header": sized(100, 5),
		"size above 64 MiB":     sized(64<<20+1, 5),
		"frame type 30":         sized(256, 30),
		"truncated body":        append(sized(1000, 5), make([]byte, 10)...),
		"truncated header":      make([]byte, 100),
	}
	for name, bad := range tests {
		t.Run(name, func(t *testing.T) {
			c := loggedIn09(t, srv)
			c.Write(bad)
			if name == "truncated body" || name == "truncated header" {
				c.Close()
			} else {
				c.ExpectClosed()
			}
			if r := bystander.Do(wire09.OpNonReplicated, wire09.CmdPing, nil); r.Status() != 0 {
				t.Fatalf("the other connection's ping = %+v", r.Header)
			}
		})
	}
}

func TestProtocol09RequestNumbersAndDedup(t *testing.T) {
	srv := testkit.StartBroker(t)
	c := loggedIn09(t, srv)
	create := c.Frame(wire09.OpCreateStream, 0, []byte{2, 's', '1'})
	c.Write(create)
	first := c.Read()
	c.Write(create) // a replay of request 1: the cached reply, not a second run
	if replay := c.Read(); !bytes.Equal(replay.Frame, first.Frame) {
		t.Fatalf("replayed reply differs:\n%x\n%x", replay.Frame, first.Frame)
	}
	c.Counter = 2
	c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '2'}).Payload(t)
	if got := countStreams(t, c); got != 2 {
		t.Fatalf("%d streams, want 2", got)
	}
	c.Counter = 1 // below the watermark, no longer cached
	if r := c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '3'}); r.Rejection(t) != iggywire.StatusRequestAlreadyApplied {
		t.Fatalf("stale request number = %v", r.Rejection(t))
	}
	c.Counter = 10 // gaps are allowed
	c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '4'}).Payload(t)

	// request_checksum: the Rust SDK stamps XXH3-64 of the body; a wrong one is
	// status 4; the same number with another stamped body is dropped.
	stamped := func(request uint64, body []byte, checksum uint64) []byte {
		h := wire09.RequestHeader{Client: c.Client, Operation: wire09.OpCreateStream, Request: request, Session: c.Session,
			RequestChecksum: wire09.U128{Lo: checksum}}
		return wire09.AppendRequest(nil, &h, body)
	}
	s6 := []byte{2, 's', '6'}
	c.Write(stamped(20, s6, xxh3.Hash(s6)))
	if r := c.Read(); r.Rejection(t) != 0 {
		t.Fatalf("stamped create = %v", r.Rejection(t))
	}
	c.Write(stamped(21, []byte{2, 's', '7'}, 12345))
	if r := c.Read(); r.Status() != iggywire.StatusInvalidFormat {
		t.Fatalf("wrong request checksum = status %d, want 4", r.Status())
	}
	s8 := []byte{2, 's', '8'}
	c.Write(stamped(20, s8, xxh3.Hash(s8))) // request 20 again, another body: dropped
	c.Counter = 22
	if r := c.Do(wire09.OpNonReplicated, wire09.CmdPing, nil); r.Header.Request != 22 {
		t.Fatalf("the next reply is %+v, want the ping's", r.Header)
	}

	// A fenced zombie: the session of an earlier login on this connection.
	old := c.Session
	c.Login("iggy", "iggy")
	c.Session = old
	if r := c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '5'}); r.Eviction == nil || r.Eviction.Reason != wire09.EvictSessionTooLow {
		t.Fatalf("old session = %+v / %+v, want eviction 7", r.Header, r.Eviction)
	}
	c.ExpectClosed()
}

func countStreams(t *testing.T, c *testkit.Raw09) int {
	t.Helper()
	rest := c.Do(wire09.OpNonReplicated, wire09.CmdGetStreams, nil).Payload(t)
	n := 0
	for len(rest) > 0 {
		var err error
		if _, rest, err = wire09.DecodeStream(rest); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestProtocol09StreamsAndTopics(t *testing.T) {
	srv := testkit.StartBroker(t)
	c := loggedIn09(t, srv)
	s1 := iggywire.NamedID("s1")
	stream, rest, err := wire09.DecodeStream(c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '1'}).Payload(t))
	if err != nil || stream.ID != 0 || string(stream.Name) != "s1" || stream.TopicsCount != 0 || len(rest) != 0 {
		t.Fatalf("created stream = %+v, rest %d, %v", stream, len(rest), err)
	}
	if r := c.Do(wire09.OpCreateStream, 0, []byte{2, 's', '1'}); r.Rejection(t) != iggywire.StatusStreamNameAlreadyExists {
		t.Errorf("duplicate stream = %v", r.Rejection(t))
	}
	withOption := append([]byte{2, 's', '9'}, must[[]byte](t)(wire09.AppendOptionUint64(nil, "segment_size", 1))...)
	if r := c.Do(wire09.OpCreateStream, 0, withOption); r.Status() != iggywire.StatusUnsupportedOptionKey {
		t.Errorf("stream with an option = status %d", r.Status())
	}

	options := must[[]byte](t)(wire09.AppendTopicOptions(nil, wire09.TopicOptions{MessageExpiry: 60_000_000, MaxTopicSize: 1 << 30}))
	body := must[[]byte](t)(wire09.AppendCreateTopic(nil, wire09.CreateTopic{StreamID: s1, PartitionsCount: 3, Name: []byte("t1"), Options: options}))
	topic, rest, err := wire09.DecodeTopic(c.Do(wire09.OpCreateTopic, 0, body).Payload(t))
	if err != nil || topic.ID != 0 || topic.PartitionsCount != 3 || topic.MessageExpiry != 60_000_000 || topic.MaxTopicSize != 1<<30 ||
		topic.Compression != wire09.CompressionNone || !bytes.Equal(topic.Options, options) || len(rest) != 3*wire09.PartitionElementSize {
		t.Fatalf("created topic = %+v, rest %d, %v", topic, len(rest), err)
	}
	for i := range uint32(3) {
		var p wire09.Partition
		if p, rest, err = wire09.DecodePartition(rest); err != nil || p.ID != i {
			t.Fatalf("partition %d = %+v, %v", i, p, err)
		}
	}
	if r := c.Do(wire09.OpCreateTopic, 0, body); r.Rejection(t) != iggywire.StatusTopicNameAlreadyExists {
		t.Errorf("duplicate topic = %v", r.Rejection(t))
	}
	missing := must[[]byte](t)(wire09.AppendCreateTopic(nil, wire09.CreateTopic{StreamID: iggywire.NamedID("nope"), PartitionsCount: 1, Name: []byte("t")}))
	if r := c.Do(wire09.OpCreateTopic, 0, missing); r.Rejection(t) != iggywire.StatusStreamIDNotFound {
		t.Errorf("topic in a missing stream = %v", r.Rejection(t))
	}
	unknownKey := must[[]byte](t)(wire09.AppendCreateTopic(nil, wire09.CreateTopic{StreamID: s1, PartitionsCount: 1, Name: []byte("t2"),
		Options: must[[]byte](t)(wire09.AppendOptionUint64(nil, "retention", 1))}))
	if r := c.Do(wire09.OpCreateTopic, 0, unknownKey); r.Status() != iggywire.StatusUnsupportedOptionKey {
		t.Errorf("unknown option = status %d", r.Status())
	}

	got, rest, err := wire09.DecodeStream(c.Do(wire09.OpNonReplicated, wire09.CmdGetStream, must[[]byte](t)(iggywire.AppendIdentifier(nil, s1))).Payload(t))
	if err != nil || got.TopicsCount != 1 {
		t.Fatalf("get stream = %+v, %v", got, err)
	}
	if topic, rest, err = wire09.DecodeTopic(rest); err != nil || string(topic.Name) != "t1" || len(rest) != 0 {
		t.Fatalf("get stream's topic = %+v, rest %d, %v", topic, len(rest), err)
	}
	ref := must[[]byte](t)(iggywire.AppendTopicRef(nil, iggywire.TopicRef{StreamID: s1, TopicID: iggywire.NamedID("t1")}))
	if _, rest, err := wire09.DecodeTopic(c.Do(wire09.OpNonReplicated, wire09.CmdGetTopic, ref).Payload(t)); err != nil || len(rest) != 3*wire09.PartitionElementSize {
		t.Fatalf("get topic: rest %d, %v", len(rest), err)
	}
	count, _, err := wire09.DecodeTopicsCount(c.Do(wire09.OpNonReplicated, wire09.CmdGetTopics, must[[]byte](t)(iggywire.AppendIdentifier(nil, s1))).Payload(t))
	if err != nil || count != 1 {
		t.Fatalf("get topics = %d, %v", count, err)
	}
	for name, r := range map[string]testkit.Reply09{
		"get missing stream": c.Do(wire09.OpNonReplicated, wire09.CmdGetStream, must[[]byte](t)(iggywire.AppendIdentifier(nil, iggywire.NamedID("nope")))),
		"get missing topic": c.Do(wire09.OpNonReplicated, wire09.CmdGetTopic,
			must[[]byte](t)(iggywire.AppendTopicRef(nil, iggywire.TopicRef{StreamID: s1, TopicID: iggywire.NumericID(7)}))),
	} {
		if r.Status() != 0 || len(r.Body) != 0 {
			t.Errorf("%s = status %d, %d bytes; want an empty body", name, r.Status(), len(r.Body))
		}
	}
	if r := c.Do(wire09.OpCreatePartitions, 0, must[[]byte](t)(wire09.AppendCreatePartitions(nil,
		wire09.CreatePartitions{TopicRef: iggywire.TopicRef{StreamID: s1, TopicID: iggywire.NumericID(0)}, PartitionsCount: 2}))); r.Rejection(t) != 0 {
		t.Fatalf("create partitions = %v", r.Rejection(t))
	}
	if r := c.Do(wire09.OpDeleteTopic, 0, ref); r.Rejection(t) != 0 {
		t.Fatalf("delete topic = %v", r.Rejection(t))
	}
	if r := c.Do(wire09.OpDeleteTopic, 0, ref); r.Rejection(t) != iggywire.StatusTopicIDNotFound {
		t.Errorf("delete the topic again = %v", r.Rejection(t))
	}
	if r := c.Do(wire09.OpDeleteStream, 0, must[[]byte](t)(iggywire.AppendIdentifier(nil, s1))); r.Rejection(t) != 0 {
		t.Fatalf("delete stream = %v", r.Rejection(t))
	}
	if n := countStreams(t, c); n != 0 {
		t.Errorf("%d streams after delete", n)
	}
}

func sendBody(t testing.TB, stream, topic iggywire.Identifier, p iggywire.Partitioning, msgs []iggywire.Message) []byte {
	body := must[[]byte](t)(wire09.AppendSendMetadata(nil, wire09.SendMetadata{StreamID: stream, TopicID: topic, Partitioning: p, MessagesCount: uint32(len(msgs))}))
	return must[[]byte](t)(wire09.AppendBatch(body, msgs))
}

func messages(n int, from int) []iggywire.Message {
	out := make([]iggywire.Message, n)
	for i := range out {
		out[i] = iggywire.Message{ID: [16]byte{byte(from + i + 1)}, OriginTimestamp: uint64(1000 + from + i), Payload: []byte{'m', byte('0' + from + i)}}
	}
	return out
}

type polled struct {
	prefix iggywire.PollPrefix
	msgs   []iggywire.PolledMessage
}

func poll09(t *testing.T, c *testkit.Raw09, p wire09.PollMessages) polled {
	t.Helper()
	r := c.Do(wire09.OpNonReplicated, wire09.CmdPollMessages, must[[]byte](t)(wire09.AppendPollMessages(nil, p)))
	it, err := wire09.NewPollIterator(r.Payload(t))
	if err != nil {
		t.Fatal(err)
	}
	out := polled{prefix: it.Prefix()}
	var m iggywire.PolledMessage
	for it.Next(&m) {
		m.Payload = append([]byte(nil), m.Payload...)
		m.Headers = append([]byte(nil), m.Headers...)
		out.msgs = append(out.msgs, m)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("poll reply: %v", err)
	}
	return out
}

func offsetsOf(p polled) []uint64 {
	var out []uint64
	for _, m := range p.msgs {
		out = append(out, m.Offset)
	}
	return out
}

func TestProtocol09SendAndPoll(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("s1", map[string]uint32{"t1": 2}))
	c := loggedIn09(t, srv)
	s1, t1 := iggywire.NamedID("s1"), iggywire.NamedID("t1")
	p1 := iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: 1}

	r := c.Do(wire09.OpSendMessages, 0, sendBody(t, s1, t1, p1, messages(3, 0)))
	conf, err := wire09.DecodeConfirmations(r.Body, nil)
	if err != nil || len(conf) != 1 || conf[0] != (wire09.Confirmation{StreamID: 0, TopicID: 0, PartitionID: 1, BaseOffset: 0}) {
		t.Fatalf("confirmation = %+v, %v (status %d)", conf, err, r.Status())
	}
	zeroID := []iggywire.Message{{Payload: []byte("no id"), OriginTimestamp: 5}, {ID: [16]byte{9}, Payload: []byte("m4"), OriginTimestamp: 6}}
	if conf, _ := wire09.DecodeConfirmations(c.Do(wire09.OpSendMessages, 0, sendBody(t, s1, t1, p1, zeroID)).Body, nil); len(conf) != 1 || conf[0].BaseOffset != 3 {
		t.Fatalf("second confirmation = %+v", conf)
	}

	// Admission faults, each with the server's code.
	good := sendBody(t, s1, t1, p1, messages(2, 0))
	metaLen := 4 + int(binary.LittleEndian.Uint32(good))
	faults := []struct {
		name   string
		mutate func([]byte) []byte
		want   iggywire.Status
	}{
		{"payload byte", func(b []byte) []byte { b[metaLen+256+48] ^= 1; return b }, iggywire.StatusInvalidMessageChecksum},
		{"batch checksum", func(b []byte) []byte { b[metaLen+40] ^= 1; return b }, iggywire.StatusInvalidBatchChecksum},
		{"metadata count", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[metaLen-4:], 3); return b }, iggywire.StatusInvalidMessagesCount},
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }, iggywire.StatusInvalidFormat},
		{"missing partition", func([]byte) []byte {
			return sendBody(t, s1, t1, iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: 9}, messages(1, 0))
		}, iggywire.StatusResourceNotFound},
		{"missing topic", func([]byte) []byte { return sendBody(t, s1, iggywire.NamedID("x"), p1, messages(1, 0)) }, iggywire.StatusResourceNotFound},
	}
	for _, f := range faults {
		if r := c.Do(wire09.OpSendMessages, 0, f.mutate(append([]byte(nil), good...))); r.Status() != f.want || len(r.Body) != 0 {
			t.Errorf("%s: status %d, want %d", f.name, r.Status(), f.want)
		}
	}

	single := func(s iggywire.PollingStrategy, count uint32, auto bool) wire09.PollMessages {
		return wire09.PollMessages{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(7)},
			StreamID: s1, TopicID: t1, Partition: iggywire.SomePartition(1), Strategy: s, Count: count, AutoCommit: auto}
	}
	all := poll09(t, c, single(iggywire.PollingStrategy{Kind: iggywire.PollFirst}, 100, false))
	if all.prefix != (iggywire.PollPrefix{PartitionID: 1, CurrentOffset: 4, MessagesCount: 5}) || len(all.msgs) != 5 {
		t.Fatalf("poll first = %+v with %d messages", all.prefix, len(all.msgs))
	}
	if m := all.msgs[3]; m.ID != ([16]byte{}) || string(m.Payload) != "no id" || m.OriginTimestamp != 5 || m.Offset != 3 {
		t.Errorf("the zero-id message came back as %+v: 0.9 never fills ids", m)
	}
	if m := all.msgs[1]; m.ID != ([16]byte{2}) || m.OriginTimestamp != 1001 || m.Timestamp == 0 {
		t.Errorf("message 1 = %+v", m)
	}
	var fromSecondBatch []uint64 // batches are stamped with the append time, which two sends may share
	for _, m := range all.msgs {
		if m.Timestamp >= all.msgs[3].Timestamp {
			fromSecondBatch = append(fromSecondBatch, m.Offset)
		}
	}
	strategies := []struct {
		name string
		poll wire09.PollMessages
		want []uint64
	}{
		{"offset 1 count 2: a sliced record", single(iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: 1}, 2, false), []uint64{1, 2}},
		{"offset 2 count 10: across records", single(iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: 2}, 10, false), []uint64{2, 3, 4}},
		{"last 2", single(iggywire.PollingStrategy{Kind: iggywire.PollLast}, 2, false), []uint64{3, 4}},
		{"timestamp of the second batch", single(iggywire.PollingStrategy{Kind: iggywire.PollTimestamp, Value: all.msgs[3].Timestamp}, 10, false), fromSecondBatch},
		{"offset past the end", single(iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: 9}, 10, false), nil},
		{"next with nothing stored, auto-commit", single(iggywire.PollingStrategy{Kind: iggywire.PollNext}, 2, true), []uint64{0, 1}},
		{"next after the auto-commit", single(iggywire.PollingStrategy{Kind: iggywire.PollNext}, 2, true), []uint64{2, 3}},
	}
	for _, s := range strategies {
		got := poll09(t, c, s.poll)
		if !equalOffsets(offsetsOf(got), s.want) || got.prefix.MessagesCount != uint32(len(s.want)) || got.prefix.CurrentOffset != 4 {
			t.Errorf("%s: offsets %v (prefix %+v), want %v", s.name, offsetsOf(got), got.prefix, s.want)
		}
	}
	for name, tc := range map[string]struct {
		poll wire09.PollMessages
		want iggywire.Status
	}{
		"missing stream":    {wire09.PollMessages{Consumer: single(iggywire.PollingStrategy{}, 1, false).Consumer, StreamID: iggywire.NamedID("x"), TopicID: t1, Strategy: iggywire.PollingStrategy{Kind: iggywire.PollFirst}, Count: 1}, iggywire.StatusStreamIDNotFound},
		"missing topic":     {wire09.PollMessages{Consumer: single(iggywire.PollingStrategy{}, 1, false).Consumer, StreamID: s1, TopicID: iggywire.NamedID("x"), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollFirst}, Count: 1}, iggywire.StatusTopicIDNotFound},
		"missing partition": {wire09.PollMessages{Consumer: single(iggywire.PollingStrategy{}, 1, false).Consumer, StreamID: s1, TopicID: t1, Partition: iggywire.SomePartition(5), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollFirst}, Count: 1}, iggywire.StatusPartitionNotFound},
	} {
		r := c.Do(wire09.OpNonReplicated, wire09.CmdPollMessages, must[[]byte](t)(wire09.AppendPollMessages(nil, tc.poll)))
		if r.Status() != tc.want {
			t.Errorf("%s: status %d, want %d", name, r.Status(), tc.want)
		}
	}
	// A single consumer without a partition reads partition 0, which is empty.
	noPartition := single(iggywire.PollingStrategy{Kind: iggywire.PollFirst}, 10, false)
	noPartition.Partition = iggywire.OptionalPartition{}
	if got := poll09(t, c, noPartition); got.prefix.PartitionID != 0 || len(got.msgs) != 0 {
		t.Errorf("poll without a partition = %+v", got.prefix)
	}
	// Keyed sends land where XXH32 of the key says.
	key := []byte("order-key-1")
	conf, _ = wire09.DecodeConfirmations(c.Do(wire09.OpSendMessages, 0, sendBody(t, s1, t1, iggywire.Partitioning{Kind: iggywire.PartitionByMessageKey, Key: key}, messages(1, 0))).Body, nil)
	if len(conf) != 1 || conf[0].PartitionID != iggywire.XXH32(key)%2 {
		t.Errorf("keyed send went to %+v, want partition %d", conf, iggywire.XXH32(key)%2)
	}
}

func equalOffsets(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestProtocol09Offsets(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("s1", map[string]uint32{"t1": 1}))
	c := loggedIn09(t, srv)
	s1, t1 := iggywire.NamedID("s1"), iggywire.NamedID("t1")
	if r := c.Do(wire09.OpSendMessages, 0, sendBody(t, s1, t1, iggywire.Partitioning{Kind: iggywire.PartitionBalanced}, messages(5, 0))); r.Status() != 0 {
		t.Fatalf("send = status %d", r.Status())
	}
	ref := iggywire.ConsumerOffsetRef{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NamedID("reader")}, StreamID: s1, TopicID: t1}
	store := func(offset uint64) testkit.Reply09 {
		return c.Do(wire09.OpStoreConsumerOffset, 0, must[[]byte](t)(wire09.AppendStoreConsumerOffset(nil,
			wire09.StoreConsumerOffset{ConsumerOffsetRef: ref, Offset: offset, Ack: wire09.AckQuorum})))
	}
	get := func() (wire09.ConsumerOffset, bool) {
		o, found, err := wire09.DecodeConsumerOffset(c.Do(wire09.OpNonReplicated, wire09.CmdGetConsumerOffset, must[[]byte](t)(wire09.AppendGetConsumerOffset(nil, ref))).Payload(t))
		if err != nil {
			t.Fatal(err)
		}
		return o, found
	}
	if _, found := get(); found {
		t.Fatal("an offset before any store")
	}
	if r := store(3); r.Rejection(t) != 0 || len(r.Body) != 4 {
		t.Fatalf("store = %x", r.Body)
	}
	if o, found := get(); !found || o != (wire09.ConsumerOffset{PartitionID: 0, CurrentOffset: 4, StoredOffset: 3}) {
		t.Fatalf("get = %+v, %v", o, found)
	}
	if r := store(5); r.Status() != 4100 {
		t.Errorf("store past the end = status %d, want 4100", r.Status())
	}
	del := must[[]byte](t)(wire09.AppendDeleteConsumerOffset(nil, wire09.DeleteConsumerOffset{ConsumerOffsetRef: ref, Ack: wire09.AckQuorum}))
	if r := c.Do(wire09.OpDeleteConsumerOffset, 0, del); r.Rejection(t) != 0 {
		t.Fatal("delete")
	}
	if r := c.Do(wire09.OpDeleteConsumerOffset, 0, del); r.Status() != 3021 {
		t.Errorf("delete again = status %d, want 3021", r.Status())
	}
	missing := ref
	missing.TopicID = iggywire.NamedID("nope")
	if r := c.Do(wire09.OpStoreConsumerOffset, 0, must[[]byte](t)(wire09.AppendStoreConsumerOffset(nil,
		wire09.StoreConsumerOffset{ConsumerOffsetRef: missing, Offset: 1, Ack: 1}))); r.Status() != iggywire.StatusResourceNotFound {
		t.Errorf("store to a missing topic = status %d, want 20", r.Status())
	}
}

func groupRef(t testing.TB, group string) []byte {
	return must[[]byte](t)(iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: iggywire.TopicRef{StreamID: iggywire.NamedID("s1"), TopicID: iggywire.NamedID("t1")}, GroupID: iggywire.NamedID(group)}))
}

func syncGroup(t *testing.T, c *testkit.Raw09) (uint64, []uint32) {
	t.Helper()
	r := c.Do(wire09.OpNonReplicated, wire09.CmdSyncConsumerGroup, groupRef(t, "g1"))
	if r.Status() != 0 {
		t.Fatalf("sync = status %d", r.Status())
	}
	if len(r.Body) == 0 {
		return 0, nil
	}
	a, err := wire09.DecodeGroupAssignment(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return a.Generation, a.Partitions.AppendTo(nil)
}

func TestProtocol09ConsumerGroups(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("s1", map[string]uint32{"t1": 4}))
	a, b := loggedIn09(t, srv), loggedIn09(t, srv)
	s1, t1 := iggywire.NamedID("s1"), iggywire.NamedID("t1")
	for p := range uint32(4) {
		a.Do(wire09.OpSendMessages, 0, sendBody(t, s1, t1, iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: p}, messages(2, 0)))
	}
	create := must[[]byte](t)(wire09.AppendCreateConsumerGroup(nil, wire09.CreateConsumerGroup{TopicRef: iggywire.TopicRef{StreamID: s1, TopicID: t1}, Name: []byte("g1")}))
	g, _, err := wire09.DecodeConsumerGroup(a.Do(wire09.OpCreateConsumerGroup, 0, create).Payload(t))
	if err != nil || string(g.Name) != "g1" || g.PartitionsCount != 4 || g.MembersCount != 0 {
		t.Fatalf("created group = %+v, %v", g, err)
	}
	if r := a.Do(wire09.OpCreateConsumerGroup, 0, create); r.Rejection(t) != iggywire.StatusConsumerGroupNameAlreadyExists {
		t.Errorf("duplicate group = %v", r.Rejection(t))
	}
	if gen, parts := syncGroup(t, a); parts != nil || gen != 0 {
		t.Fatalf("sync before join = %d %v, want not a member", gen, parts)
	}
	if r := a.Do(wire09.OpLeaveConsumerGroup, 0, groupRef(t, "g1")); r.Rejection(t) != iggywire.StatusConsumerGroupMemberNotFound {
		t.Errorf("leave without join = %v", r.Rejection(t))
	}
	if r := a.Do(wire09.OpJoinConsumerGroup, 0, groupRef(t, "nope")); r.Rejection(t) != iggywire.StatusConsumerGroupIDNotFound {
		t.Errorf("join a missing group = %v", r.Rejection(t))
	}
	a.Do(wire09.OpJoinConsumerGroup, 0, groupRef(t, "g1")).Payload(t)
	a.Do(wire09.OpJoinConsumerGroup, 0, groupRef(t, "g1")).Payload(t) // idempotent
	genA, partsA := syncGroup(t, a)
	if len(partsA) != 4 {
		t.Fatalf("a alone owns %v", partsA)
	}
	b.Do(wire09.OpJoinConsumerGroup, 0, groupRef(t, "g1")).Payload(t)
	genB, partsB := syncGroup(t, b)
	if genB <= genA {
		t.Errorf("generation did not grow with a join: %d then %d", genA, genB)
	}

	groupPoll := func(c *testkit.Raw09, partition iggywire.OptionalPartition) polled {
		return poll09(t, c, wire09.PollMessages{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: iggywire.NamedID("g1")},
			StreamID: s1, TopicID: t1, Partition: partition, Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext}, Count: 10, AutoCommit: true})
	}
	if got := groupPoll(a, iggywire.OptionalPartition{}); got.prefix.PartitionID != 0 || len(got.msgs) != 0 {
		t.Errorf("group poll without a partition = %+v", got.prefix)
	}
	// b joined idle: a hands a partition over once it committed what it polled there.
	_, partsA = syncGroup(t, a)
	for _, p := range partsA {
		if got := groupPoll(a, iggywire.SomePartition(p)); len(got.msgs) != 2 || got.prefix.PartitionID != p {
			t.Errorf("a polls its partition %d: %+v", p, got.prefix)
		}
	}
	genA, partsA = syncGroup(t, a)
	genB, partsB = syncGroup(t, b)
	if len(partsA)+len(partsB) != 4 || len(partsB) == 0 || genA != genB {
		t.Fatalf("after the hand-over a owns %v (gen %d), b owns %v (gen %d)", partsA, genA, partsB, genB)
	}
	if got := groupPoll(a, iggywire.SomePartition(partsB[0])); got.prefix.PartitionID != wire09.PartitionResync || len(got.msgs) != 0 {
		t.Errorf("a polls b's partition: %+v, want the resync sentinel", got.prefix)
	}
	notOwned := must[[]byte](t)(wire09.AppendStoreConsumerOffset(nil, wire09.StoreConsumerOffset{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{
		Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: iggywire.NamedID("g1")}, StreamID: s1, TopicID: t1,
		Partition: iggywire.SomePartition(partsB[0])}, Offset: 0, Ack: 1}))
	if r := a.Do(wire09.OpStoreConsumerOffset, 0, notOwned); r.Status() != iggywire.StatusResourceNotFound {
		t.Errorf("group offset write by a non-owner = status %d, want 20", r.Status())
	}
	if r := b.Do(wire09.OpStoreConsumerOffset, 0, notOwned); r.Rejection(t) != 0 {
		t.Errorf("group offset write by the owner = %v", r.Rejection(t))
	}

	group, rest, err := wire09.DecodeConsumerGroup(a.Do(wire09.OpNonReplicated, wire09.CmdGetConsumerGroup, groupRef(t, "g1")).Payload(t))
	if err != nil || group.MembersCount != 2 {
		t.Fatalf("get group = %+v, %v", group, err)
	}
	total := 0
	for range 2 {
		var m wire09.ConsumerGroupMember
		if m, rest, err = wire09.DecodeConsumerGroupMember(rest); err != nil {
			t.Fatal(err)
		}
		total += m.Partitions.Len()
	}
	if total != 4 || len(rest) != 0 {
		t.Errorf("members hold %d partitions, %d bytes left", total, len(rest))
	}

	// Membership ends with the connection: b's partitions go back to a.
	b.Close()
	for {
		gen, parts := syncGroup(t, a)
		if len(parts) == 4 {
			if gen <= genA {
				t.Errorf("generation did not grow when b left: %d then %d", genA, gen)
			}
			break
		}
		a.Do(wire09.OpNonReplicated, wire09.CmdPing, nil) // b's connection closes asynchronously
	}
	if r := a.Do(wire09.OpLeaveConsumerGroup, 0, groupRef(t, "g1")); r.Rejection(t) != 0 {
		t.Fatal("leave")
	}
	if r := a.Do(wire09.OpDeleteConsumerGroup, 0, groupRef(t, "g1")); r.Rejection(t) != 0 {
		t.Fatal("delete group")
	}
	if r := a.Do(wire09.OpNonReplicated, wire09.CmdGetConsumerGroups, must[[]byte](t)(iggywire.AppendTopicRef(nil, iggywire.TopicRef{StreamID: s1, TopicID: t1}))); len(r.Body) != 0 {
		t.Errorf("groups after delete: %x", r.Body)
	}
}

// With heartbeats on, a silent group member is evicted (13) and loses its
// partitions; a silent connection without memberships is left alone.
func TestProtocol09HeartbeatEvictsSilentMembers(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("s1", map[string]uint32{"t1": 1}), testkit.WithHeartbeat(testHeartbeat))
	idle := loggedIn09(t, srv)
	member := loggedIn09(t, srv)
	create := must[[]byte](t)(wire09.AppendCreateConsumerGroup(nil, wire09.CreateConsumerGroup{TopicRef: iggywire.TopicRef{StreamID: iggywire.NamedID("s1"), TopicID: iggywire.NamedID("t1")}, Name: []byte("g1")}))
	member.Do(wire09.OpCreateConsumerGroup, 0, create).Payload(t)
	member.Do(wire09.OpJoinConsumerGroup, 0, groupRef(t, "g1")).Payload(t)
	r := member.Read() // nothing sent: the next frame is the eviction
	if r.Eviction == nil || r.Eviction.Reason != wire09.EvictStaleClient {
		t.Fatalf("silent member got %+v / %+v, want eviction 13", r.Header, r.Eviction)
	}
	member.ExpectClosed()
	if r := idle.Do(wire09.OpNonReplicated, wire09.CmdPing, nil); r.Status() != 0 || r.Eviction != nil {
		t.Fatalf("the silent non-member was dropped: %+v / %+v", r.Header, r.Eviction)
	}
	group, _, err := wire09.DecodeConsumerGroup(idle.Do(wire09.OpNonReplicated, wire09.CmdGetConsumerGroup, groupRef(t, "g1")).Payload(t))
	if err != nil || group.MembersCount != 0 {
		t.Errorf("group after the eviction = %+v, %v", group, err)
	}
}

// testHeartbeat is short so the heartbeat test waits little; what it checks
// does not depend on the interval.
const testHeartbeat = 100 * time.Millisecond

func TestProtocolForcedAndUnknown(t *testing.T) {
	if err := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", Protocol: "1.0"}).Start(context.Background()); !errors.Is(err, devbroker.ErrUnknownProtocol) {
		t.Fatalf("unknown protocol: %v", err)
	}
	srv := testkit.StartBroker(t, testkit.WithProtocol(devbroker.Protocol09))
	loggedIn09(t, srv)
	// An 0.8 frame on a 0.9-only broker is not a frame: the connection closes.
	c := testkit.DialRaw09(t, srv.Addr())
	c.Write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 4), 1))
	c.Write(make([]byte, 300))
	c.ExpectClosed()
}
