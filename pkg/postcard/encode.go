package postcard

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
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
	n += binary.PutUvarint(dst[n:], uint64(v.Schema))
	n += binary.PutUvarint(dst[n:], uint64(len(v.Messages)))
	for i := range v.Messages {
		m := &v.Messages[i]
		n += putUint128(dst[n:], m.ID)
		n += binary.PutUvarint(dst[n:], m.Offset)
		n += binary.PutUvarint(dst[n:], m.Checksum)
		n += binary.PutUvarint(dst[n:], m.Timestamp)
		n += binary.PutUvarint(dst[n:], m.OriginTimestamp)
		n += binary.PutUvarint(dst[n:], uint64(len(m.Headers)))
		n += copy(dst[n:], m.Headers)
		n += binary.PutUvarint(dst[n:], uint64(len(m.Payload)))
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

// putUint128 is binary.PutUvarint (postcard's varint is the same minimal
// LEB128) for a u128; b must have room for it.
func putUint128(b []byte, v Uint128) int {
	if v.Hi == 0 {
		return binary.PutUvarint(b, v.Lo)
	}
	n := 0
	hi, lo := v.Hi, v.Lo
	for hi != 0 || lo >= 0x80 {
		b[n] = byte(lo) | 0x80
		lo = lo>>7 | hi<<57
		hi >>= 7
		n++
	}
	b[n] = byte(lo)
	return n + 1
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
