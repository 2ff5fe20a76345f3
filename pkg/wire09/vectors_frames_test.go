package wire09_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// The frame-level vectors of docs/iggy-protocol-0.9.md §15.2 (R1–R12 requests, P1–P10 replies)
// and the header golden frame of §15.1, produced and decoded byte for byte.

var (
	specClient = wire09.U128{Lo: 0x0807060504030201, Hi: 0x100F0E0D0C0B0A09}
	clientHex  = "0102030405060708090a0b0c0d0e0f10"
)

// specFrame builds a frame from the spec's notation: the non-zero header
// bytes by offset, then the body.
func specFrame(t *testing.T, header map[int]string, body string) []byte {
	t.Helper()
	b := make([]byte, wire09.HeaderSize)
	for off, h := range header {
		copy(b[off:], unhex(t, h))
	}
	return append(b, unhex(t, body)...)
}

func requestHeader(op wire09.Operation, request, session uint64, code wire09.Command) wire09.RequestHeader {
	return wire09.RequestHeader{Client: specClient, Operation: op, Request: request, Session: session, Code: code}
}

func mustBody(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestHeaderGoldenFrame(t *testing.T) {
	h := wire09.RequestHeader{Size: 260, Client: specClient, Request: 2, Operation: wire09.OpCreateStream, Session: 11}
	got := wire09.AppendRequestHeader(nil, &h)
	want := specFrame(t, map[int]string{48: "04010000", 60: "05", 128: "0102030405060708", 136: "090a0b0c0d0e0f10",
		168: "0200000000000000", 176: "80", 184: "0b00000000000000"}, "")
	if !bytes.Equal(got, want) {
		t.Fatalf("header\n got %x\nwant %x", got, want)
	}
	nonZero := 0
	for _, c := range got {
		if c != 0 {
			nonZero++
		}
	}
	if nonZero != 22 {
		t.Errorf("%d non-zero bytes, want 22", nonZero)
	}
	back, err := wire09.DecodeRequestHeader(got)
	if err != nil || back != h {
		t.Errorf("decode = %+v, %v; want %+v", back, err, h)
	}
}

func TestRequestVectors(t *testing.T) {
	must := mustBody(t)
	loginPrefix := wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0-edge.4")}
	s1 := iggywire.NamedID("s1")
	g1 := iggywire.NamedID("g1")
	topic0 := iggywire.NumericID(0)
	topicOptions := must(wire09.AppendTopicOptions(nil, wire09.TopicOptions{MessageExpiry: 60_000_000, MaxTopicSize: 1 << 30}))
	sendBody := must(wire09.AppendSendMetadata(nil, wire09.SendMetadata{StreamID: s1, TopicID: topic0,
		Partitioning: iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: 2}, MessagesCount: 1}))
	sendBody = must(wire09.AppendBatch(sendBody, []iggywire.Message{{ID: [16]byte{1}, OriginTimestamp: 1_700_000_000_000_000, Payload: []byte("hello")}}))

	tests := []struct {
		name   string
		header wire09.RequestHeader
		body   []byte
		want   map[int]string
		wbody  string
	}{
		{"R1 ping before login", requestHeader(wire09.OpNonReplicated, 1, 0, wire09.CmdPing), nil,
			map[int]string{48: "00010000", 168: "0100000000000000", 176: "02", 196: "01000000"}, ""},
		{"R2 login password", requestHeader(wire09.OpRegister, 0, 0, 0),
			must(wire09.AppendLoginPassword(nil, loginPrefix, []byte("iggy"), []byte("iggy"))),
			map[int]string{48: "26010000", 176: "01"},
			"002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 04 69676779 04 69676779 00000000"},
		{"R4 create stream", requestHeader(wire09.OpCreateStream, 1, 5, 0),
			must(wire09.AppendCreateStream(nil, wire09.CreateStream{Name: []byte("s1")})),
			map[int]string{48: "03010000", 168: "01", 176: "80", 184: "0500000000000000"}, "02 7331"},
		{"R5 get stream", requestHeader(wire09.OpNonReplicated, 2, 5, wire09.CmdGetStream),
			must(iggywire.AppendIdentifier(nil, s1)),
			map[int]string{48: "04010000", 168: "02", 176: "02", 184: "05", 196: "c8000000"}, "02 02 7331"},
		{"R6 create topic", requestHeader(wire09.OpCreateTopic, 2, 5, 0),
			must(wire09.AppendCreateTopic(nil, wire09.CreateTopic{StreamID: s1, PartitionsCount: 3, Name: []byte("t1"), Options: topicOptions})),
			map[int]string{48: "4b010000", 168: "02", 176: "84", 184: "05"},
			"02027331 03000000 02 7431" + "02 0e000000" + hex.EncodeToString([]byte("message_expiry")) + "0c 08000000 0087930300000000" +
				"02 0e000000" + hex.EncodeToString([]byte("max_topic_size")) + "0c 08000000 0000004000000000"},
		{"R7 store offset", requestHeader(wire09.OpStoreConsumerOffset, 3, 5, 0),
			must(wire09.AppendStoreConsumerOffset(nil, wire09.StoreConsumerOffset{ConsumerOffsetRef: iggywire.ConsumerOffsetRef{
				Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(0)}, StreamID: s1, TopicID: topic0,
				Partition: iggywire.SomePartition(2)}, Offset: 10, Ack: wire09.AckQuorum})),
			map[int]string{48: "1f010000", 168: "03", 176: "a1", 184: "05"},
			"01 01 04 00000000 02 02 7331 01 04 00000000 01 02000000 0a00000000000000 01"},
		{"R8 join group", requestHeader(wire09.OpJoinConsumerGroup, 3, 5, 0),
			must(iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: iggywire.TopicRef{StreamID: s1, TopicID: topic0}, GroupID: g1})),
			map[int]string{48: "0e010000", 168: "03", 176: "94", 184: "05"}, "02027331 0104 00000000 0202 6731"},
		{"R9 sync group", requestHeader(wire09.OpNonReplicated, 4, 5, wire09.CmdSyncConsumerGroup),
			must(iggywire.AppendGroupRef(nil, iggywire.GroupRef{TopicRef: iggywire.TopicRef{StreamID: s1, TopicID: topic0}, GroupID: g1})),
			map[int]string{48: "0e010000", 168: "04", 176: "02", 184: "05", 196: "5e020000"}, "02027331 0104 00000000 0202 6731"},
		{"R10 poll group", requestHeader(wire09.OpNonReplicated, 4, 5, wire09.CmdPollMessages),
			must(wire09.AppendPollMessages(nil, wire09.PollMessages{Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindGroup, ID: g1},
				StreamID: s1, TopicID: topic0, Partition: iggywire.SomePartition(2), Strategy: iggywire.PollingStrategy{Kind: iggywire.PollNext},
				Count: 10, AutoCommit: true})),
			map[int]string{48: "22010000", 168: "04", 176: "02", 184: "05", 196: "64000000"},
			"02 02 02 6731 02 02 7331 01 04 00000000 01 02000000 05 0000000000000000 0a000000 01"},
		{"R11 send", requestHeader(wire09.OpSendMessages, 4, 5, 0), sendBody,
			map[int]string{48: "4d020000", 168: "04", 176: "a0", 184: "05"},
			"14000000 02027331 0104 00000000 0204 02000000 01000000" +
				strings.Repeat("00", 24) + "00401e18240a0600 3501000000000000 c30f947c3dc33789 01000000" + strings.Repeat("00", 204) +
				"8e5ca59edbbdbfb9 01" + strings.Repeat("00", 15) + "00000000 00000000 00000000 05000000 0000000000000000 68656c6c6f"},
		{"R12 logout", requestHeader(wire09.OpLogout, 4, 5, 0), nil,
			map[int]string{48: "00010000", 168: "04", 176: "03", 184: "05"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want[60] = "05"
			tt.want[128] = clientHex
			want := specFrame(t, tt.want, tt.wbody)
			got := wire09.AppendRequest(nil, &tt.header, tt.body)
			if !bytes.Equal(got, want) {
				t.Fatalf("frame\n got %x\nwant %x", got, want)
			}
			if err := wire09.ValidateRequest(got); err != nil {
				t.Errorf("a vector fails validation: %v", err)
			}
			back, err := wire09.DecodeRequestHeader(got)
			tt.header.Size = uint32(len(want))
			if err != nil || back != tt.header {
				t.Errorf("decoded header %+v, %v; want %+v", back, err, tt.header)
			}
		})
	}
}

