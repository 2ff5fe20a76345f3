package wire09

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Header offsets (§3). Fields are read and written by offset because frame
// buffers are not aligned.
const (
	offSize    = 48
	offCommand = 60

	offReqClient          = 128
	offReqRequestChecksum = 144
	offReqTimestamp       = 160
	offReqRequest         = 168
	offReqOperation       = 176
	offReqSession         = 184
	offReqUserID          = 192
	offReqCode            = 196

	offRepRequestChecksum = 128
	offRepClient          = 160
	offRepOp              = 176
	offRepCommit          = 184
	offRepTimestamp       = 192
	offRepRequest         = 200
	offRepOperation       = 208
	offRepStatus          = 216

	offEvClient     = 128
	offEvVersionMax = 144
	offEvVersionMin = 148
	offEvReason     = 255

	offCluster = 32
)

// U128 is a 128-bit value as the wire carries it: low 64 bits first.
type U128 struct{ Lo, Hi uint64 }

// IsZero reports whether both halves are zero.
func (u U128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

func (u U128) String() string { return fmt.Sprintf("%016x%016x", u.Hi, u.Lo) }

func getU128(b []byte) U128 {
	return U128{Lo: binary.LittleEndian.Uint64(b), Hi: binary.LittleEndian.Uint64(b[8:])}
}

func putU128(b []byte, u U128) {
	binary.LittleEndian.PutUint64(b, u.Lo)
	binary.LittleEndian.PutUint64(b[8:], u.Hi)
}

// RequestHeader is the client -> server header (§3.2).
type RequestHeader struct {
	Size            uint32 // header + body; AppendRequest fills it in
	Cluster         U128
	Client          U128
	RequestChecksum U128
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Session         uint64
	UserID          uint32
	Code            Command // only with OpNonReplicated
}

// ReplyHeader is the server -> client header (§3.3).
type ReplyHeader struct {
	Size            uint32
	Cluster         U128
	RequestChecksum U128
	Client          U128
	Op              uint64
	Commit          uint64
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Status          iggywire.Status
}

// EvictionHeader is the session-terminal notice (§3.4); it has no body.
type EvictionHeader struct {
	Client     U128
	VersionMax uint32 // only with EvictIncompatibleProtocol
	VersionMin uint32
	Reason     EvictionReason
}

// FrameSize is the total frame length a header announces.
func FrameSize(header []byte) uint32 { return binary.LittleEndian.Uint32(header[offSize:]) }

// FrameTypeOf is the frame type byte of a header.
func FrameTypeOf(header []byte) FrameType { return FrameType(header[offCommand]) }

// SetFrameSize writes len(frame) into the frame's size field, for frames
// built by appending the body after the header.
func SetFrameSize(frame []byte) { PutFrameSize(frame, uint32(len(frame))) }

// PutFrameSize writes size into a header's size field.
func PutFrameSize(header []byte, size uint32) {
	binary.LittleEndian.PutUint32(header[offSize:], size)
}

// appendZeroHeader appends 256 zero bytes and returns the buffer and the new header.
func appendZeroHeader(dst []byte) ([]byte, []byte) {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	return dst, dst[start : start+HeaderSize]
}

// AppendRequestHeader appends a request header with h.Size as given. Use
// AppendRequest or SetFrameSize when the body follows.
func AppendRequestHeader(dst []byte, h *RequestHeader) []byte {
	dst, b := appendZeroHeader(dst)
	binary.LittleEndian.PutUint32(b[offSize:], h.Size)
	b[offCommand] = byte(FrameRequest)
	putU128(b[offCluster:], h.Cluster)
	putU128(b[offReqClient:], h.Client)
	putU128(b[offReqRequestChecksum:], h.RequestChecksum)
	binary.LittleEndian.PutUint64(b[offReqTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offReqRequest:], h.Request)
	b[offReqOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint64(b[offReqSession:], h.Session)
	binary.LittleEndian.PutUint32(b[offReqUserID:], h.UserID)
	binary.LittleEndian.PutUint32(b[offReqCode:], uint32(h.Code))
	return dst
}

// AppendRequest appends a whole request frame: the header with its size set, then body.
func AppendRequest(dst []byte, h *RequestHeader, body []byte) []byte {
	start := len(dst)
	dst = AppendRequestHeader(dst, h)
	dst = append(dst, body...)
	SetFrameSize(dst[start:])
	return dst
}

// DecodeRequestHeader reads a request header from the first 256 bytes of b.
// It does not validate; see ValidateRequest.
func DecodeRequestHeader(b []byte) (RequestHeader, error) {
	if len(b) < HeaderSize {
		return RequestHeader{}, fmt.Errorf("request header: %d bytes, need %d: %w", len(b), HeaderSize, ErrTruncatedFrame)
	}
	return RequestHeader{
		Size:            binary.LittleEndian.Uint32(b[offSize:]),
		Cluster:         getU128(b[offCluster:]),
		Client:          getU128(b[offReqClient:]),
		RequestChecksum: getU128(b[offReqRequestChecksum:]),
		Timestamp:       binary.LittleEndian.Uint64(b[offReqTimestamp:]),
		Request:         binary.LittleEndian.Uint64(b[offReqRequest:]),
		Operation:       Operation(b[offReqOperation]),
		Session:         binary.LittleEndian.Uint64(b[offReqSession:]),
		UserID:          binary.LittleEndian.Uint32(b[offReqUserID:]),
		Code:            Command(binary.LittleEndian.Uint32(b[offReqCode:])),
	}, nil
}

// ValidateRequest applies the server's request checks (§3.5) to a frame
// header. A frame failing them is dropped without a reply; the error says why.
func ValidateRequest(header []byte) error {
	if len(header) < HeaderSize {
		return fmt.Errorf("request header: %d bytes, need %d: %w", len(header), HeaderSize, ErrTruncatedFrame)
	}
	if t := FrameTypeOf(header); t != FrameRequest {
		return fmt.Errorf("frame type %d is not a request (5)", t)
	}
	h, _ := DecodeRequestHeader(header)
	switch {
	case h.Operation == OpReserved || !h.Operation.Defined():
		return fmt.Errorf("operation %d is not a defined operation", h.Operation)
	case h.Client.IsZero():
		return fmt.Errorf("client id is zero (operation %d)", h.Operation)
	case h.Operation == OpRegister && (h.Session != 0 || h.Request != 0):
		return fmt.Errorf("register with session %d and request %d, both must be 0", h.Session, h.Request)
	case h.Operation != OpRegister && h.Operation != OpNonReplicated && (h.Session == 0 || h.Request == 0):
		return fmt.Errorf("operation %d with session %d and request %d, both must be positive", h.Operation, h.Session, h.Request)
	}
	return nil
}

// AppendReplyHeader appends a reply header with h.Size as given. Use
// AppendReply or SetFrameSize when a body follows.
func AppendReplyHeader(dst []byte, h *ReplyHeader) []byte {
	dst, b := appendZeroHeader(dst)
	binary.LittleEndian.PutUint32(b[offSize:], h.Size)
	b[offCommand] = byte(FrameReply)
	putU128(b[offCluster:], h.Cluster)
	putU128(b[offRepRequestChecksum:], h.RequestChecksum)
	putU128(b[offRepClient:], h.Client)
	binary.LittleEndian.PutUint64(b[offRepOp:], h.Op)
	binary.LittleEndian.PutUint64(b[offRepCommit:], h.Commit)
	binary.LittleEndian.PutUint64(b[offRepTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offRepRequest:], h.Request)
	b[offRepOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint32(b[offRepStatus:], uint32(h.Status))
	return dst
}

// AppendReply appends a whole reply frame: the header with its size set, then body.
func AppendReply(dst []byte, h *ReplyHeader, body []byte) []byte {
	start := len(dst)
	dst = AppendReplyHeader(dst, h)
	dst = append(dst, body...)
	SetFrameSize(dst[start:])
	return dst
}

// DecodeReplyHeader reads a reply header from the first 256 bytes of b. It
// checks the frame type is Reply; an eviction is reported by FrameTypeOf first.
func DecodeReplyHeader(b []byte) (ReplyHeader, error) {
	if len(b) < HeaderSize {
		return ReplyHeader{}, fmt.Errorf("reply header: %d bytes, need %d: %w", len(b), HeaderSize, ErrTruncatedFrame)
	}
	if t := FrameTypeOf(b); t != FrameReply {
		return ReplyHeader{}, fmt.Errorf("frame type %d is not a reply (8)", t)
	}
	return ReplyHeader{
		Size:            binary.LittleEndian.Uint32(b[offSize:]),
		Cluster:         getU128(b[offCluster:]),
		RequestChecksum: getU128(b[offRepRequestChecksum:]),
		Client:          getU128(b[offRepClient:]),
		Op:              binary.LittleEndian.Uint64(b[offRepOp:]),
		Commit:          binary.LittleEndian.Uint64(b[offRepCommit:]),
		Timestamp:       binary.LittleEndian.Uint64(b[offRepTimestamp:]),
		Request:         binary.LittleEndian.Uint64(b[offRepRequest:]),
		Operation:       Operation(b[offRepOperation]),
		Status:          iggywire.Status(binary.LittleEndian.Uint32(b[offRepStatus:])),
	}, nil
}

// AppendEviction appends a 256-byte eviction frame.
func AppendEviction(dst []byte, h *EvictionHeader) []byte {
	dst, b := appendZeroHeader(dst)
	binary.LittleEndian.PutUint32(b[offSize:], HeaderSize)
	b[offCommand] = byte(FrameEviction)
	putU128(b[offEvClient:], h.Client)
	binary.LittleEndian.PutUint32(b[offEvVersionMax:], h.VersionMax)
	binary.LittleEndian.PutUint32(b[offEvVersionMin:], h.VersionMin)
	b[offEvReason] = byte(h.Reason)
	return dst
}

// DecodeEviction reads an eviction header.
func DecodeEviction(b []byte) (EvictionHeader, error) {
	if len(b) < HeaderSize {
		return EvictionHeader{}, fmt.Errorf("eviction header: %d bytes, need %d: %w", len(b), HeaderSize, ErrTruncatedFrame)
	}
	if t := FrameTypeOf(b); t != FrameEviction {
		return EvictionHeader{}, fmt.Errorf("frame type %d is not an eviction (13)", t)
	}
	return EvictionHeader{
		Client:     getU128(b[offEvClient:]),
		VersionMax: binary.LittleEndian.Uint32(b[offEvVersionMax:]),
		VersionMin: binary.LittleEndian.Uint32(b[offEvVersionMin:]),
		Reason:     EvictionReason(b[offEvReason]),
	}, nil
}

// EvictionError is an eviction seen as an error by a client: Unwrap gives the
// status the Go SDK maps the reason to.
type EvictionError struct{ EvictionHeader }

func (e *EvictionError) Error() string {
	if e.Reason == EvictIncompatibleProtocol {
		return fmt.Sprintf("evicted by the server: %s (reason %d; server accepts protocol %d..%d, ours is %d)",
			e.Reason, e.Reason, e.VersionMin, e.VersionMax, ProtocolVersion)
	}
	return fmt.Sprintf("evicted by the server: %s (reason %d)", e.Reason, e.Reason)
}

func (e *EvictionError) Unwrap() error { return e.Reason.Status() }
