package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"encoding/binary"
	"log/slog"
	"reflect"
	"testing"

	binaryserialization "github.com/apache/iggy/foreign/go/binary_serialization"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// pollReply builds a PolledMessages body: partition, current offset, count, then each message's
// 64-byte header, payload and user headers.
func pollReply(partition uint32, current uint64, msgs ...[2][]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, partition)
	b = binary.LittleEndian.AppendUint64(b, current)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(msgs)))
	for i, m := range msgs {
		payload, headers := m[0], m[1]
		b = binary.LittleEndian.AppendUint64(b, uint64(0xc0ffee+i)) // checksum
		for j := range 16 {
			b = append(b, byte(16*i+j)) // id
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(100+i))  // offset
		b = binary.LittleEndian.AppendUint64(b, uint64(2000+i)) // timestamp
		b = binary.LittleEndian.AppendUint64(b, uint64(3000+i)) // origin timestamp
		b = binary.LittleEndian.AppendUint32(b, uint32(len(headers)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
		b = binary.LittleEndian.AppendUint64(b, 0) // reserved
		b = append(append(b, payload...), headers...)
	}
	return b
}

// One string header "k" = "v": [kind u8][length u32][bytes] for the key, then the value.
var wireHeader = []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}

// sdkDecode is the SDK's reading of a reply, as Poll without buffers returns it; ok is false when
// the SDK panics on it.
func sdkDecode(body []byte) (b api.Batch, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	polled, err := binaryserialization.DeserializeFetchMessagesResponse(body, iggcon.MESSAGE_COMPRESSION_NONE)
	if err != nil {
		return api.Batch{}, false
	}
	return (&sdkClient{log: slog.New(slog.DiscardHandler)}).toBatch(polled), true
}

func ownDecode(body []byte) (api.Batch, error) {
	b, _, _, err := decodePollReply(body, nil, nil, func(string, ...any) {})
	return b, err
}

// sameBatch compares batches the way callers read them (an empty message list either way).
func sameBatch(a, b api.Batch) bool {
	if len(a.Messages) == 0 && len(b.Messages) == 0 {
		return a.PartitionID == b.PartitionID && a.CurrentOffset == b.CurrentOffset
	}
	return reflect.DeepEqual(a, b)
}

func TestDecodePollReplyVectors(t *testing.T) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"no messages", pollReply(3, 9)},
		{"two messages, one with a header", pollReply(1, 101, [2][]byte{[]byte("hello"), nil}, [2][]byte{[]byte(`{"a":1}`), wireHeader})},
		{"unparsable headers are dropped", pollReply(1, 100, [2][]byte{[]byte("x"), {9, 9, 9}})},
		{"a truncated last payload is left out", pollReply(1, 101, [2][]byte{[]byte("one"), nil}, [2][]byte{[]byte("two"), nil})[:16+64+3+64+1]},
		{"a truncated last header is left out", pollReply(1, 101, [2][]byte{[]byte("one"), nil}, [2][]byte{[]byte("two"), nil})[:16+64+3+30]},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, ok := sdkDecode(c.body)
			if !ok {
				t.Fatal("the SDK rejects the vector")
			}
			got, err := ownDecode(c.body)
			if err != nil || !sameBatch(got, want) {
				t.Fatalf("decodePollReply = %+v, %v\nthe SDK gives %+v", got, err, want)
			}
		})
	}
	got, err := ownDecode(pollReply(1, 101, [2][]byte{[]byte("hello"), nil}, [2][]byte{[]byte(`{"a":1}`), wireHeader}))
	if err != nil || len(got.Messages) != 2 || string(got.Messages[1].Payload) != `{"a":1}` || got.Messages[1].Offset != 101 ||
		len(got.Messages[1].Headers) != 1 || string(got.Messages[1].Headers[0].Value) != "v" || got.Messages[0].ID[1] != 1 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

// FuzzDecodePollReply: our decoder reads every reply the SDK reads, the same way, and turns the
// replies the SDK panics on into an error instead of a panic.
func FuzzDecodePollReply(f *testing.F) {
	f.Add(pollReply(1, 101, [2][]byte{[]byte("hello"), nil}, [2][]byte{[]byte(`{"a":1}`), wireHeader}))
	f.Add(pollReply(2, 7, [2][]byte{[]byte("x"), {1, 0, 0, 0}}))
	f.Add(pollReply(0, 0))
	f.Fuzz(func(t *testing.T, body []byte) {
		body = body[:len(body):len(body)] // a reply buffer is exactly its length, or the SDK reads past it
		got, err := ownDecode(body)
		want, ok := sdkDecode(body)
		if !ok {
			if err == nil && len(body) >= 16 {
				t.Fatalf("the SDK fails on %x, decodePollReply returns %+v", body, got)
			}
			return
		}
		if err != nil || !sameBatch(got, want) {
			t.Fatalf("body %x: decodePollReply = %+v, %v; the SDK gives %+v", body, got, err, want)
		}
	})
}

// The reused-buffer poll needs the SDK's request lock; if a newer SDK renames it, Poll would
// quietly fall back to the SDK's allocating decoder, so this fails instead.
func TestRequestLockOfFindsTheSDKMutex(t *testing.T) {
	if requestLockOf(&tcp.IggyTcpClient{}) == nil {
		t.Fatal("the SDK client has no sync.Mutex field named mtx any more")
	}
}