// TestRequestVectorsDecode decodes the bodies of R2–R11 as the broker does.
func TestRequestVectorsDecode(t *testing.T) {
	login, err := wire09.DecodeLogin(unhex(t, "002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 04 69676779 04 69676779 00000000"))
	if err != nil || login.IsToken() || string(login.Username) != "iggy" || string(login.Password) != "iggy" ||
		login.ProtocolVersion != 11264 || string(login.SDKName) != "go-sdk" || string(login.SDKVersion) != "0.9.0-edge.4" {
		t.Errorf("R2 login = %+v, %v", login, err)
	}
	pat, err := wire09.DecodeLogin(unhex(t, "002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 03 746f6b 00000000"))
	if err != nil || !pat.IsToken() || string(pat.Token) != "tok" {
		t.Errorf("R3 token login = %+v, %v", pat, err)
	}
	topic, err := wire09.DecodeCreateTopic(unhex(t, "02027331 03000000 02 7431"+"02 0e000000"+hex.EncodeToString([]byte("message_expiry"))+
		"0c 08000000 0087930300000000"+"02 0e000000"+hex.EncodeToString([]byte("max_topic_size"))+"0c 08000000 0000004000000000"))
	if err != nil || string(topic.StreamID.Name) != "s1" || topic.PartitionsCount != 3 || string(topic.Name) != "t1" {
		t.Fatalf("R6 = %+v, %v", topic, err)
	}
	opts, err := wire09.ParseTopicOptions(topic.Options)
	if err != nil || opts != (wire09.TopicOptions{MessageExpiry: 60_000_000, MaxTopicSize: 1 << 30}) {
		t.Errorf("R6 options = %+v, %v", opts, err)
	}
	store, err := wire09.DecodeStoreConsumerOffset(unhex(t, "01 01 04 00000000 02 02 7331 01 04 00000000 01 02000000 0a00000000000000 01"))
	if err != nil || store.Consumer.Kind != iggywire.ConsumerKindSingle || store.Partition != iggywire.SomePartition(2) || store.Offset != 10 || store.Ack != 1 {
		t.Errorf("R7 = %+v, %v", store, err)
	}
	group, err := iggywire.DecodeGroupRef(unhex(t, "02027331 0104 00000000 0202 6731"))
	if err != nil || string(group.GroupID.Name) != "g1" || !group.TopicID.IsNumeric() || group.TopicID.ID != 0 {
		t.Errorf("R8 = %+v, %v", group, err)
	}
	poll, err := wire09.DecodePollMessages(unhex(t, "02 02 02 6731 02 02 7331 01 04 00000000 01 02000000 05 0000000000000000 0a000000 01"))
	if err != nil || poll.Consumer.Kind != iggywire.ConsumerKindGroup || poll.Strategy.Kind != iggywire.PollNext || poll.Count != 10 || !poll.AutoCommit || poll.Partition.ID != 2 {
		t.Errorf("R10 = %+v, %v", poll, err)
	}
	md, batch, err := wire09.DecodeSendMessages(unhex(t, "14000000 02027331 0104 00000000 0204 02000000 01000000"+
		strings.Repeat("00", 24)+"00401e18240a0600 3501000000000000 c30f947c3dc33789 01000000"+strings.Repeat("00", 204)+
		"8e5ca59edbbdbfb9 01"+strings.Repeat("00", 15)+"00000000 00000000 00000000 05000000 0000000000000000 68656c6c6f"))
	if err != nil || md.Partitioning.PartitionID != 2 || md.MessagesCount != 1 {
		t.Fatalf("R11 = %+v, %v", md, err)
	}
	h, err := wire09.VerifyBatch(batch)
	if err != nil || h.Checksum != 0x8937c33d7c940fc3 || h.Length != 309 || h.OriginTimestamp != 1_700_000_000_000_000 {
		t.Errorf("R11 batch = %+v, %v", h, err)
	}
}

