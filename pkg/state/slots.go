package state

import (
	"encoding/binary"
	"hash/crc32"
)

// The slots file, <dir>/source_<key>.slots (all integers little-endian):
//
//	offset 0, one page: the header, written only when the file is created (write, sync, rename):
//	  [0:8)   magic "IGGYSLT1"
//	  [8:12)  slot size in bytes (a multiple of pageSize)
//	  [12:16) 1 when the upstream-format file existed when this file was created, else 0
//	  [16:24) that file's length
//	  [24:28) CRC-32C of that file's bytes
//	  [28:32) CRC-32C of [0:28)
//	offset pageSize + i*slotSize, i = 0, 1: a slot, overwritten in place by every other save:
//	  [0:4)   magic "SLOT"
//	  [4:12)  sequence number (the save's; higher is newer)
//	  [12:16) state length n
//	  [16:20) CRC-32C of [0:16) and the state
//	  [20:20+n) the state
//
// The file is written at full size when created, so an in-place slot write allocates nothing and one
// fdatasync makes it durable. A torn write leaves a slot whose CRC fails; the other slot still holds
// the previous state, since a save never overwrites the slot with the newest valid state.
const (
	pageSize      = 4096
	fileHeaderLen = 32
	slotHeaderLen = 20
	slotsSuffix   = ".slots"
	fileMagic     = "IGGYSLT1"
	slotMagic     = "SLOT"
	flagUpstream  = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// upstreamStamp identifies the content of the upstream-format file a slots file was created next
// to. An upstream file with other content was written later (by upstream's runtime, or by Close),
// so it holds the newer state. Content, not inode or times, so that copying the directory keeps
// the verdict.
type upstreamStamp struct {
	exists bool
	size   uint64
	crc    uint32
}

func stampOf(data []byte, exists bool) upstreamStamp {
	if !exists {
		return upstreamStamp{}
	}
	return upstreamStamp{exists: true, size: uint64(len(data)), crc: crc32.Checksum(data, castagnoli)}
}

// fileHeader is the parsed header page.
type fileHeader struct {
	slotSize int
	upstream upstreamStamp
}

func (h fileHeader) fileSize() int64 { return int64(pageSize + 2*h.slotSize) }

func (h fileHeader) slotOffset(i int) int64 { return int64(pageSize + i*h.slotSize) }

func (h fileHeader) encode(page []byte) {
	copy(page[0:8], fileMagic)
	binary.LittleEndian.PutUint32(page[8:12], uint32(h.slotSize))
	var flags uint32
	if h.upstream.exists {
		flags = flagUpstream
	}
	binary.LittleEndian.PutUint32(page[12:16], flags)
	binary.LittleEndian.PutUint64(page[16:24], h.upstream.size)
	binary.LittleEndian.PutUint32(page[24:28], h.upstream.crc)
	binary.LittleEndian.PutUint32(page[28:32], crc32.Checksum(page[0:28], castagnoli))
}

// parseFileHeader returns the header, or ok false when the bytes are not a valid one.
func parseFileHeader(b []byte) (h fileHeader, ok bool) {
	if len(b) < fileHeaderLen || string(b[0:8]) != fileMagic ||
		crc32.Checksum(b[0:28], castagnoli) != binary.LittleEndian.Uint32(b[28:32]) {
		return fileHeader{}, false
	}
	size := binary.LittleEndian.Uint32(b[8:12])
	if size < pageSize || size%pageSize != 0 || size > maxSlotSize {
		return fileHeader{}, false
	}
	h.slotSize = int(size)
	h.upstream = upstreamStamp{
		exists: binary.LittleEndian.Uint32(b[12:16])&flagUpstream != 0,
		size:   binary.LittleEndian.Uint64(b[16:24]),
		crc:    binary.LittleEndian.Uint32(b[24:28]),
	}
	return h, true
}

// maxStateLen is the largest state a save takes: the plugin batch limit. maxSlotSize bounds the
// slot size a header may claim, so a corrupt header cannot make a reader allocate without limit.
const (
	maxStateLen = 1 << 30
	maxSlotSize = maxStateLen + pageSize
)

// slotSizeFor is the slot size for a state of n bytes (n <= maxStateLen): the current size when it
// fits, else whole pages, at least double the current size so a growing state rebuilds the file
// rarely.
func slotSizeFor(n, current int) int {
	need := slotHeaderLen + n
	if need <= current {
		return current
	}
	pages := (need + pageSize - 1) / pageSize * pageSize
	return max(pages, min(2*current, maxSlotSize))
}

// encodeSlot appends the slot bytes of one save to dst.
func encodeSlot(dst []byte, seq uint64, data []byte) []byte {
	var h [slotHeaderLen]byte
	copy(h[0:4], slotMagic)
	binary.LittleEndian.PutUint64(h[4:12], seq)
	binary.LittleEndian.PutUint32(h[12:16], uint32(len(data)))
	crc := crc32.Update(crc32.Checksum(h[0:16], castagnoli), castagnoli, data)
	binary.LittleEndian.PutUint32(h[16:20], crc)
	dst = append(dst, h[:]...)
	return append(dst, data...)
}

// parseSlot returns the sequence number and state of a slot, or ok false when the slot is torn,
// corrupt, truncated or was never written.
func parseSlot(b []byte) (seq uint64, data []byte, ok bool) {
	if len(b) < slotHeaderLen || string(b[0:4]) != slotMagic {
		return 0, nil, false
	}
	n := int(binary.LittleEndian.Uint32(b[12:16]))
	if n > len(b)-slotHeaderLen {
		return 0, nil, false
	}
	data = b[slotHeaderLen : slotHeaderLen+n]
	crc := crc32.Update(crc32.Checksum(b[0:16], castagnoli), castagnoli, data)
	if crc != binary.LittleEndian.Uint32(b[16:20]) {
		return 0, nil, false
	}
	return binary.LittleEndian.Uint64(b[4:12]), data, true
}

// newestSlot picks the valid slot with the higher sequence number from the two slot regions (either
// may be short when the file was truncated); cur is -1 when neither is valid.
func newestSlot(slots [2][]byte) (cur int, seq uint64, data []byte) {
	cur = -1
	for i, b := range slots {
		s, d, ok := parseSlot(b)
		if ok && (cur < 0 || s > seq) {
			cur, seq, data = i, s, d
		}
	}
	return cur, seq, data
}
