package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// maxReusedReply keeps a rare huge reply from pinning its buffer.
const maxReusedReply = 64 << 20

// pollCode is PollMessages on the wire (iggy-protocol.md §3).
const pollCode = 100

// pollInto runs one PollMessages request on the SDK's connection, under the SDK's request lock,
// and decodes the reply into buf. With store set, a StoreConsumerOffset request goes first in the
// same write, and its outcome is batch.StoreErr (a lost connection is err, so the caller retries
// both). ok is false when the SDK's socket or lock cannot be found; the caller then
// polls through the SDK.
func pollInto(sdk *tcp.IggyTcpClient, buf *api.PollBuffers, stream, topic iggcon.Identifier, consumer iggcon.Consumer,
	count uint32, autoCommit bool, store *api.StoredOffset, log func(msg string, args ...any)) (batch api.Batch, ok bool, err error) {
	conn, mu := connOf(sdk), requestLockOf(sdk)
	if conn == nil || mu == nil {
		return api.Batch{}, false, nil
	}
	buf.Request = buf.Request[:0]
	if store != nil {
		buf.Request = appendStoreOffsetRequest(buf.Request, stream, topic, consumer, store.PartitionID, store.Offset)
	}
	buf.Request = appendPollRequest(buf.Request, stream, topic, consumer, count, autoCommit)
	var storeErr error
	mu.Lock()
	_, err = conn.Write(buf.Request)
	if err == nil && store != nil {
		// The store's reply has no body; a non-zero status is its error, and the poll's reply
		// follows either way. An error that drops the session (connection loss, errProtocol)
		// ends the call here: the session is not read again.
		var body []byte
		body, storeErr = readReply(conn, buf.Reply[:0])
		switch {
		case isConnectionLoss(storeErr):
			err = storeErr
		case storeErr == nil && len(body) > 0:
			err = fmt.Errorf("%w: store offset reply of %d bytes", errProtocol, len(body))
		}
	}
	reply := buf.Reply[:0]
	if err == nil {
		reply, err = readReply(conn, reply)
	}
	mu.Unlock()
	if cap(reply) <= maxReusedReply {
		buf.Reply = reply
	}
	if err != nil {
		return api.Batch{}, true, err
	}
	batch, buf.Msgs, buf.Headers, err = decodePollReply(reply, buf.Msgs[:0], buf.Headers[:0], log)
	batch.StoreErr = storeErr
	return batch, true, err
}

// storeOffsetCode is StoreConsumerOffset on the wire (iggy-protocol.md §3).
const storeOffsetCode = 121

// appendStoreOffsetRequest frames a StoreConsumerOffset request as the SDK's command does:
// [length u32][code u32][consumer kind u8][consumer id][stream id][topic id][partition flag u8]
// [partition u32][offset u64].
func appendStoreOffsetRequest(b []byte, stream, topic iggcon.Identifier, consumer iggcon.Consumer, partition uint32, offset uint64) []byte {
	start := len(b)
	b = appendConsumerRequestHead(b, storeOffsetCode, stream, topic, consumer)
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, partition)
	b = binary.LittleEndian.AppendUint64(b, offset)
	return endRequest(b, start)
}

// appendConsumerRequestHead starts a request frame at len(b) with the head the consumer
// commands share: [length u32, filled in by endRequest][code u32][consumer kind u8][consumer id]
// [stream id][topic id].
func appendConsumerRequestHead(b []byte, code uint32, stream, topic iggcon.Identifier, consumer iggcon.Consumer) []byte {
	b = append(b, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, code)
	b = append(b, byte(consumer.Kind))
	b, _ = consumer.Id.AppendBinary(b)
	b, _ = stream.AppendBinary(b)
	b, _ = topic.AppendBinary(b)
	return b
}

// endRequest writes the length of the frame that starts at b[start].
func endRequest(b []byte, start int) []byte {
	binary.LittleEndian.PutUint32(b[start:start+4], uint32(len(b)-start-4))
	return b
}

// appendPollRequest frames a PollMessages request with strategy "next", every partition, as the
// SDK's command does: [length u32][code u32][consumer kind u8][consumer id][stream id][topic id]
// [partition flag u8][partition u32][strategy kind u8][strategy value u64][count u32][auto commit u8].
func appendPollRequest(b []byte, stream, topic iggcon.Identifier, consumer iggcon.Consumer, count uint32, autoCommit bool) []byte {
	start := len(b)
	b = appendConsumerRequestHead(b, pollCode, stream, topic, consumer)
	b = append(b, 0, 0, 0, 0, 0) // no partition: the server assigns one
	next := iggcon.NextPollingStrategy()
	b = append(b, byte(next.Kind))
	b = binary.LittleEndian.AppendUint64(b, next.Value)
	b = binary.LittleEndian.AppendUint32(b, count)
	commit := byte(0)
	if autoCommit {
		commit = 1
	}
	return endRequest(append(b, commit), start)
}

