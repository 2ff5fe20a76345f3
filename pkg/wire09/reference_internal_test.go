package wire09

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/zeebo/xxh3"
)

// referenceWalk is the poll reply walk PollIterator.Next inlines for speed, written plainly with
// DecodeBatchHeader and nextFrame: the fuzz target below holds the two to the same messages and
// the same faults.
func referenceWalk(body []byte) ([]iggywire.PolledMessage, error) {
	p, records, err := iggywire.DecodePollPrefix(body)
	if err != nil {
		return nil, err
	}
	var out []iggywire.PolledMessage
	for len(records) > 0 {
		h, err := DecodeBatchHeader(records)
		if err != nil {
			return out, err
		}
		if h.Length > uint64(len(records)) {
			return out, iggywire.Malformed("record overruns")
		}
		if h.Count == 0 {
			return out, iggywire.Malformed("zero messages")
		}
		frames := records[BatchHeaderSize:h.Length]
		records = records[h.Length:]
		for range h.Count {
			f, err := nextFrame(frames)
			if err != nil {
				return out, err
			}
			frames = frames[len(f.raw):]
			if uint32(len(out)) >= p.MessagesCount {
				return out, iggywire.Malformed("more than the prefix")
			}
			out = append(out, iggywire.PolledMessage{
				Offset: h.BaseOffset + uint64(f.offsetDelta), Timestamp: h.BaseTimestamp,
				OriginTimestamp: h.OriginTimestamp + uint64(f.timeDelta), ID: [16]byte(f.raw[offFrameID:]),
				Checksum: f.checksum(), Payload: f.payload(), Headers: f.headers(),
			})
		}
		if len(frames) != 0 {
			return out, iggywire.Malformed("bytes after the frames")
		}
	}
	if uint32(len(out)) != p.MessagesCount {
		return out, iggywire.Malformed("fewer than the prefix")
	}
	return out, nil
}

func FuzzPollIteratorMatchesReferenceWalk(f *testing.F) {
	msgs := []iggywire.Message{
		{ID: [16]byte{1}, OriginTimestamp: 7, Payload: []byte(`{"a":1}`), Headers: []byte{1, 2, 3}},
		{ID: [16]byte{2}, OriginTimestamp: 9, Payload: []byte("second")},
		{Payload: nil},
	}
	record, err := AppendBatch(nil, msgs)
	if err != nil {
		f.Fatal(err)
	}
	body := append(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: 2, CurrentOffset: 3, MessagesCount: 3}), record...)
	f.Add(body)
	f.Add(append(append([]byte(nil), body...), record...)) // a second record the prefix does not count
	f.Add(body[:len(body)-3])                              // a frame cut short
	f.Add(iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{}))
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := referenceWalk(body)
		it, err := NewPollIterator(body)
		if err != nil {
			if wantErr == nil {
				t.Fatalf("iterator refused the prefix (%v), the reference did not", err)
			}
			return
		}
		var got []iggywire.PolledMessage
		var m iggywire.PolledMessage
		for it.Next(&m) {
			got = append(got, m)
		}
		if (it.Err() == nil) != (wantErr == nil) {
			t.Fatalf("iterator fault %v, reference fault %v", it.Err(), wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("iterator yielded %d messages, reference %d", len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Offset != w.Offset || g.Timestamp != w.Timestamp || g.OriginTimestamp != w.OriginTimestamp ||
				g.ID != w.ID || g.Checksum != w.Checksum || !bytes.Equal(g.Payload, w.Payload) || !bytes.Equal(g.Headers, w.Headers) {
				t.Fatalf("message %d: iterator %+v, reference %+v", i, g, w)
			}
		}
	})
}

// referenceAppendBatch is AppendBatch written plainly, frame by frame, with the batch checksum
// from a second walk: the fuzz target below holds AppendBatch's one pass to the same bytes.
func referenceAppendBatch(dst []byte, msgs []iggywire.Message) []byte {
	origin := msgs[0].OriginTimestamp
	for _, m := range msgs[1:] {
		origin = min(origin, m.OriginTimestamp)
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	for i, m := range msgs {
		fs := len(dst)
		dst = append(dst, make([]byte, FrameHeaderSize)...)
		f := dst[fs:]
		copy(f[offFrameID:], m.ID[:])
		binary.LittleEndian.PutUint32(f[offFrameOffsetDelta:], uint32(i))
		binary.LittleEndian.PutUint32(f[offFrameTimeDelta:], uint32(m.OriginTimestamp-origin))
		binary.LittleEndian.PutUint32(f[offFrameHeadersLen:], uint32(len(m.Headers)))
		binary.LittleEndian.PutUint32(f[offFramePayloadLen:], uint32(len(m.Payload)))
		dst = append(dst, m.Payload...)
		dst = append(dst, m.Headers...)
		binary.LittleEndian.PutUint64(dst[fs:], xxh3.Hash(dst[fs+8:]))
	}
	rec := dst[start:]
	binary.LittleEndian.PutUint64(rec[offBatchOrigin:], origin)
	binary.LittleEndian.PutUint64(rec[offBatchLength:], uint64(len(rec)))
	binary.LittleEndian.PutUint32(rec[offBatchCount:], uint32(len(msgs)))
	var h xxh3.Hasher
	_, _ = h.Write(rec[:offBatchChecksum])
	_, _ = h.Write(rec[offBatchCount : offBatchCount+4])
	for rest := rec[BatchHeaderSize:]; len(rest) > 0; {
		f, err := nextFrame(rest)
		if err != nil {
			panic(err)
		}
		_, _ = h.Write(f.raw[:8])
		rest = rest[len(f.raw):]
	}
	binary.LittleEndian.PutUint64(rec[offBatchChecksum:], h.Sum64())
	return dst
}

// FuzzAppendBatchMatchesReference: messages cut from the fuzzer's bytes (sizes, ids, times and
// headers from its bytes too) encode to the reference's bytes, after a prefix already in dst.
func FuzzAppendBatchMatchesReference(f *testing.F) {
	f.Add([]byte("{\"a\":1}\x00second\x00\x00third"), uint16(3), uint8(2))
	f.Add(bytes.Repeat([]byte{7}, 3000), uint16(100), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step uint16, headerEvery uint8) {
		var msgs []iggywire.Message
		for i := 0; len(msgs) < 200; i++ {
			n := min(len(data), int(step)%257)
			m := iggywire.Message{ID: [16]byte{byte(i), byte(n)}, OriginTimestamp: uint64(1000 + (i*7919)%5000), Payload: data[:n]}
			if headerEvery != 0 && i%int(headerEvery) == 0 {
				m.Headers = data[:min(len(data), 5)]
			}
			msgs = append(msgs, m)
			data = data[n:]
			if len(data) == 0 || n == 0 {
				break
			}
		}
		prefix := []byte("prefix")
		got, err := AppendBatch(append([]byte(nil), prefix...), msgs)
		if err != nil {
			t.Fatal(err)
		}
		want := referenceAppendBatch(append([]byte(nil), prefix...), msgs)
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendBatch differs from the reference for %d messages", len(msgs))
		}
		if _, err := VerifyBatch(got[len(prefix):]); err != nil {
			t.Fatalf("the record does not verify: %v", err)
		}
	})
}