func TestTokenLoginVector(t *testing.T) {
	prefix := wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0-edge.4")}
	body, err := wire09.AppendLoginToken(nil, prefix, []byte("tok"))
	if err != nil {
		t.Fatal(err)
	}
	h := wire09.RequestHeader{Client: wire09.U128{Lo: 1}, Operation: wire09.OpRegister}
	got := wire09.AppendRequest(nil, &h, body)
	want := specFrame(t, map[int]string{48: "20010000", 60: "05", 128: "01", 176: "01"},
		"002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 03 746f6b 00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("R3\n got %x\nwant %x", got, want)
	}
}

func TestReplyVectors(t *testing.T) {
	reply := func(op wire09.Operation, request uint64, status iggywire.Status) wire09.ReplyHeader {
		return wire09.ReplyHeader{Client: specClient, Operation: op, Request: request, Status: status}
	}
	loginBody := wire09.AppendLoginReply(wire09.AppendResultOK(nil), wire09.LoginReply{Session: 5, ProtocolVersion: 11264, ServerVersion: []byte("0.9.0-edge.5")})
	streamBody := wire09.AppendStream(wire09.AppendResultOK(nil), wire09.Stream{CreatedAt: 1_700_000_000_000_000, Name: []byte("s1")})
	tests := []struct {
		name   string
		header wire09.ReplyHeader
		body   []byte
		want   map[int]string
		wbody  string
	}{
		{"P1 login ok", reply(wire09.OpRegister, 0, 0), loginBody, map[int]string{48: "21010000", 208: "01"},
			"00000000 00000000 0500000000000000 002c0000 0c 302e392e302d656467652e35"},
		{"P2 ping ok", reply(wire09.OpNonReplicated, 1, 0), nil, map[int]string{48: "00010000", 200: "01", 208: "02"}, ""},
		{"P3 pre-auth deny", reply(wire09.OpNonReplicated, 1, iggywire.StatusUnauthenticated), nil,
			map[int]string{48: "00010000", 200: "01", 208: "02", 216: "28000000"}, ""},
		{"P4 create stream ok", reply(wire09.OpCreateStream, 1, 0), streamBody, map[int]string{48: "2b010000", 200: "01", 208: "80"},
			"00000000 00000000 00401e18240a0600 00000000" + strings.Repeat("00", 16) + "02 7331 00000000"},
		{"P5 create stream rejected", reply(wire09.OpCreateStream, 1, 0), wire09.AppendResultRejection(nil, iggywire.StatusStreamNameAlreadyExists),
			map[int]string{48: "0c010000", 200: "01", 208: "80"}, "01000000 00000000 f4030000"},
		{"P6 transient", reply(wire09.OpCreateStream, 1, 0), wire09.AppendResultRejection(nil, iggywire.StatusTransientNotAccepted),
			map[int]string{48: "0c010000", 200: "01", 208: "80"}, "01000000 00000000 3a000000"},
		{"P8 send confirmation", reply(wire09.OpSendMessages, 4, 0), wire09.AppendConfirmations(nil, wire09.Confirmation{PartitionID: 2}),
			map[int]string{48: "18010000", 200: "04", 208: "a0"}, "01000000 00000000 00000000 02000000 0000000000000000"},
		{"P9 store offset ok", reply(wire09.OpStoreConsumerOffset, 3, 0), wire09.AppendResultOK(nil),
			map[int]string{48: "04010000", 200: "03", 208: "a1"}, "00000000"},
		{"P10 send empty", reply(wire09.OpSendMessages, 4, 0), nil, map[int]string{48: "00010000", 200: "04", 208: "a0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want[60] = "08"
			tt.want[160] = clientHex
			want := specFrame(t, tt.want, tt.wbody)
			got := wire09.AppendReply(nil, &tt.header, tt.body)
			if !bytes.Equal(got, want) {
				t.Fatalf("frame\n got %x\nwant %x", got, want)
			}
			h, err := wire09.DecodeReplyHeader(got)
			tt.header.Size = uint32(len(want))
			if err != nil || h != tt.header {
				t.Errorf("decoded header %+v, %v; want %+v", h, err, tt.header)
			}
		})
	}
}

