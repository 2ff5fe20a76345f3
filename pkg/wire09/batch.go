package wire09

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/zeebo/xxh3"
)

// Batch record layout (§11.2).
const (
	BatchHeaderSize = 256
	FrameHeaderSize = 48

	offBatchPartition   = 0
	offBatchBaseOffset  = 8
	offBatchBaseTime    = 16
	offBatchOrigin      = 24
	offBatchLength      = 32
	offBatchChecksum    = 40
	offBatchCount       = 48
	offBatchReserved    = 52
	offFrameID          = 8
	offFrameOffsetDelta = 24
	offFrameTimeDelta   = 28
	offFrameHeadersLen  = 32
	offFramePayloadLen  = 36
	offFrameReserved    = 40
)

// BatchHeader is the decoded 256-byte header of a batch record.
type BatchHeader struct {
	PartitionID     uint64
	BaseOffset      uint64
	BaseTimestamp   uint64
	OriginTimestamp uint64
	Length          uint64 // 256 + frame bytes
	Checksum        uint64
	Count           uint32
}

// DecodeBatchHeader decodes a record's header: at least 256 bytes, reserved
// bytes zero, length at least 256. It does not look at the frames.
func DecodeBatchHeader(record []byte) (BatchHeader, error) {
	if len(record) < BatchHeaderSize {
		return BatchHeader{}, iggywire.Malformed("batch: " + itoa(len(record)) + " bytes, need the 256-byte header")
	}
	for _, c := range record[offBatchReserved:BatchHeaderSize] {
		if c != 0 {
			return BatchHeader{}, iggywire.Malformed("batch header reserved bytes are not zero")
		}
	}
	h := BatchHeader{
		PartitionID:     binary.LittleEndian.Uint64(record[offBatchPartition:]),
		BaseOffset:      binary.LittleEndian.Uint64(record[offBatchBaseOffset:]),
		BaseTimestamp:   binary.LittleEndian.Uint64(record[offBatchBaseTime:]),
		OriginTimestamp: binary.LittleEndian.Uint64(record[offBatchOrigin:]),
		Length:          binary.LittleEndian.Uint64(record[offBatchLength:]),
		Checksum:        binary.LittleEndian.Uint64(record[offBatchChecksum:]),
		Count:           binary.LittleEndian.Uint32(record[offBatchCount:]),
	}
	if h.Length < BatchHeaderSize {
		return BatchHeader{}, iggywire.Malformed(fmt.Sprintf("batch length %d is below 256", h.Length))
	}
	return h, nil
}

// frame is a message frame viewed in place.
type frame struct {
	raw         []byte // the whole frame
	payloadLen  uint32
	headersLen  uint32
	offsetDelta uint32
	timeDelta   uint32
}

func (f *frame) checksum() uint64 { return binary.LittleEndian.Uint64(f.raw) }
func (f *frame) payload() []byte  { return f.raw[FrameHeaderSize : FrameHeaderSize+int(f.payloadLen)] }
func (f *frame) headers() []byte  { return f.raw[FrameHeaderSize+int(f.payloadLen):] }

// nextFrame reads the frame at the start of b.
func nextFrame(b []byte) (frame, error) {
	if len(b) < FrameHeaderSize {
		return frame{}, iggywire.Malformed("batch: " + itoa(len(b)) + " bytes left, a message frame header needs 48")
	}
	f := frame{
		offsetDelta: binary.LittleEndian.Uint32(b[offFrameOffsetDelta:]),
		timeDelta:   binary.LittleEndian.Uint32(b[offFrameTimeDelta:]),
		headersLen:  binary.LittleEndian.Uint32(b[offFrameHeadersLen:]),
		payloadLen:  binary.LittleEndian.Uint32(b[offFramePayloadLen:]),
	}
	if binary.LittleEndian.Uint64(b[offFrameReserved:]) != 0 {
		return frame{}, iggywire.Malformed("message frame reserved bytes are not zero")
	}
	size := uint64(FrameHeaderSize) + uint64(f.payloadLen) + uint64(f.headersLen)
	if size > uint64(len(b)) {
		return frame{}, iggywire.Malformed(fmt.Sprintf("message frame of %d bytes overruns the batch (%d bytes left)", size, len(b)))
	}
	f.raw = b[:size:size]
	return f, nil
}

