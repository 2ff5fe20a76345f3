package engine

import (
	"fmt"
	"slices"
	"sync"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// maxKeptSendBuffer keeps one huge batch from pinning the send buffers.
const maxKeptSendBuffer = 4 << 20

// sendPool recycles Send's memory: a send is encoded before it takes the wire token.
var sendPool = sync.Pool{New: func() any { return new(sendBuffers) }}

// sendBuffers is one Send's memory.
type sendBuffers struct {
	msgs  []iggywire.Message
	hdrs  []byte
	frame []byte
}

// messages turns the caller's messages into wire messages stamped with origin timestamp now, their
// user headers encoded into one exactly sized buffer (so the per-message slices stay valid while
// it fills). A message the protocol cannot carry is api.ErrInvalidMessage, nothing sent.
func (b *sendBuffers) messages(msgs []api.OutMessage, now uint64) ([]iggywire.Message, error) {
	headerBytes := 0
	for i := range msgs {
		for _, h := range msgs[i].Headers {
			headerBytes += 10 + len(h.Key) + len(h.Value)
		}
	}
	b.hdrs = b.hdrs[:0]
	if cap(b.hdrs) < headerBytes {
		b.hdrs = make([]byte, 0, headerBytes)
	}
	out := slices.Grow(b.msgs[:0], len(msgs))[:len(msgs)]
	for i := range msgs {
		m, w := &msgs[i], &out[i]
		if len(m.Payload) == 0 || len(m.Payload) > api.MaxPayloadSize {
			return out[:i], fmt.Errorf("%w: message %d: payload is %d bytes, want 1..%d", api.ErrInvalidMessage, i, len(m.Payload), api.MaxPayloadSize)
		}
		w.ID, w.OriginTimestamp, w.Payload, w.Headers = m.ID, now, m.Payload, nil
		if len(m.Headers) > 0 {
			from := len(b.hdrs)
			var err error
			if b.hdrs, err = api.AppendUserHeaders(b.hdrs, m.Headers); err != nil {
				return out[:i], fmt.Errorf("message %d: %w", i, err)
			}
			w.Headers = b.hdrs[from:len(b.hdrs):len(b.hdrs)]
		}
	}
	return out, nil
}

// release drops the references to the caller's payloads, lets go of buffers grown too large and
// returns b to the pool.
func (b *sendBuffers) release(msgs []iggywire.Message, frame []byte) {
	clear(msgs)
	b.msgs = msgs[:0]
	if cap(frame) <= maxKeptSendBuffer {
		b.frame = frame[:0]
	}
	if cap(b.hdrs) > maxKeptSendBuffer {
		b.hdrs = nil
	}
	sendPool.Put(b)
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
