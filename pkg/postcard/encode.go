package postcard

import (
	"bytes"
	"encoding/base64"
	"math/bits"
	"slices"
)

// The encoders append to dst and return the extended slice, like
// strconv.AppendInt. None of them allocates when dst has enough capacity,
// except AppendHeaderMap (and the encoders that embed it) when given a map
// that is not already in strictly ascending key order. They write Schema and
// HeaderKind values as given: callers must pass defined variants (Valid),
// since a plugin rejects an unknown index.

// AppendTopicMetadata appends the encoding of v.
func AppendTopicMetadata(dst []byte, v TopicMetadata) []byte {
	dst = appendString(dst, v.Stream)
	return appendString(dst, v.Topic)
}

// AppendMessagesMetadata appends the encoding of v.
func AppendMessagesMetadata(dst []byte, v MessagesMetadata) []byte {
	dst = appendUvarint(dst, uint64(v.PartitionID))
	dst = appendUvarint(dst, v.CurrentOffset)
	return appendUvarint(dst, uint64(v.Schema))
}

// AppendRawMessages appends the encoding of v. Each message's Headers bytes
// are written as they are (an already encoded HeaderMap, or empty). A sink
// encodes every polled message through it, so it grows dst once for the
// whole batch and writes in place, without append's per-byte capacity checks.
func AppendRawMessages(dst []byte, v RawMessages) []byte {
	need := 2 * maxVarint64
	for i := range v.Messages {
		need += rawMessageMaxFixed + len(v.Messages[i].Headers) + len(v.Messages[i].Payload)
	}
	n := len(dst)
	dst = slices.Grow(dst, need)[:n+need]
	n += putUvarint(dst[n:], uint64(v.Schema))
	n += putUvarint(dst[n:], uint64(len(v.Messages)))
	for i := range v.Messages {
		m := &v.Messages[i]
		n += putUint128(dst[n:], m.ID)
		n += putUvarint(dst[n:], m.Offset)
		n += putUvarint(dst[n:], m.Checksum)
		n += putUvarint(dst[n:], m.Timestamp)
		n += putUvarint(dst[n:], m.OriginTimestamp)
		n += putUvarint(dst[n:], uint64(len(m.Headers)))
		n += copy(dst[n:], m.Headers)
		n += putUvarint(dst[n:], uint64(len(m.Payload)))
		n += copy(dst[n:], m.Payload)
	}
	return dst[:n]
}

const (
	maxVarint64  = 10
	maxVarint128 = 19
	// rawMessageMaxFixed bounds a RawMessage's encoding beyond its header
	// and payload bytes: the id, four u64 fields and two lengths.
	rawMessageMaxFixed = maxVarint128 + 6*maxVarint64
)

// putUvarint is binary.PutUvarint (postcard's varint is the same minimal LEB128) for a b with
// room for maxVarint64 bytes, all of which it may write: the bytes past the returned length are
// scratch, overwritten by whatever is encoded next. Every byte is computed from v directly, not
// from the previous one, so the stores do not wait on each other as PutUvarint's loop does
// (docs/benchmarks.md §1.7).
func putUvarint(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	_ = b[maxVarint64-1]
	b[0] = byte(v) | 0x80
	b[1] = byte(v>>7) | 0x80
	b[2] = byte(v>>14) | 0x80
	b[3] = byte(v>>21) | 0x80
	b[4] = byte(v>>28) | 0x80
	b[5] = byte(v>>35) | 0x80
	b[6] = byte(v>>42) | 0x80
	b[7] = byte(v>>49) | 0x80
	b[8] = byte(v>>56) | 0x80
	b[9] = byte(v >> 63)
	n := (bits.Len64(v) + 6) / 7
	b[n-1] &^= 0x80
	return n
}

// putUint128 is putUvarint for a u128, for a b with room for maxVarint128 bytes (all of which it
// may write). Bytes 0-8 carry bits 0-62 of Lo, bytes 9-17 bits 63-125 of the value, byte 18 the
// top two bits. The nine-byte runs are written out here and in putUvarint rather than shared: a
// helper for them is not inlined, and the call cost AppendRawMessages about a fifth of its speed.
func putUint128(b []byte, v Uint128) int {
	if v.Hi == 0 {
		return putUvarint(b, v.Lo)
	}
	_ = b[maxVarint128-1]
	lo, mid := v.Lo, v.Lo>>63|v.Hi<<1
	b[0] = byte(lo) | 0x80
	b[1] = byte(lo>>7) | 0x80
	b[2] = byte(lo>>14) | 0x80
	b[3] = byte(lo>>21) | 0x80
	b[4] = byte(lo>>28) | 0x80
	b[5] = byte(lo>>35) | 0x80
	b[6] = byte(lo>>42) | 0x80
	b[7] = byte(lo>>49) | 0x80
	b[8] = byte(lo>>56) | 0x80
	b[9] = byte(mid) | 0x80
	b[10] = byte(mid>>7) | 0x80
	b[11] = byte(mid>>14) | 0x80
	b[12] = byte(mid>>21) | 0x80
	b[13] = byte(mid>>28) | 0x80
	b[14] = byte(mid>>35) | 0x80
	b[15] = byte(mid>>42) | 0x80
	b[16] = byte(mid>>49) | 0x80
	b[17] = byte(mid>>56) | 0x80
	b[18] = byte(v.Hi >> 62)
	n := (64 + bits.Len64(v.Hi) + 6) / 7
	b[n-1] &^= 0x80
	return n
}

