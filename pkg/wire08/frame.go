package wire08

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Command is a request's command code.
type Command uint32

// The commands the connectors runtime's client and the dev broker speak.
const (
	CmdPing                 Command = 1
	CmdGetClusterMetadata   Command = 12
	CmdGetMe                Command = 20
	CmdGetClient            Command = 21
	CmdLoginUser            Command = 38
	CmdLogoutUser           Command = 39
	CmdLoginWithToken       Command = 44
	CmdPollMessages         Command = 100
	CmdSendMessages         Command = 101
	CmdGetConsumerOffset    Command = 120
	CmdStoreConsumerOffset  Command = 121
	CmdDeleteConsumerOffset Command = 122
	CmdGetStream            Command = 200
	CmdGetStreams           Command = 201
	CmdCreateStream         Command = 202
	CmdDeleteStream         Command = 203
	CmdGetTopic             Command = 300
	CmdGetTopics            Command = 301
	CmdCreateTopic          Command = 302
	CmdDeleteTopic          Command = 303
	CmdCreatePartitions     Command = 402
	CmdDeletePartitions     Command = 403
	CmdGetConsumerGroup     Command = 600
	CmdGetConsumerGroups    Command = 601
	CmdCreateConsumerGroup  Command = 602
	CmdDeleteConsumerGroup  Command = 603
	CmdJoinConsumerGroup    Command = 604
	CmdLeaveConsumerGroup   Command = 605
)

// Frame sizes and limits.
const (
	// RequestHeadSize is a request's head: [length u32][code u32]; length counts the code and
	// the payload.
	RequestHeadSize = 8
	// ReplyHeadSize is a reply's head: [status u32][length u32]; length counts the payload only.
	ReplyHeadSize = 8
	// MaxCommandPayload bounds the payload of every command but SendMessages (the server
	// answers InvalidCommand above it).
	MaxCommandPayload = 10 << 20
	// MaxServerMessagePayload is the largest message payload a 0.8 server stores; a client
	// cannot send more than 10 000 000 bytes, other producers can.
	MaxServerMessagePayload = 64_000_000
	// MaxUserHeadersSize bounds one message's user headers.
	MaxUserHeadersSize = 100_000
)

// StartRequest appends the head of a request for code to dst, its length left for
// FinishRequest, and returns the buffer and where the frame starts.
func StartRequest(dst []byte, code Command) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	return binary.LittleEndian.AppendUint32(dst, uint32(code)), start
}

// FinishRequest writes the length of the frame that starts at frame[start], its payload being
// everything appended after StartRequest.
func FinishRequest(frame []byte, start int) []byte {
	binary.LittleEndian.PutUint32(frame[start:], uint32(len(frame)-start-4))
	return frame
}

// AppendRequest appends a whole request frame with the payload given.
func AppendRequest(dst []byte, code Command, payload []byte) []byte {
	dst, start := StartRequest(dst, code)
	return FinishRequest(append(dst, payload...), start)
}

// DecodeRequestHead reads a request head: the length (code plus payload; below 4 the frame has
// no extent, which a server answers InvalidCommand) and the command code.
func DecodeRequestHead(head []byte) (length uint32, code Command) {
	return binary.LittleEndian.Uint32(head), Command(binary.LittleEndian.Uint32(head[4:]))
}

// AppendReplyHead appends a reply head: status, and the length of the payload that follows (an
// error carries no payload).
func AppendReplyHead(dst []byte, status iggywire.Status, length int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(status))
	return binary.LittleEndian.AppendUint32(dst, uint32(length))
}

// DecodeReplyHead reads a reply head: the status and the payload length.
func DecodeReplyHead(head []byte) (status iggywire.Status, length uint32) {
	return iggywire.Status(binary.LittleEndian.Uint32(head)), binary.LittleEndian.Uint32(head[4:])
}

// ErrReplyTooLarge is a reply announcing more bytes than its request could be answered with:
// the stream cannot be trusted, and nothing beyond the bound was read or allocated.
var ErrReplyTooLarge = errors.New("reply larger than its request can be answered with")

// readStep bounds how far ReadReply grows its buffer ahead of the bytes that arrived, so a reply
// that lies about its length costs only the memory of what was actually sent.
const readStep = 64 << 10

// ReadReply reads one reply into buf (reused when large enough) and returns its payload. A
// non-zero status is returned as the iggywire.Status (errors carry no payload, so nothing more is
// read). A length above limit is ErrReplyTooLarge, read no further. A stream that ends inside the
// reply is io.ErrUnexpectedEOF.
func ReadReply(r io.Reader, buf []byte, limit int) ([]byte, error) {
	head := slices.Grow(buf[:0], ReplyHeadSize)[:ReplyHeadSize] // the payload overwrites it
	if _, err := io.ReadFull(r, head); err != nil {
		return head[:0], err
	}
	buf = head
	if status := iggywire.Status(binary.LittleEndian.Uint32(head)); status != iggywire.StatusOK {
		return buf[:0], status
	}
	n := binary.LittleEndian.Uint32(head[4:])
	if uint64(n) > uint64(limit) {
		return buf[:0], fmt.Errorf("%w: %d bytes announced, at most %d expected", ErrReplyTooLarge, n, limit)
	}
	buf = buf[:0]
	for len(buf) < int(n) {
		step := min(int(n)-len(buf), max(len(buf), readStep))
		buf = slices.Grow(buf, step)
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+got]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return buf[:0], fmt.Errorf("reply payload (%d of %d bytes): %w", len(buf), n, err)
		}
	}
	return buf, nil
}

// NewReader is the body reader of a 0.8 payload: a payload that ends early and an enum byte out
// of range are InvalidCommand, as a 0.8 server answers them; a malformed identifier or name is
// InvalidFormat.
func NewReader(what string, payload []byte) iggywire.Reader {
	r := iggywire.NewReader(what, payload)
	r.Short, r.BadKind = iggywire.StatusInvalidCommand, iggywire.StatusInvalidCommand
	return r
}
