package wire09_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

func TestValidateRequest(t *testing.T) {
	valid := func(op wire09.Operation, request, session uint64) []byte {
		h := wire09.RequestHeader{Client: specClient, Operation: op, Request: request, Session: session}
		return wire09.AppendRequest(nil, &h, nil)
	}
	tests := []struct {
		name  string
		frame []byte
		fault string // "" = valid
	}{
		{"ping before login", valid(wire09.OpNonReplicated, 1, 0), ""},
		{"ping with zero request", valid(wire09.OpNonReplicated, 0, 0), ""},
		{"register", valid(wire09.OpRegister, 0, 0), ""},
		{"metadata", valid(wire09.OpCreateStream, 1, 5), ""},
		{"partition", valid(wire09.OpSendMessages, 3, 5), ""},
		{"register with request", valid(wire09.OpRegister, 1, 0), "register"},
		{"register with session", valid(wire09.OpRegister, 0, 1), "register"},
		{"metadata without session", valid(wire09.OpCreateStream, 1, 0), "must be positive"},
		{"partition without request", valid(wire09.OpStoreConsumerOffset, 0, 5), "must be positive"},
		{"logout without session", valid(wire09.OpLogout, 1, 0), "must be positive"},
		{"reserved operation", valid(wire09.OpReserved, 1, 5), "not a defined operation"},
		{"undefined operation", valid(wire09.Operation(100), 1, 5), "not a defined operation"},
		{"short header", make([]byte, 100), "need 256"},
	}
	zeroClient := valid(wire09.OpNonReplicated, 1, 0)
	copy(zeroClient[128:144], make([]byte, 16))
	tests = append(tests, struct {
		name  string
		frame []byte
		fault string
	}{"zero client", zeroClient, "client id is zero"})
	reply := wire09.AppendReply(nil, &wire09.ReplyHeader{Operation: wire09.OpNonReplicated}, nil)
	tests = append(tests, struct {
		name  string
		frame []byte
		fault string
	}{"reply frame", reply, "not a request"})
	for _, tt := range tests {
		err := wire09.ValidateRequest(tt.frame)
		switch {
		case tt.fault == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.fault != "" && (err == nil || !strings.Contains(err.Error(), tt.fault)):
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.fault)
		}
	}
}

func TestReadFrame(t *testing.T) {
	ping := wire09.AppendRequest(nil, &wire09.RequestHeader{Client: specClient, Operation: wire09.OpNonReplicated, Code: wire09.CmdPing}, nil)
	withBody := wire09.AppendRequest(nil, &wire09.RequestHeader{Client: specClient, Operation: wire09.OpNonReplicated}, []byte("body"))
	stream := append(append([]byte{}, ping...), withBody...)
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 1024)
	f, err := wire09.ReadFrame(r, buf)
	if err != nil || !bytes.Equal(f, ping) {
		t.Fatalf("first frame: %v", err)
	}
	f, err = wire09.ReadFrame(r, f)
	if err != nil || !bytes.Equal(f, withBody) || string(wire09.Body(f)) != "body" {
		t.Fatalf("second frame: %x %v", f, err)
	}
	if _, err := wire09.ReadFrame(r, f); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}

	sized := func(size uint32, frameType byte) []byte {
		b := make([]byte, 256)
		binary.LittleEndian.PutUint32(b[48:], size)
		b[60] = frameType
		return b
	}
	for _, tt := range []struct {
		name  string
		input []byte
		want  error
	}{
		{"size below header", sized(255, 5), wire09.ErrFrameSize},
		{"size zero", sized(0, 5), wire09.ErrFrameSize},
		{"size above 64 MiB", sized(64<<20+1, 5), wire09.ErrFrameSize},
		{"frame type 30", sized(256, 30), wire09.ErrFrameType},
		{"frame type 255", sized(256, 255), wire09.ErrFrameType},
		{"truncated header", ping[:100], wire09.ErrTruncatedFrame},
		{"truncated body", withBody[:258], wire09.ErrTruncatedFrame},
		{"truncated body, as io sees it", withBody[:258], io.ErrUnexpectedEOF},
		{"64 MiB announced, 10 bytes sent", append(sized(64<<20, 5), make([]byte, 10)...), io.ErrUnexpectedEOF},
	} {
		if _, err := wire09.ReadFrame(bytes.NewReader(tt.input), nil); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	for ft := range 30 {
		if _, err := wire09.ReadFrame(bytes.NewReader(sized(256, byte(ft))), nil); err != nil {
			t.Errorf("frame type %d: %v", ft, err)
		}
	}
	if _, err := wire09.ReadFrame(bytes.NewReader(sized(64<<20, 5)), nil); errors.Is(err, wire09.ErrFrameSize) {
		t.Error("64 MiB exactly is refused")
	}
}