// TestReplyVectorsDecode decodes P1–P10 as the client does.
func TestReplyVectorsDecode(t *testing.T) {
	payload, rejection, err := wire09.StripResult(unhex(t, "00000000 00000000 0500000000000000 002c0000 0c 302e392e302d656467652e35"))
	if err != nil || rejection != 0 {
		t.Fatalf("P1 strip: %v %v", rejection, err)
	}
	login, err := wire09.DecodeLoginReply(payload)
	if err != nil || login.UserID != 0 || login.Session != 5 || login.ProtocolVersion != 11264 || string(login.ServerVersion) != "0.9.0-edge.5" {
		t.Errorf("P1 = %+v, %v", login, err)
	}
	p3 := specFrame(t, map[int]string{48: "00010000", 60: "08", 200: "01", 208: "02", 216: "28000000"}, "")
	if h, err := wire09.DecodeReplyHeader(p3); err != nil || !errors.Is(h.Status, iggywire.StatusUnauthenticated) {
		t.Errorf("P3 = %+v, %v", h, err)
	}
	payload, _, err = wire09.StripResult(unhex(t, "00000000 00000000 00401e18240a0600 00000000"+strings.Repeat("00", 16)+"02 7331 00000000"))
	if err != nil {
		t.Fatal(err)
	}
	stream, rest, err := wire09.DecodeStream(payload)
	if err != nil || string(stream.Name) != "s1" || stream.CreatedAt != 1_700_000_000_000_000 || len(rest) != 0 {
		t.Errorf("P4 = %+v, rest %d, %v", stream, len(rest), err)
	}
	for _, v := range []struct {
		body string
		want iggywire.Status
	}{{"01000000 00000000 f4030000", iggywire.StatusStreamNameAlreadyExists}, {"01000000 00000000 3a000000", iggywire.StatusTransientNotAccepted}} {
		if _, rejection, err := wire09.StripResult(unhex(t, v.body)); err != nil || rejection != v.want {
			t.Errorf("P5/P6 %s = %v, %v", v.body, rejection, err)
		}
	}
	if !iggywire.StatusTransientNotAccepted.Transient() {
		t.Error("58 is transient")
	}
	p7 := specFrame(t, map[int]string{48: "00010000", 60: "0d", 128: clientHex, 255: "09"}, "")
	ev, err := wire09.DecodeEviction(p7)
	if err != nil || ev.Reason != wire09.EvictInvalidCredentials || ev.Client != specClient {
		t.Errorf("P7 = %+v, %v", ev, err)
	}
	if got := wire09.AppendEviction(nil, &wire09.EvictionHeader{Client: specClient, Reason: wire09.EvictInvalidCredentials}); !bytes.Equal(got, p7) {
		t.Errorf("P7 produced %x", got)
	}
	if !errors.Is(&wire09.EvictionError{EvictionHeader: ev}, iggywire.StatusInvalidCredentials) {
		t.Error("eviction 9 does not map to InvalidCredentials")
	}
	conf, err := wire09.DecodeConfirmations(unhex(t, "01000000 00000000 00000000 02000000 0000000000000000"), nil)
	if err != nil || len(conf) != 1 || conf[0] != (wire09.Confirmation{PartitionID: 2}) {
		t.Errorf("P8 = %+v, %v", conf, err)
	}
	if payload, rejection, err := wire09.StripResult(unhex(t, "00000000")); err != nil || rejection != 0 || len(payload) != 0 {
		t.Errorf("P9 = %x %v %v", payload, rejection, err)
	}
	if _, err := wire09.DecodeConfirmations(nil, nil); err == nil {
		t.Error("P10: an empty send reply decodes")
	}
}