// roundTrip writes req and reads the reply body into dst: [status u32][length u32][body]. A
// non-zero status is the server's error, as the SDK reports it (no body follows).
func roundTrip(conn net.Conn, req, dst []byte) ([]byte, error) {
	if _, err := conn.Write(req); err != nil {
		return dst, err
	}
	return readReply(conn, dst)
}

// readReply reads one reply of roundTrip's form.
func readReply(conn net.Conn, dst []byte) ([]byte, error) {
	var head [8]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return dst, fmt.Errorf("failed to read response for TCP request: %w", err)
	}
	if status := ierror.Code(binary.LittleEndian.Uint32(head[0:4])); status != 0 {
		return dst, ierror.FromCode(status)
	}
	n := int(binary.LittleEndian.Uint32(head[4:8]))
	if n <= 1 {
		return dst[:0], nil
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if _, err := io.ReadFull(conn, dst); err != nil {
		return dst, err
	}
	return dst, nil
}

// messageHeaderSize is one stored message's header on the wire (iggy-protocol.md §5.1):
// checksum u64, id u128, offset u64, timestamp u64, origin timestamp u64, user-header length
// u32, payload length u32, reserved u64.
const messageHeaderSize = 64

// decodePollReply decodes a PolledMessages body ([partition u32][current offset u64][count u32]
// then messages) into msgs and headers, which it returns grown, with the SDK's rules: decoding
// stops at a message whose header or payload runs past the end (the SDK drops that tail too),
// and user headers that do not parse are dropped with a debug line (pipeline.md §1.4). Payloads
// and header values alias body.
func decodePollReply(body []byte, msgs []api.InMessage, headers []api.HeaderEntry, log func(string, ...any)) (api.Batch, []api.InMessage, []api.HeaderEntry, error) {
	if len(body) == 0 {
		return api.Batch{}, msgs, headers, nil
	}
	if len(body) < 16 {
		return api.Batch{}, msgs, headers, fmt.Errorf("%w: poll reply of %d bytes", errProtocol, len(body))
	}
	b := api.Batch{PartitionID: binary.LittleEndian.Uint32(body[0:4]), CurrentOffset: binary.LittleEndian.Uint64(body[4:12])}
	type span struct{ msg, from, to int }
	var spans [16]span
	extra := spans[:0]
	for pos := 16; pos+messageHeaderSize < len(body); {
		h := body[pos : pos+messageHeaderSize]
		userLen := int(binary.LittleEndian.Uint32(h[48:52]))
		payloadLen := int(binary.LittleEndian.Uint32(h[52:56]))
		pos += messageHeaderSize
		if payloadLen > len(body)-pos {
			break
		}
		m := api.InMessage{
			Checksum:        binary.LittleEndian.Uint64(h[0:8]),
			ID:              [16]byte(h[8:24]),
			Offset:          binary.LittleEndian.Uint64(h[24:32]),
			Timestamp:       binary.LittleEndian.Uint64(h[32:40]),
			OriginTimestamp: binary.LittleEndian.Uint64(h[40:48]),
			Payload:         body[pos : pos+payloadLen : pos+payloadLen],
		}
		pos += payloadLen
		if userLen > 0 {
			if userLen > len(body)-pos {
				// The SDK slices past the end here and panics; that is a reply out of step.
				return api.Batch{}, msgs, headers, fmt.Errorf("%w: user headers run past the reply", errProtocol)
			}
			from := len(headers)
			parsed, err := api.ParseUserHeaders(headers, body[pos:pos+userLen])
			if err != nil {
				log("dropping unparsable user headers", "offset", m.Offset, "error", err)
			} else {
				headers = parsed
				extra = append(extra, span{len(msgs), from, len(headers)})
			}
			pos += userLen
		}
		msgs = append(msgs, m)
	}
	for _, s := range extra {
		msgs[s.msg].Headers = headers[s.from:s.to:s.to]
	}
	b.Messages = msgs
	return b, msgs, headers, nil
}

// requestLockOf returns the SDK client's request mutex (the unexported field "mtx", which every
// SDK call holds for its round trip), so a request of ours never interleaves with the SDK's own
// (the heartbeat's ping). nil if a newer SDK moved it; the tests then fail.
func requestLockOf(sdk *tcp.IggyTcpClient) *sync.Mutex { return sdkRequestLockField(sdk) }
