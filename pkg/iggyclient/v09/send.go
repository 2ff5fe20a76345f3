package v09

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// EncodeSend implements engine.Protocol: the whole SendMessages frame (header space, metadata,
// one batch record, §11). Partitioning is resolved by the server, which places balanced sends
// round-robin per topic and keyed ones on partition XXH32(key) % partitions (§10.5), so the client
// needs no topic cache that could go stale. A zero message id gets a random UUID v4 here, once, so
// a send repeated after a reconnect carries the same ids: the 0.9 server never creates ids and
// does not deduplicate, a consumer that must not see a message twice deduplicates on them.
func (p *protocol) EncodeSend(buf []byte, t iggywire.TopicRef, pt iggywire.Partitioning, msgs []iggywire.Message) ([]byte, error) {
	p.idMu.Lock()
	for i := range msgs {
		if msgs[i].ID == ([16]byte{}) {
			msgs[i].ID = randomUUID(p.idSource)
		}
	}
	p.idMu.Unlock()
	frame := append(buf[:0], make([]byte, wire09.HeaderSize)...)
	frame, err := wire09.AppendSendMetadata(frame, wire09.SendMetadata{StreamID: t.StreamID, TopicID: t.TopicID,
		Partitioning: pt, MessagesCount: uint32(len(msgs))})
	if err == nil {
		frame, err = wire09.AppendBatch(frame, msgs)
	}
	if err != nil {
		return buf, err
	}
	if len(frame) > wire09.MaxFrameSize {
		return frame, fmt.Errorf("the batch takes %d bytes, a request may take %d", len(frame), wire09.MaxFrameSize)
	}
	return frame, nil
}

// SendEncoded implements engine.Protocol: the header is stamped anew on every attempt, the body
// stays. The partition plane answers a stream, topic or partition it cannot resolve with 20.
func (p *protocol) SendEncoded(ctx context.Context, c *conn, frame []byte) error {
	rep, err := c.exchange(ctx, frame, wire09.OpSendMessages, 0, nil)
	if isStatus(err, iggywire.StatusResourceNotFound) {
		return fmt.Errorf("stream, topic or partition %w (%w)", api.ErrNotFound, err)
	}
	if err != nil {
		return err
	}
	var confirmations [1]wire09.Confirmation
	if _, err := wire09.DecodeConfirmations(rep.payload, confirmations[:0]); err != nil {
		return c.Malformed("send reply: %v", err)
	}
	return nil
}
