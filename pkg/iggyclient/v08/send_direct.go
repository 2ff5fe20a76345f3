package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// sendCode is SendMessages on the wire (iggy-protocol.md §3).
const sendCode = 101

// sendRequests recycles the request buffers of sendDirect; a rare huge request is not kept.
var sendRequests = sync.Pool{New: func() any { return new([]byte) }}

// sendDirect sends msgs on the SDK's connection, under the SDK's request lock, encoded straight
// into one reused buffer: the bytes the SDK's SendMessages writes (without compression), minus its
// per-message header slices and its two whole-request copies. direct is false when the SDK's
// socket or lock cannot be found or the SDK would compress; nothing was sent then and the caller
// sends through the SDK. A message the SDK would reject is an api.ErrInvalidMessage, nothing sent.
func (c *sdkClient) sendDirect(ctx context.Context, stream, topic iggcon.Identifier, p iggcon.Partitioning, msgs []api.OutMessage, originTimestamp uint64) (direct bool, err error) {
	bufp := sendRequests.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= maxReusedReply {
			sendRequests.Put(bufp)
		}
	}()
	req, err := appendSendRequest((*bufp)[:0], stream, topic, p, msgs, originTimestamp)
	*bufp = req
	if err != nil {
		return true, err
	}
	err = c.run(ctx, func(sdk *tcp.IggyTcpClient) error {
		var conn net.Conn
		var mu *sync.Mutex
		if conn, mu, direct = directConn(sdk); !direct {
			return nil
		}
		var reply [8]byte // SendMessages answers with an empty body
		mu.Lock()
		defer mu.Unlock()
		_, err := roundTrip(conn, req, reply[:0])
		return err
	})
	return direct, err
}

// directConn returns the SDK's socket and request lock when a request of ours may go on them:
// both found, and the SDK does not compress payloads (its zero value and "none" do not).
func directConn(sdk *tcp.IggyTcpClient) (net.Conn, *sync.Mutex, bool) {
	switch sdk.MessageCompression {
	case iggcon.MESSAGE_COMPRESSION_S2, iggcon.MESSAGE_COMPRESSION_S2_BETTER, iggcon.MESSAGE_COMPRESSION_S2_BEST:
		return nil, nil, false
	}
	conn, mu := connOf(sdk), requestLockOf(sdk)
	return conn, mu, conn != nil && mu != nil
}

// appendSendRequest frames a SendMessages request (iggy-protocol.md §5.4) as the SDK's command
// does: [length u32][code u32][metadata length u32][stream id][topic id][partitioning]
// [count u32], one 16-byte index per message ([offset 0 u32][cumulative end u32][timestamp 0 u64]),
// then the messages (§5.1): a 64-byte header with checksum, offset and timestamp 0, the payload,
// the user headers. b is returned unchanged in length on error.
func appendSendRequest(b []byte, stream, topic iggcon.Identifier, p iggcon.Partitioning, msgs []api.OutMessage, originTimestamp uint64) ([]byte, error) {
	start := len(b)
	size := 4 + 4 + 4 + 2*(2+255) + 2 + len(p.Value) + 4 + len(msgs)*(indexSize+messageHeaderSize)
	for i := range msgs {
		size += len(msgs[i].Payload)
		for _, h := range msgs[i].Headers {
			size += 10 + len(h.Key) + len(h.Value)
		}
	}
	if cap(b)-len(b) < size {
		b = append(b[:cap(b)], make([]byte, size-(cap(b)-len(b)))...)[:len(b)]
	}
	b = append(b, 0, 0, 0, 0) // length, filled in below
	b = binary.LittleEndian.AppendUint32(b, sendCode)
	meta := len(b)
	b = append(b, 0, 0, 0, 0) // metadata length
	b, _ = stream.AppendBinary(b)
	b, _ = topic.AppendBinary(b)
	b = append(b, byte(p.Kind), byte(p.Length))
	b = append(b, p.Value...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(msgs)))
	binary.LittleEndian.PutUint32(b[meta:], uint32(len(b)-meta-4))
	index := len(b)
	b = b[:index+indexSize*len(msgs)]
	clear(b[index:])
	section := len(b)
	for i := range msgs {
		m := &msgs[i]
		if len(m.Payload) == 0 || len(m.Payload) > api.MaxPayloadSize {
			return b[:start], fmt.Errorf("%w: message %d: payload is %d bytes, want 1..%d", api.ErrInvalidMessage, i, len(m.Payload), api.MaxPayloadSize)
		}
		h := len(b)
		b = binary.LittleEndian.AppendUint64(b, 0) // checksum
		b = append(b, m.ID[:]...)
		b = binary.LittleEndian.AppendUint64(b, 0) // offset
		b = binary.LittleEndian.AppendUint64(b, 0) // timestamp
		b = binary.LittleEndian.AppendUint64(b, originTimestamp)
		b = binary.LittleEndian.AppendUint32(b, 0) // user header length, below
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Payload)))
		b = binary.LittleEndian.AppendUint64(b, 0) // reserved
		b = append(b, m.Payload...)
		if len(m.Headers) > 0 {
			from := len(b)
			var err error
			if b, err = api.AppendUserHeaders(b, m.Headers); err != nil {
				return b[:start], fmt.Errorf("message %d: %w", i, err)
			}
			binary.LittleEndian.PutUint32(b[h+48:], uint32(len(b)-from))
		}
		binary.LittleEndian.PutUint32(b[index+4:], uint32(len(b)-section))
		index += indexSize
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b, nil
}

// indexSize is one entry of SendMessages' index (iggy-protocol.md §5.4).
const indexSize = 16
