package postcard_test

import (
	"bytes"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Option and state corner cases of ProducedMessages, both directions.
func TestProducedMessagesOptions(t *testing.T) {
	empty := postcard.HeaderMap{}
	tests := []struct {
		name string
		v    postcard.ProducedMessages
		hex  string
	}{
		{"state Some(empty)", postcard.ProducedMessages{Schema: postcard.SchemaText, State: []byte{}, HasState: true}, "02 00 01 00"},
		{"state without HasState is None", postcard.ProducedMessages{Schema: postcard.SchemaText, State: []byte{1}}, "02 00 00"},
		{"headers Some(empty map)", postcard.ProducedMessages{
			Messages: []postcard.ProducedMessage{{Headers: &empty, Payload: []byte{}}},
		}, "00 01 00 00 00 00 01 00 00 00"},
		{"every option Some", postcard.ProducedMessages{
			Schema: postcard.SchemaProto,
			Messages: []postcard.ProducedMessage{{
				ID: &postcard.Uint128{Lo: 300}, Checksum: ptr(uint64(1)), Timestamp: ptr(uint64(2)), OriginTimestamp: ptr(uint64(128)),
				Headers: &v4Map, Payload: []byte{9},
			}},
		}, "03 01 01 AC 02 01 01 01 02 01 80 01 01 " + hexV4 + " 01 09 00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.hex)
			got := postcard.AppendProducedMessages(nil, tt.v)
			if !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got % X\nwant % X", got, want)
			}
			decoded, err := postcard.DecodeProducedMessages(want)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if again := postcard.AppendProducedMessages(nil, decoded); !bytes.Equal(again, want) {
				t.Fatalf("re-encode of decoded value:\n got % X\nwant % X", again, want)
			}
		})
	}
}

func TestConnectorStateRoundTrip(t *testing.T) {
	for _, state := range [][]byte{{}, {0x91, 0x2A}, bytes.Repeat([]byte{7}, 300)} {
		enc := postcard.AppendConnectorState(nil, state)
		got, err := postcard.DecodeConnectorState(enc)
		if err != nil || !bytes.Equal(got, state) {
			t.Fatalf("state of %d bytes: got %d bytes, %v", len(state), len(got), err)
		}
	}
}

// Encoders append to dst: existing bytes are kept.
func TestEncodersAppend(t *testing.T) {
	prefix := []byte{0xAA, 0xBB}
	got := postcard.AppendTopicMetadata(bytes.Clone(prefix), postcard.TopicMetadata{Stream: "s", Topic: "t"})
	if want := append(bytes.Clone(prefix), unhex(t, hexV1)...); !bytes.Equal(got, want) {
		t.Fatalf("got % X, want % X", got, want)
	}
}

// Decoded byte slices alias the input but are capped, so appending to a
// payload cannot overwrite the bytes that follow it.
func TestDecodedPayloadAppendDoesNotClobberInput(t *testing.T) {
	in := unhex(t, hexV6)
	v, err := postcard.DecodeRawMessages(in)
	if err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(in)
	_ = append(v.Messages[0].Headers, 0xEE)
	_ = append(v.Messages[0].Payload, 0xEE)
	if !bytes.Equal(in, before) {
		t.Fatal("appending to a decoded slice changed the input buffer")
	}
}

// With enough capacity in dst the encoders do not allocate (headers given in
// ascending order, as DecodeHeaderMap returns them).
func TestEncodersDoNotAllocate(t *testing.T) {
	raw := rawBatch(100, 100)
	produced := producedBatch(100, 100)
	dst := make([]byte, 0, 64<<10)
	cases := map[string]func(){
		"RawMessages":      func() { dst = postcard.AppendRawMessages(dst[:0], raw) },
		"ProducedMessages": func() { dst = postcard.AppendProducedMessages(dst[:0], produced) },
		"HeaderMap":        func() { dst = postcard.AppendHeaderMap(dst[:0], v7Map) },
		"TopicMetadata": func() {
			dst = postcard.AppendTopicMetadata(dst[:0], postcard.TopicMetadata{Stream: "orders", Topic: "events"})
		},
		"MessagesMetadata": func() {
			dst = postcard.AppendMessagesMetadata(dst[:0], postcard.MessagesMetadata{PartitionID: 7, CurrentOffset: 1 << 40})
		},
	}
	for name, encode := range cases {
		t.Run(name, func(t *testing.T) {
			if allocs := testing.AllocsPerRun(20, encode); allocs != 0 {
				t.Fatalf("%v allocations per encode, want 0", allocs)
			}
		})
	}
}

// rawBatch builds n sink messages with payloadSize-byte payloads and a small
// encoded header map each, like a runner's consume batch.
func rawBatch(n, payloadSize int) postcard.RawMessages {
	headers := postcard.AppendHeaderMap(nil, v4Map)
	v := postcard.RawMessages{Schema: postcard.SchemaJSON, Messages: make([]postcard.RawMessage, n)}
	for i := range v.Messages {
		v.Messages[i] = postcard.RawMessage{
			ID:     postcard.Uint128{Hi: uint64(i) * 7919, Lo: uint64(i) * 104729},
			Offset: uint64(1_000_000 + i), Checksum: uint64(i) * 2654435761, Timestamp: 1700000000000000 + uint64(i), OriginTimestamp: 1700000000000000,
			Headers: headers,
			Payload: bytes.Repeat([]byte{byte('a' + i%26)}, payloadSize),
		}
	}
	return v
}