// batchChecksum is XXH3-64 over the 40 bytes of u64 header fields, the
// message count and every frame's stored checksum (§11.3). frames must have
// been walked successfully before, so each frame's size is read unchecked.
func batchChecksum(record []byte) uint64 {
	h := startBatchHash(record)
	var sums checksumFeed
	for rest := record[BatchHeaderSize:]; len(rest) >= FrameHeaderSize; {
		sums.add(&h, binary.LittleEndian.Uint64(rest))
		size := FrameHeaderSize + uint64(binary.LittleEndian.Uint32(rest[offFramePayloadLen:])) + uint64(binary.LittleEndian.Uint32(rest[offFrameHeadersLen:]))
		if size > uint64(len(rest)) {
			break
		}
		rest = rest[size:]
	}
	sums.flush(&h)
	return h.Sum64()
}

// startBatchHash is a batch checksum's hasher after the header fields it covers.
func startBatchHash(record []byte) xxh3.Hasher {
	var h xxh3.Hasher
	_, _ = h.Write(record[:offBatchChecksum])
	_, _ = h.Write(record[offBatchCount : offBatchCount+4])
	return h
}

// checksumFeed hands frame checksums to the batch hasher in chunks: a Write per 8 bytes costs
// more than the hashing.
type checksumFeed struct {
	chunk [512]byte
	n     int
}

func (c *checksumFeed) add(h *xxh3.Hasher, sum uint64) {
	binary.LittleEndian.PutUint64(c.chunk[c.n:], sum)
	if c.n += 8; c.n == len(c.chunk) {
		_, _ = h.Write(c.chunk[:])
		c.n = 0
	}
}

func (c *checksumFeed) flush(h *xxh3.Hasher) { _, _ = h.Write(c.chunk[:c.n]) }

// AppendBatch appends a batch record holding msgs, with frame checksums and
// the batch checksum computed over zero partition/offset/timestamp fields,
// as a producer sends it (§11.2, §11.3). A source sends one per batch, so it
// checks every message and sizes the record first, then writes the header and
// hashes each frame checksum as it is made, in one pass over the frames.
func AppendBatch(dst []byte, msgs []iggywire.Message) ([]byte, error) {
	if len(msgs) == 0 {
		return dst, iggywire.Errorf(iggywire.StatusInvalidMessagesCount, "batch: no messages")
	}
	origin := msgs[0].OriginTimestamp
	for _, m := range msgs[1:] {
		origin = min(origin, m.OriginTimestamp)
	}
	size := BatchHeaderSize
	for i, m := range msgs {
		if delta := m.OriginTimestamp - origin; delta > 0xFFFFFFFF {
			return dst, iggywire.Errorf(iggywire.StatusInvalidMessageTimestampDelta, fmt.Sprintf("batch: message %d is %d µs after the batch origin, above u32", i, delta))
		}
		if uint64(len(m.Payload)) > 0xFFFFFFFF || uint64(len(m.Headers)) > 0xFFFFFFFF {
			return dst, iggywire.Malformed(fmt.Sprintf("batch: message %d is larger than 4 GiB", i))
		}
		size += FrameHeaderSize + len(m.Payload) + len(m.Headers)
	}
	start := len(dst)
	dst = slices.Grow(dst, size)
	dst, _ = appendZeroHeader(dst)
	rec := dst[start:]
	binary.LittleEndian.PutUint64(rec[offBatchOrigin:], origin)
	binary.LittleEndian.PutUint64(rec[offBatchLength:], uint64(size))
	binary.LittleEndian.PutUint32(rec[offBatchCount:], uint32(len(msgs)))
	h := startBatchHash(rec)
	var sums checksumFeed
	for i, m := range msgs {
		fs := len(dst)
		dst = dst[:fs+FrameHeaderSize]
		f := dst[fs : fs+FrameHeaderSize]
		copy(f[offFrameID:], m.ID[:])
		binary.LittleEndian.PutUint32(f[offFrameOffsetDelta:], uint32(i))
		binary.LittleEndian.PutUint32(f[offFrameTimeDelta:], uint32(m.OriginTimestamp-origin))
		binary.LittleEndian.PutUint32(f[offFrameHeadersLen:], uint32(len(m.Headers)))
		binary.LittleEndian.PutUint32(f[offFramePayloadLen:], uint32(len(m.Payload)))
		binary.LittleEndian.PutUint64(f[offFrameReserved:], 0)
		dst = append(dst, m.Payload...)
		dst = append(dst, m.Headers...)
		sum := xxh3.Hash(dst[fs+8:])
		binary.LittleEndian.PutUint64(dst[fs:], sum)
		sums.add(&h, sum)
	}
	sums.flush(&h)
	binary.LittleEndian.PutUint64(dst[start+offBatchChecksum:], h.Sum64())
	return dst, nil
}

