package devbroker

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/zeebo/xxh3"
)

// Message limits the real server enforces.
const (
	maxMessagePayload = 64_000_000
	maxUserHeaders    = 100_000
	indexSize         = 16
)

// Partitioning kinds of SendMessages.
const (
	partitionBalanced = 1
	partitionByID     = 2
	partitionByKey    = 3 // "MessagesKey": XXH32 of the key picks the partition
)

// sendRequest is a decoded SendMessages payload. messages aliases the request
// buffer: the wire bytes of every message, back to back.
type sendRequest struct {
	stream, topic    ident
	partitioningKind uint8
	partitioningKey  []byte
	count            uint32
	messages         []byte
	ends             []uint32 // ends[i] = end of message i inside messages
}

// decodeSend parses a SendMessages payload (spec §5.4) and checks every
// message's lengths; ends is reused to avoid an allocation per request.
func decodeSend(payload []byte, ends []uint32) (sendRequest, error) {
	d := decoder{buf: payload}
	metadataLen := d.u32()
	var req sendRequest
	req.stream = d.ident()
	req.topic = d.ident()
	req.partitioningKind = d.u8()
	keyLen := int(d.u8())
	req.partitioningKey = d.take(keyLen)
	req.count = d.u32()
	if d.err != nil {
		return req, d.err
	}
	if int(metadataLen) != d.pos-4 {
		return req, iggywire.StatusInvalidCommand
	}
	switch req.partitioningKind {
	case partitionBalanced:
		if keyLen != 0 {
			return req, iggywire.StatusInvalidCommand
		}
	case partitionByID:
		if keyLen != 4 {
			return req, iggywire.StatusInvalidCommand
		}
	case partitionByKey:
		if keyLen == 0 {
			return req, iggywire.StatusInvalidCommand
		}
	default:
		return req, iggywire.StatusInvalidCommand
	}
	if req.count == 0 {
		return req, iggywire.StatusInvalidMessagesCount
	}
	indexBytes := uint64(req.count) * indexSize
	if indexBytes > uint64(len(payload)-d.pos) {
		return req, iggywire.StatusInvalidIndexesByteSize
	}
	indexes := d.take(int(indexBytes))
	req.messages = payload[d.pos:]

	ends = ends[:0]
	pos := 0
	for i := range int(req.count) {
		index := indexes[i*indexSize:]
		if binary.LittleEndian.Uint32(index) != 0 {
			return req, iggywire.StatusNonZeroOffset
		}
		if binary.LittleEndian.Uint64(index[8:]) != 0 {
			return req, iggywire.StatusNonZeroTimestamp
		}
		if len(req.messages)-pos < messageHdrSize {
			return req, iggywire.StatusInvalidMessagesSize
		}
		header := req.messages[pos:]
		headersLen := binary.LittleEndian.Uint32(header[48:])
		payloadLen := binary.LittleEndian.Uint32(header[52:])
		switch {
		case payloadLen == 0:
			return req, iggywire.StatusEmptyMessagePayload
		case payloadLen > maxMessagePayload:
			return req, iggywire.StatusTooBigMessagePayload
		case headersLen > maxUserHeaders:
			return req, iggywire.StatusTooBigUserHeaders
		}
		size := messageHdrSize + int(payloadLen) + int(headersLen)
		if len(req.messages)-pos < size {
			return req, iggywire.StatusInvalidMessagesSize
		}
		pos += size
		if binary.LittleEndian.Uint32(index[4:]) != uint32(pos) {
			return req, iggywire.StatusInvalidMessagesSize
		}
		ends = append(ends, uint32(pos))
	}
	if pos != len(req.messages) {
		return req, iggywire.StatusInvalidMessagesSize
	}
	req.ends = ends
	return req, nil
}

// append stores one request's messages: it copies them, then fills in the
// offset, the server timestamp (one per request), a UUID v4 for a zero id and
// the XXH3 checksum, as the real server does.
func (p *partition) append(messages []byte, ends []uint32, now uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	stored := p.newBatchLocked(len(messages), len(ends))
	stored.data = append(stored.data, messages...)
	stored.ends = append(stored.ends, ends...)

	timestamp := max(now, p.lastTimestamp) // never backwards, so timestamp polls can binary search
	p.lastTimestamp = timestamp
	stored.firstOffset = p.nextOffset
	stored.timestamp = timestamp
	start := uint32(0)
	for i, end := range stored.ends {
		msg := stored.data[start:end]
		fillMissingID(msg[8:24])
		binary.LittleEndian.PutUint64(msg[24:], stored.firstOffset+uint64(i))
		binary.LittleEndian.PutUint64(msg[32:], timestamp)
		binary.LittleEndian.PutUint64(msg[0:], xxh3.Hash(msg[8:]))
		start = end
	}
	p.addBatchLocked(stored)
}

// addBatchLocked appends a filled-in batch and accounts for it.
func (p *partition) addBatchLocked(stored batch) {
	p.batches = append(p.batches, stored)
	p.nextOffset += uint64(len(stored.ends))
	p.messages += uint64(len(stored.ends))
	p.sizeBytes += stored.messageBytes()
	p.enforceRetentionLocked()
}

// newBatchLocked returns an empty batch with room for size bytes and count
// messages, reusing a dropped batch's memory when one is big enough. Fresh
// memory is what bounds send throughput where page faults are slow.
func (p *partition) newBatchLocked(size, count int) batch {
	for i, b := range p.spare {
		if cap(b.data) >= size && cap(b.ends) >= count {
			p.spare = append(p.spare[:i], p.spare[i+1:]...)
			return batch{data: b.data[:0], ends: b.ends[:0]}
		}
	}
	return batch{data: make([]byte, 0, size), ends: make([]uint32, 0, count)}
}

// maxSpareBatches bounds the memory kept for reuse per partition.
const maxSpareBatches = 4

// enforceRetentionLocked drops the oldest batches while the partition holds
// more than retainBytes, always keeping the newest batch.
func (p *partition) enforceRetentionLocked() {
	for p.retainBytes > 0 && p.sizeBytes > p.retainBytes && len(p.batches) > 1 {
		old := p.batches[0]
		p.batches[0] = batch{}
		p.batches = p.batches[1:]
		p.sizeBytes -= old.messageBytes()
		p.messages -= uint64(len(old.ends))
		if len(p.spare) < maxSpareBatches {
			p.spare = append(p.spare, old)
		}
	}
}

// fillMissingID replaces an all-zero 16-byte id with a random UUID v4 in RFC
// 4122 byte order. math/rand/v2 suffices: ids must be unique, not secret.
func fillMissingID(id []byte) {
	if binary.LittleEndian.Uint64(id) != 0 || binary.LittleEndian.Uint64(id[8:]) != 0 {
		return
	}
	binary.LittleEndian.PutUint64(id, rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
}
