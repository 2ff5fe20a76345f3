package v09

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// maxKeptSendBuffer keeps one huge batch from pinning the request buffer.
const maxKeptSendBuffer = 4 << 20

// Send implements api.Client. The messages go as one batch record (§11) encoded into the
// client's reused request buffer. Partitioning is resolved by the server, which places balanced
// sends round-robin per topic and keyed ones on partition XXH32(key) % partitions (§10.5), so the
// client needs no topic cache that could go stale. A zero message id gets a random UUID v4: the
// 0.9 server never creates ids. A send whose reply is lost is sent again after reconnecting, so
// delivery is at least once and a consumer may see a message twice (0.9 has no deduplication).
func (c *client) Send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if err := c.send(ctx, stream, topic, p, msgs); err != nil {
		return fmt.Errorf("send %d messages to stream %q topic %q: %w", len(msgs), stream, topic, err)
	}
	return nil
}

func (c *client) send(ctx context.Context, stream, topic string, p api.Partitioning, msgs []api.OutMessage) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no messages", api.ErrInvalidMessage)
	}
	ref, err := c.topicRef(stream, topic)
	if err != nil {
		return err
	}
	partitioning, err := wirePartitioning(p)
	if err != nil {
		return err
	}
	var frame []byte
	err = c.do(ctx, func(cn *conn) error {
		if frame == nil { // once: a retry after a reconnect re-stamps the header, the body stays
			var err error
			if frame, err = c.encodeSend(ref, partitioning, msgs); err != nil {
				return err
			}
		}
		rep, err := cn.exchange(ctx, frame, wire09.OpSendMessages, 0, nil)
		if err != nil {
			return err
		}
		var confirmations [1]wire09.Confirmation
		if _, err := wire09.DecodeConfirmations(rep.payload, confirmations[:0]); err != nil {
			return cn.breakWith(fmt.Errorf("%w: send reply: %w", errProtocol, err))
		}
		return nil
	})
	if isStatus(err, iggywire.StatusResourceNotFound) {
		// The partition plane answers a stream, topic or partition it cannot resolve with 20.
		return fmt.Errorf("stream, topic or partition %w (%w)", api.ErrNotFound, err)
	}
	return err
}

// encodeSend builds the whole SendMessages frame (header space, metadata, batch) in the client's
// send buffer. The caller holds the wire token.
func (c *client) encodeSend(ref iggywire.TopicRef, partitioning iggywire.Partitioning, msgs []api.OutMessage) ([]byte, error) {
	headerBytes := 0
	for i := range msgs {
		for _, h := range msgs[i].Headers {
			headerBytes += 10 + len(h.Key) + len(h.Value)
		}
	}
	// One exactly sized buffer holds every message's encoded headers, so the per-message
	// sub-slices stay valid while it is filled.
	c.hdrs = c.hdrs[:0]
	if cap(c.hdrs) < headerBytes {
		c.hdrs = make([]byte, 0, headerBytes)
	}
	now := uint64(time.Now().UnixMicro())
	batch := c.msgs[:0]
	defer func() { clear(batch); c.msgs = batch[:0] }() // drop the caller's payloads
	for i := range msgs {
		m := &msgs[i]
		if len(m.Payload) == 0 || len(m.Payload) > api.MaxPayloadSize {
			return nil, fmt.Errorf("%w: message %d: payload is %d bytes, want 1..%d", api.ErrInvalidMessage, i, len(m.Payload), api.MaxPayloadSize)
		}
		var userHeaders []byte
		if len(m.Headers) > 0 {
			from := len(c.hdrs)
			var err error
			if c.hdrs, err = api.AppendUserHeaders(c.hdrs, m.Headers); err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			userHeaders = c.hdrs[from:len(c.hdrs):len(c.hdrs)]
		}
		id := m.ID
		if id == ([16]byte{}) {
			id = randomUUID(c.idSource)
		}
		batch = append(batch, iggywire.Message{ID: id, OriginTimestamp: now, Payload: m.Payload, Headers: userHeaders})
	}
	frame := append(c.sendBuf[:0], make([]byte, wire09.HeaderSize)...)
	frame, err := wire09.AppendSendMetadata(frame, wire09.SendMetadata{StreamID: ref.StreamID, TopicID: ref.TopicID,
		Partitioning: partitioning, MessagesCount: uint32(len(msgs))})
	if err == nil {
		frame, err = wire09.AppendBatch(frame, batch)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrInvalidMessage, err)
	}
	if cap(frame) <= maxKeptSendBuffer {
		c.sendBuf = frame[:0]
	}
	if len(frame) > wire09.MaxFrameSize {
		return nil, fmt.Errorf("%w: the batch takes %d bytes, a request may take %d", api.ErrInvalidMessage, len(frame), wire09.MaxFrameSize)
	}
	return frame, nil
}

// newIDSource is the generator of message ids: PCG seeded from the system's randomness, several
// times faster than the global ChaCha8 for a batch of ids (message ids need to be unique, not
// secret). It is guarded by the wire token.
func newIDSource() *rand.Rand {
	var seed [16]byte
	_, _ = crand.Read(seed[:])
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:]), binary.LittleEndian.Uint64(seed[8:])))
}

// randomUUID is a version 4 UUID: the id a zero message id gets, as the Go SDK does.
func randomUUID(r *rand.Rand) [16]byte {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:], r.Uint64())
	binary.LittleEndian.PutUint64(id[8:], r.Uint64())
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

func wirePartitioning(p api.Partitioning) (iggywire.Partitioning, error) {
	switch p.Kind {
	case "", api.PartitionBalanced:
		return iggywire.Partitioning{Kind: iggywire.PartitionBalanced}, nil
	case api.PartitionByID:
		return iggywire.Partitioning{Kind: iggywire.PartitionByID, PartitionID: p.PartitionID}, nil
	case api.PartitionByMessageKey:
		if len(p.Key) == 0 || len(p.Key) > api.MaxHeaderFieldLen {
			return iggywire.Partitioning{}, fmt.Errorf("%w: messages key is %d bytes, want 1..255", api.ErrInvalidMessage, len(p.Key))
		}
		return iggywire.Partitioning{Kind: iggywire.PartitionByMessageKey, Key: p.Key}, nil
	}
	return iggywire.Partitioning{}, fmt.Errorf("%w: unknown partitioning kind %q (want %q, %q or %q)",
		api.ErrInvalidMessage, p.Kind, api.PartitionBalanced, api.PartitionByID, api.PartitionByMessageKey)
}