// producedBatch builds n source messages as random_source sends them: id
// and timestamp set, one header, payloadSize-byte payloads, and a state.
func producedBatch(n, payloadSize int) postcard.ProducedMessages {
	v := postcard.ProducedMessages{Schema: postcard.SchemaJSON, Messages: make([]postcard.ProducedMessage, n), State: []byte{0x91, 0x2A}, HasState: true}
	for i := range v.Messages {
		v.Messages[i] = postcard.ProducedMessage{
			ID:        &postcard.Uint128{Hi: uint64(i) << 32, Lo: uint64(i) * 104729},
			Timestamp: ptr(1700000000000000 + uint64(i)),
			Headers:   &v4Map,
			Payload:   bytes.Repeat([]byte{byte('a' + i%26)}, payloadSize),
		}
	}
	return v
}

// Decoding into a reused message slice gives what a fresh decode gives: nothing of the previous
// batch (its optional fields, its longer length) leaks into the next, and a slice too small is
// not written to.
func TestDecodeProducedMessagesIntoReusesTheSlice(t *testing.T) {
	full := postcard.ProducedMessages{Schema: postcard.SchemaJSON, Messages: []postcard.ProducedMessage{
		{ID: &postcard.Uint128{Lo: 1}, Checksum: ptr(uint64(2)), Timestamp: ptr(uint64(3)), OriginTimestamp: ptr(uint64(4)), Headers: &v4Map, Payload: []byte("a")},
		{ID: &postcard.Uint128{Lo: 5}, Payload: []byte("b")},
		{Payload: []byte("c")},
	}, State: []byte{0x91, 3}, HasState: true}
	bare := postcard.ProducedMessages{Schema: postcard.SchemaJSON, Messages: []postcard.ProducedMessage{{Payload: []byte("x")}, {Payload: []byte("y")}}}
	reuse := make([]postcard.ProducedMessage, 0, 3)
	for _, v := range []postcard.ProducedMessages{full, bare, full, bare} {
		b := postcard.AppendProducedMessages(nil, v)
		want, err := postcard.DecodeProducedMessages(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := postcard.DecodeProducedMessagesInto(b, reuse)
		if err != nil {
			t.Fatal(err)
		}
		if &got.Messages[0] != &reuse[:1][0] {
			t.Fatal("the reused slice was not filled")
		}
		if again, wantBytes := postcard.AppendProducedMessages(nil, got), postcard.AppendProducedMessages(nil, want); !bytes.Equal(again, wantBytes) || !bytes.Equal(again, b) {
			t.Fatalf("decoded into a reused slice:\n got % X\nwant % X", again, wantBytes)
		}
		reuse = got.Messages[:0]
	}
	small := make([]postcard.ProducedMessage, 1)
	got, err := postcard.DecodeProducedMessagesInto(postcard.AppendProducedMessages(nil, full), small)
	if err != nil || len(got.Messages) != 3 || small[0].Payload != nil {
		t.Fatalf("a slice too small: %d messages, %v, reuse written: %v", len(got.Messages), err, small[0].Payload != nil)
	}
}

// TestAppendRawMessagesFieldByField: the in-place batch encoder writes what
// the field encoders append one by one, for values of every varint length
// (u64 fields of 0..64 bits, ids of 0..128 bits), after a non-empty prefix.
func TestAppendRawMessagesFieldByField(t *testing.T) {
	v := postcard.RawMessages{Schema: postcard.SchemaProto}
	for bitLen := range 129 {
		u := func(shift int) uint64 {
			if bitLen == 0 {
				return 0
			}
			n := min(bitLen, 64)
			return 1<<(n-1) | (0x9E3779B97F4A7C15+uint64(shift))>>(65-n)
		}
		id := postcard.Uint128{Lo: u(0)}
		if bitLen > 64 {
			id = postcard.Uint128{Hi: 1<<(bitLen-65) | 0x5555555555555555>>(129-bitLen), Lo: 0xA5A5A5A5A5A5A5A5}
		}
		v.Messages = append(v.Messages, postcard.RawMessage{
			ID: id, Offset: u(1), Checksum: u(2), Timestamp: u(3), OriginTimestamp: u(4),
			Headers: bytes.Repeat([]byte{0x01}, bitLen%5), Payload: bytes.Repeat([]byte{'p'}, bitLen*3),
		})
	}
	want := []byte("prefix")
	want = postcard.AppendUvarint(want, uint64(v.Schema))
	want = postcard.AppendUvarint(want, uint64(len(v.Messages)))
	for _, m := range v.Messages {
		want = postcard.AppendUint128(want, m.ID)
		for _, f := range []uint64{m.Offset, m.Checksum, m.Timestamp, m.OriginTimestamp, uint64(len(m.Headers))} {
			want = postcard.AppendUvarint(want, f)
		}
		want = append(want, m.Headers...)
		want = append(postcard.AppendUvarint(want, uint64(len(m.Payload))), m.Payload...)
	}
	if got := postcard.AppendRawMessages([]byte("prefix"), v); !bytes.Equal(got, want) {
		t.Fatalf("AppendRawMessages differs from the field-by-field encoding:\n got % X\nwant % X", got, want)
	}
	if got := postcard.AppendRawMessages(make([]byte, 6, 8), postcard.RawMessages{Schema: postcard.SchemaRaw}); len(got) != 8 || got[6] != byte(postcard.SchemaRaw) || got[7] != 0 {
		t.Fatalf("empty batch: got % X", got)
	}
}