// VerifyBatch checks a record fully, as the server does at send admission:
// header layout, length equal to len(record), frames covering it exactly and
// numbering message_count (at least one), every frame checksum
// (iggywire.StatusInvalidMessageChecksum) and the batch checksum
// (iggywire.StatusInvalidBatchChecksum). Layout faults are iggywire.StatusInvalidFormat.
func VerifyBatch(record []byte) (BatchHeader, error) {
	h, err := DecodeBatchHeader(record)
	if err != nil {
		return BatchHeader{}, err
	}
	if h.Length != uint64(len(record)) {
		return BatchHeader{}, iggywire.Malformed(fmt.Sprintf("batch length %d does not match the %d bytes sent", h.Length, len(record)))
	}
	if h.Count == 0 {
		return BatchHeader{}, iggywire.Errorf(iggywire.StatusInvalidMessagesCount, "batch: message count is 0")
	}
	rest := record[BatchHeaderSize:]
	var n uint32
	for len(rest) > 0 {
		f, err := nextFrame(rest)
		if err != nil {
			return BatchHeader{}, fmt.Errorf("message %d: %w", n, err)
		}
		if got := xxh3.Hash(f.raw[8:]); got != f.checksum() {
			return BatchHeader{}, iggywire.Errorf(iggywire.StatusInvalidMessageChecksum, fmt.Sprintf("message %d: checksum %#x, computed %#x", n, f.checksum(), got))
		}
		n++
		rest = rest[len(f.raw):]
	}
	if n != h.Count {
		return BatchHeader{}, iggywire.Malformed(fmt.Sprintf("batch: message count %d, frames hold %d", h.Count, n))
	}
	if got := batchChecksum(record); got != h.Checksum {
		return BatchHeader{}, iggywire.Errorf(iggywire.StatusInvalidBatchChecksum, fmt.Sprintf("batch checksum %#x, computed %#x", h.Checksum, got))
	}
	return h, nil
}

// StampBatch writes the server-assigned fields of a verified record and
// recomputes its checksum (§11.3 step 4).
func StampBatch(record []byte, partitionID, baseOffset, baseTimestamp uint64) {
	binary.LittleEndian.PutUint64(record[offBatchPartition:], partitionID)
	binary.LittleEndian.PutUint64(record[offBatchBaseOffset:], baseOffset)
	binary.LittleEndian.PutUint64(record[offBatchBaseTime:], baseTimestamp)
	binary.LittleEndian.PutUint64(record[offBatchChecksum:], batchChecksum(record))
}

// AppendSlice appends the part of a stored (verified) record holding its
// frames first..first+count-1 (by position) as a poll reply carries it
// (§11.4): base fields kept, length and count rewritten, checksum recomputed,
// the original frames. A range past the record is clamped; an empty range
// appends nothing.
func AppendSlice(dst, record []byte, first, count int) []byte {
	if count <= 0 || first < 0 {
		return dst
	}
	rest := record[BatchHeaderSize:]
	from, to := -1, 0
	pos := BatchHeaderSize
	for i := 0; len(rest) > 0 && i < first+count; i++ {
		f, err := nextFrame(rest)
		if err != nil {
			break
		}
		if i == first {
			from = pos
		}
		pos += len(f.raw)
		to = pos
		rest = rest[len(f.raw):]
	}
	if from < 0 {
		return dst
	}
	start := len(dst)
	dst = append(dst, record[:BatchHeaderSize]...)
	dst = append(dst, record[from:to]...)
	rec := dst[start:]
	n := 0
	for rest := rec[BatchHeaderSize:]; len(rest) > 0; n++ {
		f, _ := nextFrame(rest)
		rest = rest[len(f.raw):]
	}
	binary.LittleEndian.PutUint64(rec[offBatchLength:], uint64(len(rec)))
	binary.LittleEndian.PutUint32(rec[offBatchCount:], uint32(n))
	binary.LittleEndian.PutUint64(rec[offBatchChecksum:], batchChecksum(rec))
	return dst
}

// BatchTimestampOf is the base timestamp of a record header (for polls by timestamp).
func BatchTimestampOf(record []byte) uint64 {
	return binary.LittleEndian.Uint64(record[offBatchBaseTime:])
}
