package wire09_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

func goldenRecord(t testing.TB) []byte {
	t.Helper()
	record, err := wire09.AppendBatch(nil, goldenMessages())
	if err != nil {
		t.Fatal(err)
	}
	return record
}

func TestVerifyBatchFaults(t *testing.T) {
	const secondFrame = 256 + 61 // the first frame is 48 + 13 bytes
	tests := []struct {
		name   string
		mutate func([]byte) []byte
		want   iggywire.Status
		detail string
	}{
		{"payload byte flipped", func(b []byte) []byte { b[256+48] ^= 1; return b }, iggywire.StatusInvalidMessageChecksum, "message 0"},
		{"second frame id changed", func(b []byte) []byte { b[secondFrame+9] = 1; return b }, iggywire.StatusInvalidMessageChecksum, "message 1"},
		{"frame checksum changed", func(b []byte) []byte { b[256] ^= 1; return b }, iggywire.StatusInvalidMessageChecksum, "message 0"},
		{"batch checksum changed", func(b []byte) []byte { b[40] ^= 1; return b }, iggywire.StatusInvalidBatchChecksum, "batch checksum"},
		{"stamped without recompute", func(b []byte) []byte { b[8] = 5; return b }, iggywire.StatusInvalidBatchChecksum, "batch checksum"},
		{"count zero", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[48:], 0); return b }, iggywire.StatusInvalidMessagesCount, "count is 0"},
		{"count above frames", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[48:], 3); return b }, iggywire.StatusInvalidFormat, "frames hold 2"},
		{"reserved header byte", func(b []byte) []byte { b[100] = 1; return b }, iggywire.StatusInvalidFormat, "reserved"},
		{"reserved frame byte", func(b []byte) []byte { b[256+44] = 1; return b }, iggywire.StatusInvalidFormat, "reserved"},
		{"length below 256", func(b []byte) []byte { binary.LittleEndian.PutUint64(b[32:], 100); return b }, iggywire.StatusInvalidFormat, "below 256"},
		{"length above bytes", func(b []byte) []byte { binary.LittleEndian.PutUint64(b[32:], 400); return b }, iggywire.StatusInvalidFormat, "does not match"},
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }, iggywire.StatusInvalidFormat, "does not match"},
		{"truncated", func(b []byte) []byte { return b[:300] }, iggywire.StatusInvalidFormat, "does not match"},
		{"header only", func(b []byte) []byte { return b[:100] }, iggywire.StatusInvalidFormat, "256-byte header"},
		{"frame overruns", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[256+36:], 1000); return b }, iggywire.StatusInvalidFormat, "overruns"},
	}
	for _, tt := range tests {
		_, err := wire09.VerifyBatch(tt.mutate(goldenRecord(t)))
		var werr *iggywire.Error
		if !errors.As(err, &werr) || werr.Status != tt.want || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("%s: %v, want status %d mentioning %q", tt.name, err, tt.want, tt.detail)
		}
	}
}

func TestAppendBatchFaults(t *testing.T) {
	if _, err := wire09.AppendBatch(nil, nil); !errors.Is(err, iggywire.StatusInvalidMessagesCount) {
		t.Errorf("no messages: %v", err)
	}
	far := []iggywire.Message{{OriginTimestamp: 0}, {OriginTimestamp: 1 << 32}}
	if out, err := wire09.AppendBatch([]byte("x"), far); !errors.Is(err, iggywire.StatusInvalidMessageTimestampDelta) || string(out) != "x" {
		t.Errorf("delta above u32: %v, left %q", err, out)
	}
	// The origin is the minimum, whatever the order.
	record, err := wire09.AppendBatch(nil, []iggywire.Message{{OriginTimestamp: 20}, {OriginTimestamp: 10}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := wire09.VerifyBatch(record)
	if err != nil || h.OriginTimestamp != 10 {
		t.Errorf("origin = %+v, %v", h, err)
	}
}

func TestStampBatch(t *testing.T) {
	record := goldenRecord(t)
	wire09.StampBatch(record, 7, 1000, 123456)
	h, err := wire09.VerifyBatch(record)
	if err != nil || h.PartitionID != 7 || h.BaseOffset != 1000 || h.BaseTimestamp != 123456 || wire09.BatchTimestampOf(record) != 123456 {
		t.Errorf("stamped = %+v, %v", h, err)
	}
}

func TestPollIteratorFaults(t *testing.T) {
	record := goldenRecord(t)
	body := func(count uint32, records ...[]byte) []byte {
		b := iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: 1, CurrentOffset: 1, MessagesCount: count})
		for _, r := range records {
			b = append(b, r...)
		}
		return b
	}
	mutated := func(f func([]byte)) []byte {
		r := goldenRecord(t)
		f(r)
		return r
	}
	tests := []struct {
		name string
		body []byte
		want int // messages yielded before the fault
		ok   bool
	}{
		{"two records", body(4, record, record), 4, true},
		{"empty poll", body(0), 0, true},
		{"resync sentinel", iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: wire09.PartitionResync}), 0, true},
		{"prefix counts fewer", body(1, record), 1, false},
		{"prefix counts more", body(3, record), 2, false},
		{"truncated record", body(2, record[:300]), 0, false},
		{"record count above frames", body(3, mutated(func(r []byte) { binary.LittleEndian.PutUint32(r[48:], 3) })), 2, false},
		{"record count below frames", body(1, mutated(func(r []byte) { binary.LittleEndian.PutUint32(r[48:], 1) })), 1, false},
		{"record count zero", body(0, mutated(func(r []byte) { binary.LittleEndian.PutUint32(r[48:], 0) })), 0, false},
		{"reserved byte", body(2, mutated(func(r []byte) { r[200] = 1 })), 0, false},
		{"garbage after records", body(2, record, []byte{1, 2, 3}), 2, false},
	}
	for _, tt := range tests {
		it, err := wire09.NewPollIterator(tt.body)
		if err != nil {
			t.Errorf("%s: prefix: %v", tt.name, err)
			continue
		}
		var m iggywire.PolledMessage
		n := 0
		for it.Next(&m) {
			n++
		}
		if n != tt.want || (it.Err() == nil) != tt.ok {
			t.Errorf("%s: %d messages, err %v; want %d, ok %v", tt.name, n, it.Err(), tt.want, tt.ok)
		}
	}
	if _, err := wire09.NewPollIterator(make([]byte, 15)); err == nil {
		t.Error("a 15-byte poll reply decodes")
	}
}

// The hot paths do not allocate: encoding a batch into a buffer with room,
// verifying, stamping, slicing and iterating a poll reply.
func TestHotPathsDoNotAllocate(t *testing.T) {
	msgs := goldenMessages()
	buf := make([]byte, 0, 4096)
	record := goldenRecord(t)
	poll := iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{MessagesCount: 2})
	poll = append(poll, record...)
	var sink uint64
	allocs := testing.AllocsPerRun(100, func() {
		out, _ := wire09.AppendBatch(buf[:0], msgs)
		if _, err := wire09.VerifyBatch(out); err != nil {
			t.Fatal(err)
		}
		wire09.StampBatch(out, 1, 2, 3)
		out = wire09.AppendSlice(out[len(out):], out, 1, 1)
		it, _ := wire09.NewPollIterator(poll)
		var m iggywire.PolledMessage
		for it.Next(&m) {
			sink += m.Offset + uint64(len(m.Payload))
		}
		sink += uint64(len(out))
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per batch round, want 0", allocs)
	}
	_ = sink
}