func TestOperations(t *testing.T) {
	tests := []struct {
		code   wire09.Command
		op     wire09.Operation
		framed bool
	}{
		{wire09.CmdPing, wire09.OpNonReplicated, false},
		{wire09.CmdPollMessages, wire09.OpNonReplicated, false},
		{wire09.CmdSyncConsumerGroup, wire09.OpNonReplicated, false},
		{wire09.CmdGetClusterMetadata, wire09.OpNonReplicated, false},
		{wire09.CmdLoginRegister, wire09.OpRegister, true},
		{wire09.CmdLoginRegisterWithPAT, wire09.OpRegister, true},
		{wire09.CmdLoginUser, wire09.OpNonReplicated, false},
		{wire09.CmdLogoutUser, wire09.OpLogout, false},
		{wire09.CmdSendMessages, wire09.OpSendMessages, false},
		{wire09.CmdStoreConsumerOffset, wire09.OpStoreConsumerOffset, true},
		{wire09.CmdDeleteConsumerOffset, wire09.OpDeleteConsumerOffset, true},
		{wire09.CmdCreateStream, wire09.OpCreateStream, true},
		{wire09.CmdCreateTopic, wire09.OpCreateTopic, true},
		{wire09.CmdDeleteSegments, wire09.OpDeleteSegments, false},
		{wire09.CmdCreateConsumerGroup, wire09.OpCreateConsumerGroup, true},
		{wire09.CmdJoinConsumerGroup, wire09.OpJoinConsumerGroup, true},
		{wire09.CmdLeaveConsumerGroup, wire09.OpLeaveConsumerGroup, true},
		{wire09.CmdCreateUser, wire09.OpCreateUser, true},
		{wire09.Command(9999), wire09.OpNonReplicated, false},
	}
	for _, tt := range tests {
		op := wire09.OperationOf(tt.code)
		if op != tt.op || op.ResultFramed() != tt.framed || !op.Defined() {
			t.Errorf("code %d: operation %d framed %v, want %d framed %v", tt.code, op, op.ResultFramed(), tt.op, tt.framed)
		}
	}
	if !wire09.OpDeleteSegments.MetadataPlane() || !wire09.OpLogout.MetadataPlane() || wire09.OpSendMessages.MetadataPlane() {
		t.Error("metadata plane")
	}
	if !wire09.OpDeleteConsumerOffset.PartitionPlane() || wire09.OpLeaveConsumerGroup.PartitionPlane() {
		t.Error("partition plane")
	}
	for _, op := range []wire09.Operation{0, 4, 63, 69, 127, 150, 159, 163, 255} {
		if op.Defined() {
			t.Errorf("operation %d is defined", op)
		}
	}
}

func TestEvictionMapping(t *testing.T) {
	want := map[wire09.EvictionReason]iggywire.Status{
		1: iggywire.StatusUnauthenticated, 2: iggywire.StatusInvalidCommand, 6: iggywire.StatusInvalidCommand,
		7: iggywire.StatusUnauthenticated, 9: iggywire.StatusInvalidCredentials, 10: iggywire.StatusInvalidPersonalAccessToken,
		11: iggywire.StatusUnauthenticated, 13: iggywire.StatusStaleClient, 14: iggywire.StatusIncompatibleProtocolVersion,
		15: iggywire.StatusInvalidFormat, 99: iggywire.StatusInvalidCommand,
	}
	for reason, status := range want {
		if got := reason.Status(); got != status {
			t.Errorf("reason %d maps to %d, want %d", reason, got, status)
		}
	}
	frame := wire09.AppendEviction(nil, &wire09.EvictionHeader{Client: specClient, VersionMax: 11264, VersionMin: 11264, Reason: wire09.EvictIncompatibleProtocol})
	ev, err := wire09.DecodeEviction(frame)
	if err != nil || ev.VersionMax != 11264 || ev.VersionMin != 11264 || binary.LittleEndian.Uint32(frame[144:]) != 11264 || frame[255] != 14 {
		t.Errorf("eviction 14 = %+v, %v", ev, err)
	}
	msg := (&wire09.EvictionError{EvictionHeader: ev}).Error()
	if !strings.Contains(msg, "incompatible protocol") || !strings.Contains(msg, "11264") {
		t.Errorf("eviction message %q", msg)
	}
}