// AppendProducedMessages appends the encoding of v. The host never sends
// this type; the encoder exists for tests, fuzzing and tooling.
func AppendProducedMessages(dst []byte, v ProducedMessages) []byte {
	dst = appendUvarint(dst, uint64(v.Schema))
	dst = appendUvarint(dst, uint64(len(v.Messages)))
	for i := range v.Messages {
		m := &v.Messages[i]
		if m.ID == nil {
			dst = append(dst, tagNone)
		} else {
			dst = appendUint128(append(dst, tagSome), *m.ID)
		}
		dst = appendOptionalUint64(dst, m.Checksum)
		dst = appendOptionalUint64(dst, m.Timestamp)
		dst = appendOptionalUint64(dst, m.OriginTimestamp)
		if m.Headers == nil {
			dst = append(dst, tagNone)
		} else {
			dst = AppendHeaderMap(append(dst, tagSome), *m.Headers)
		}
		dst = appendBytes(dst, m.Payload)
	}
	if !v.HasState {
		return append(dst, tagNone)
	}
	return AppendConnectorState(append(dst, tagSome), v.State)
}

// AppendConnectorState appends the encoding of a ConnectorState (a newtype
// over bytes: length and bytes).
func AppendConnectorState(dst []byte, state []byte) []byte {
	return appendBytes(dst, state)
}

// AppendHeaderMap appends the encoding of m: the entry count, then each key
// and value as kind index plus padded standard base64 text. Entries are
// written in ascending key order and, for duplicate keys, only the last one
// is kept, matching the SDK's BTreeMap. A map already in strictly ascending
// order is written without allocating.
func AppendHeaderMap(dst []byte, m HeaderMap) []byte {
	if isStrictlyAscending(m) {
		dst = appendUvarint(dst, uint64(len(m)))
		for i := range m {
			dst = appendHeaderEntry(dst, &m[i])
		}
		return dst
	}
	order := sortedUniqueIndexes(m)
	dst = appendUvarint(dst, uint64(len(order)))
	for _, i := range order {
		dst = appendHeaderEntry(dst, &m[i])
	}
	return dst
}

// compareHeaderFields orders header keys as Rust's derived Ord does: by kind
// index, then by value bytes.
func compareHeaderFields(a, b *HeaderField) int {
	switch {
	case a.Kind < b.Kind:
		return -1
	case a.Kind > b.Kind:
		return 1
	}
	return bytes.Compare(a.Value, b.Value)
}

func isStrictlyAscending(m HeaderMap) bool {
	for i := 1; i < len(m); i++ {
		if compareHeaderFields(&m[i-1].Key, &m[i].Key) >= 0 {
			return false
		}
	}
	return true
}

// sortedUniqueIndexes returns the indexes of m's entries in ascending key
// order, keeping only the last index of each duplicate key.
func sortedUniqueIndexes(m HeaderMap) []int {
	order := make([]int, len(m))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return compareHeaderFields(&m[a].Key, &m[b].Key)
	})
	out := order[:0]
	for _, idx := range order {
		if n := len(out); n > 0 && compareHeaderFields(&m[out[n-1]].Key, &m[idx].Key) == 0 {
			out[n-1] = idx // stable sort keeps input order, so idx is the later one
			continue
		}
		out = append(out, idx)
	}
	return out
}

func appendHeaderEntry(dst []byte, e *HeaderEntry) []byte {
	dst = appendHeaderField(dst, &e.Key)
	return appendHeaderField(dst, &e.Value)
}

func appendHeaderField(dst []byte, f *HeaderField) []byte {
	dst = appendUvarint(dst, uint64(f.Kind))
	dst = appendUvarint(dst, uint64(base64.StdEncoding.EncodedLen(len(f.Value))))
	return base64.StdEncoding.AppendEncode(dst, f.Value)
}

const (
	tagNone byte = 0
	tagSome byte = 1
)

func appendOptionalUint64(dst []byte, v *uint64) []byte {
	if v == nil {
		return append(dst, tagNone)
	}
	return appendUvarint(append(dst, tagSome), *v)
}

// appendUvarint appends v as a minimal unsigned LEB128 varint.
func appendUvarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendUint128 appends v as a minimal 128-bit LEB128 varint.
func appendUint128(dst []byte, v Uint128) []byte {
	hi, lo := v.Hi, v.Lo
	for hi != 0 || lo >= 0x80 {
		dst = append(dst, byte(lo)|0x80)
		lo = lo>>7 | hi<<57
		hi >>= 7
	}
	return append(dst, byte(lo))
}

func appendBytes(dst, b []byte) []byte {
	dst = appendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendString(dst []byte, s string) []byte {
	dst = appendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
