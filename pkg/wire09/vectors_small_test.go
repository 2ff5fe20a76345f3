package wire09_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// The smaller pinned vectors of docs/iggy-protocol-0.9.md §15.1.

func TestRegisterLayout(t *testing.T) {
	prefix := wire09.LoginPrefix{ProtocolVersion: wire09.ProtocolVersion, SDKName: []byte("go-sdk"), SDKVersion: []byte("0.9.0-edge.1")}
	body, err := wire09.AppendLoginPassword(nil, prefix, []byte("iggy"), []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, "002c0000 06"+hexOf("go-sdk")+"0c"+hexOf("0.9.0-edge.1")+"04"+hexOf("iggy")+"06"+hexOf("secret")+"00000000")
	if !bytes.Equal(body, want) {
		t.Fatalf("login body\n got %x\nwant %x", body, want)
	}
	if _, err := wire09.AppendLoginPassword(nil, prefix, []byte("iggy"), nil); err != nil {
		t.Errorf("an empty password is refused: %v", err)
	}
	for _, tt := range []struct{ user, pass, version string }{{"", "p", "1"}, {string(make([]byte, 256)), "p", "1"}, {"u", string(make([]byte, 256)), "1"}, {"u", "p", ""}} {
		p := prefix
		p.SDKVersion = []byte(tt.version)
		if _, err := wire09.AppendLoginPassword(nil, p, []byte(tt.user), []byte(tt.pass)); err == nil {
			t.Errorf("login %d/%d/%d bytes encodes", len(tt.user), len(tt.pass), len(tt.version))
		}
	}
	if _, err := wire09.AppendLoginToken(nil, prefix, make([]byte, 256)); err == nil {
		t.Error("a 256-byte token encodes")
	}

	reply := binary.LittleEndian.AppendUint32(nil, 7)
	reply = binary.LittleEndian.AppendUint64(reply, 128)
	reply = binary.LittleEndian.AppendUint32(reply, 11264)
	reply = append(append(reply, 13), "0.11.0-edge.1"...)
	got, err := wire09.DecodeLoginReply(reply)
	if err != nil || got.UserID != 7 || got.Session != 128 || got.ProtocolVersion != 11264 || string(got.ServerVersion) != "0.11.0-edge.1" {
		t.Errorf("golden reply = %+v, %v", got, err)
	}
	if produced := wire09.AppendLoginReply(nil, got); !bytes.Equal(produced, reply) {
		t.Errorf("login reply produced %x, want %x", produced, reply)
	}
	for n := range len(reply) {
		if _, err := wire09.DecodeLoginReply(reply[:n]); err == nil {
			t.Errorf("reply truncated to %d bytes decodes", n)
		}
	}
	if _, err := wire09.DecodeLoginReply(append(reply, 0xff, 0xff)); err != nil {
		t.Errorf("trailing bytes are refused: %v", err)
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(s))
	for i := range len(s) {
		out = append(out, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(out)
}

func TestProtocolVersionGate(t *testing.T) {
	if wire09.ProtocolVersion != 11264 || wire09.PackVersion(0, 11, 0) != 11264 {
		t.Fatalf("ProtocolVersion = %d", wire09.ProtocolVersion)
	}
	for _, tt := range []struct {
		v    uint32
		want bool
	}{{0, false}, {wire09.PackVersion(0, 10, 1023), false}, {11264, true}, {wire09.PackVersion(0, 11, 7), true},
		{wire09.PackVersion(0, 11, 1023), true}, {wire09.PackVersion(0, 12, 0), false}, {wire09.PackVersion(1, 0, 0), false}} {
		if got := wire09.VersionAccepted(tt.v); got != tt.want {
			t.Errorf("VersionAccepted(%d) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestConfirmationsGolden(t *testing.T) {
	golden := unhex(t, "01000000 01000000 02000000 03000000 0400000000000000")
	want := wire09.Confirmation{StreamID: 1, TopicID: 2, PartitionID: 3, BaseOffset: 4}
	got, err := wire09.DecodeConfirmations(golden, nil)
	if err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if produced := wire09.AppendConfirmations(nil, want); !bytes.Equal(produced, golden) {
		t.Errorf("produced %x", produced)
	}
	for n := 1; n < len(golden); n++ {
		if _, err := wire09.DecodeConfirmations(golden[:n], nil); err == nil {
			t.Errorf("truncated to %d bytes decodes", n)
		}
	}
	if _, err := wire09.DecodeConfirmations(append(golden, 0), nil); err == nil {
		t.Error("a trailing byte decodes")
	}
	if got, err := wire09.DecodeConfirmations(unhex(t, "00000000"), nil); err != nil || len(got) != 0 {
		t.Errorf("count 0 = %+v, %v", got, err)
	}
	if _, err := wire09.DecodeConfirmations(unhex(t, "ffffffff"), nil); err == nil {
		t.Error("a bogus count decodes")
	}
}

func TestSyncGolden(t *testing.T) {
	golden := unhex(t, "0700000000000000 03000000 00000000 02000000 04000000")
	a, err := wire09.DecodeGroupAssignment(golden)
	if err != nil || a.Generation != 7 {
		t.Fatalf("decoded %+v, %v", a, err)
	}
	if got := a.Partitions.AppendTo(nil); len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 4 {
		t.Errorf("partitions = %v", got)
	}
	if produced := wire09.AppendGroupAssignment(nil, 7, []uint32{0, 2, 4}); !bytes.Equal(produced, golden) {
		t.Errorf("produced %x", produced)
	}
	if _, err := wire09.DecodeGroupAssignment(nil); !errors.Is(err, iggywire.StatusConsumerGroupMemberNotFound) {
		t.Errorf("empty sync reply: %v", err)
	}
	for n := 1; n < len(golden); n++ {
		if _, err := wire09.DecodeGroupAssignment(golden[:n]); err == nil {
			t.Errorf("truncated to %d bytes decodes", n)
		}
	}
	if _, err := wire09.DecodeGroupAssignment(unhex(t, "0100000000000000 ffffffff")); err == nil {
		t.Error("a bogus count decodes")
	}
}

// A sliced record keeps its base offset; the first frame's delta places it.
func TestSlicedRecordLeadingDelta(t *testing.T) {
	msgs := []iggywire.Message{
		{ID: [16]byte{1}, Payload: []byte("a")}, {ID: [16]byte{2}, Payload: []byte("b")},
		{ID: [16]byte{3}, Payload: []byte("c")}, {ID: [16]byte{4}, OriginTimestamp: 9, Payload: []byte("tail"), Headers: []byte("h")},
	}
	record, err := wire09.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	wire09.StampBatch(record, 1, 50, 9000)
	slice := wire09.AppendSlice(nil, record, 3, 1)
	h, err := wire09.VerifyBatch(slice)
	if err != nil {
		t.Fatalf("the slice does not verify: %v", err)
	}
	if h.BaseOffset != 50 || h.BaseTimestamp != 9000 || h.Count != 1 || h.PartitionID != 1 {
		t.Errorf("slice header = %+v", h)
	}
	body := append(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: 1, CurrentOffset: 53, MessagesCount: 1}), slice...)
	it, err := wire09.NewPollIterator(body)
	if err != nil {
		t.Fatal(err)
	}
	var m iggywire.PolledMessage
	if !it.Next(&m) || m.Offset != 53 || m.Timestamp != 9000 || m.OriginTimestamp != 9 || string(m.Payload) != "tail" || string(m.Headers) != "h" {
		t.Errorf("sliced message = %+v (err %v)", m, it.Err())
	}
	if it.Next(&m) || it.Err() != nil {
		t.Errorf("a second message or an error: %v", it.Err())
	}
	// A range past the end is clamped; an empty range appends nothing.
	if h, err := wire09.VerifyBatch(wire09.AppendSlice(nil, record, 2, 10)); err != nil || h.Count != 2 {
		t.Errorf("clamped slice = %+v, %v", h, err)
	}
	if got := wire09.AppendSlice(nil, record, 4, 1); len(got) != 0 {
		t.Errorf("slice past the end appended %d bytes", len(got))
	}
	if got := wire09.AppendSlice(nil, record, 0, 4); !bytes.Equal(got, record) {
		t.Error("a full slice differs from the record")
	}
}

var goldenOptionsBlock = []byte{
	2, 13, 0, 0, 0, 'e', 'n', 'f', 'o', 'r', 'c', 'e', '_', 'f', 's', 'y', 'n', 'c', 3, 1, 0, 0, 0, 1,
	2, 12, 0, 0, 0, 's', 'e', 'g', 'm', 'e', 'n', 't', '_', 's', 'i', 'z', 'e', 12, 8, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0,
}

func TestOptionsGolden(t *testing.T) {
	block, err := wire09.AppendOption(nil, "enforce_fsync", iggywire.KindBool, []byte{1})
	if err == nil {
		block, err = wire09.AppendOptionUint64(block, "segment_size", 1<<30)
	}
	if err != nil || !bytes.Equal(block, goldenOptionsBlock) {
		t.Fatalf("produced %v, %v", block, err)
	}
	if n, err := wire09.ValidateOptions(goldenOptionsBlock); err != nil || n != 2 {
		t.Errorf("validate = %d, %v", n, err)
	}
	if o, err := wire09.ParseTopicOptions(goldenOptionsBlock); err != nil || o != (wire09.TopicOptions{}) {
		t.Errorf("known topic keys: %+v, %v", o, err)
	}
	it := wire09.NewTLVIterator(goldenOptionsBlock)
	e, ok := it.Next()
	if !ok || string(e.Key) != "enforce_fsync" || e.ValueKind != iggywire.KindBool || !bytes.Equal(e.Value, []byte{1}) {
		t.Errorf("first entry = %+v", e)
	}
}

func TestSmallRequestVectors(t *testing.T) {
	ref := iggywire.TopicRef{StreamID: iggywire.NumericID(1), TopicID: iggywire.NumericID(2)}
	group, err := wire09.AppendCreateConsumerGroup(nil, wire09.CreateConsumerGroup{TopicRef: ref, Name: []byte("grp")})
	if want := unhex(t, "01 04 01000000 01 04 02000000 03 677270"); err != nil || !bytes.Equal(group, want) {
		t.Errorf("create group = %x, %v", group, err)
	}
	if c, err := wire09.DecodeCreateConsumerGroup(group); err != nil || string(c.Name) != "grp" || c.TopicID.ID != 2 {
		t.Errorf("decoded create group = %+v, %v", c, err)
	}
	id, err := iggywire.AppendIdentifier(nil, iggywire.NumericID(1))
	if err != nil || !bytes.Equal(id, unhex(t, "01 04 01000000")) {
		t.Errorf("get stream 1 = %x", id)
	}
	stream, err := wire09.AppendCreateStream(nil, wire09.CreateStream{Name: []byte("test")})
	if err != nil || !bytes.Equal(stream, unhex(t, "04 74657374")) {
		t.Errorf("create stream = %x", stream)
	}
}

func TestResultSection(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		payload   string
		rejection iggywire.Status
		bad       bool
	}{
		{"success, empty", "00000000", "", 0, false},
		{"success with payload", "00000000 0102", "0102", 0, false},
		{"rejection 1009", "01000000 00000000 f1030000", "", iggywire.StatusStreamIDNotFound, false},
		{"empty body", "", "", 0, true},
		{"short count", "000000", "", 0, true},
		{"count without entry", "01000000", "", 0, true},
		{"entry cut short", "01000000 00000000 f103", "", 0, true},
		{"two entries, one present", "02000000 00000000 f1030000", "", 0, true},
		{"rejection with code 0", "01000000 00000000 00000000", "", 0, true},
	}
	for _, tt := range tests {
		payload, rejection, err := wire09.StripResult(unhex(t, tt.body))
		if (err != nil) != tt.bad || rejection != tt.rejection || !bytes.Equal(payload, unhex(t, tt.payload)) {
			t.Errorf("%s: payload %x rejection %v err %v", tt.name, payload, rejection, err)
		}
	}
	if got := wire09.AppendResultRejection(nil, iggywire.StatusStreamIDNotFound); !bytes.Equal(got, unhex(t, "01000000 00000000 f1030000")) {
		t.Errorf("rejection = %x", got)
	}
}
