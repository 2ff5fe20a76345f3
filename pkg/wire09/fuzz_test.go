package wire09_test

import (
	"bytes"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// Decoders of untrusted bytes never panic, and what they accept re-encodes
// to the same bytes where the format has one encoding.

func FuzzReadFrame(f *testing.F) {
	f.Add(wire09.AppendRequest(nil, &wire09.RequestHeader{Client: specClient, Operation: wire09.OpNonReplicated, Code: wire09.CmdPing}, nil))
	f.Add(wire09.AppendRequest(nil, &wire09.RequestHeader{Client: specClient, Operation: wire09.OpCreateStream, Request: 1, Session: 1}, []byte{2, 's', '1'}))
	f.Add(wire09.AppendEviction(nil, &wire09.EvictionHeader{Client: specClient, Reason: 9}))
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		frame, err := wire09.ReadFrame(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		if int(wire09.FrameSize(frame)) != len(frame) {
			t.Fatalf("frame of %d bytes announces %d", len(frame), wire09.FrameSize(frame))
		}
		if wire09.ValidateRequest(frame) == nil {
			h, err := wire09.DecodeRequestHeader(frame)
			if err != nil {
				t.Fatal(err)
			}
			back, err := wire09.DecodeRequestHeader(wire09.AppendRequestHeader(nil, &h))
			if err != nil || back != h {
				t.Fatalf("request header does not round-trip: %+v -> %+v (%v)", h, back, err)
			}
		}
		_, _ = wire09.DecodeReplyHeader(frame)
		_, _ = wire09.DecodeEviction(frame)
	})
}

func FuzzStripResult(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0xf4, 3, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		payload, rejection, err := wire09.StripResult(body)
		if err == nil && rejection == 0 && len(payload) != len(body)-4 {
			t.Fatalf("success payload of %d bytes from a %d-byte body", len(payload), len(body))
		}
		if err == nil && rejection != 0 && payload != nil {
			t.Fatal("a rejection with a payload")
		}
	})
}

// FuzzRequestBodies feeds the same bytes to every request decoder the broker uses.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		"002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 04 69676779 04 69676779 00000000",
		"002c0000 06 676f2d73646b 0c 302e392e302d656467652e34 03 746f6b 00000000",
		"02 7331", "02 02 7331", "02027331 03000000 02 7431",
		"01 01 04 00000000 02 02 7331 01 04 00000000 01 02000000 0a00000000000000 01",
		"02027331 0104 00000000 0202 6731",
		"02 02 02 6731 02 02 7331 01 04 00000000 01 02000000 05 0000000000000000 0a000000 01",
		"14000000 02027331 0104 00000000 0204 02000000 01000000",
	} {
		f.Add(unhex(f, seed))
	}
	f.Add(goldenOptionsBlock)
	f.Add(unhex(f, goldenProduceBodyFull))
	f.Fuzz(func(t *testing.T, body []byte) {
		if l, err := wire09.DecodeLogin(body); err == nil {
			var again []byte
			if l.IsToken() {
				again, err = wire09.AppendLoginToken(nil, l.LoginPrefix, l.Token)
			} else {
				again, err = wire09.AppendLoginPassword(nil, l.LoginPrefix, l.Username, l.Password)
			}
			if err != nil || (len(l.Context) == 0 && !bytes.Equal(again, body)) {
				t.Fatalf("login does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if c, err := wire09.DecodeCreateStream(body); err == nil {
			if again, err := wire09.AppendCreateStream(nil, c); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("create stream does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if c, err := wire09.DecodeCreateTopic(body); err == nil {
			_, _ = wire09.ParseTopicOptions(c.Options)
			if again, err := wire09.AppendCreateTopic(nil, c); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("create topic does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		_, _ = wire09.ParseTopicOptions(body)
		_, _ = wire09.ValidateTLV(body)
		if id, err := wire09.DecodeIdentifier(body); err == nil {
			if again, err := iggywire.AppendIdentifier(nil, id); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("identifier does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if r, err := iggywire.DecodeTopicRef(body); err == nil {
			if again, err := iggywire.AppendTopicRef(nil, r); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("topic ref does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if g, err := iggywire.DecodeGroupRef(body); err == nil {
			if again, err := iggywire.AppendGroupRef(nil, g); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("group ref does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if c, err := wire09.DecodeCreateConsumerGroup(body); err == nil {
			if again, err := wire09.AppendCreateConsumerGroup(nil, c); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("create group does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		if c, err := wire09.DecodeCreatePartitions(body); err == nil {
			if again, err := wire09.AppendCreatePartitions(nil, c); err != nil || !bytes.Equal(again, body) {
				t.Fatalf("create partitions does not round-trip: %x -> %x (%v)", body, again, err)
			}
		}
		_, _ = wire09.DecodeGetConsumerOffset(body)
		_, _ = wire09.DecodeStoreConsumerOffset(body)
		_, _ = wire09.DecodeDeleteConsumerOffset(body)
		_, _ = wire09.DecodePollMessages(body)
		if _, batch, err := wire09.DecodeSendMessages(body); err == nil {
			_, _ = wire09.VerifyBatch(batch)
		}
	})
}

func FuzzVerifyBatch(f *testing.F) {
	f.Add(unhex(f, goldenProduceBatchOnly), 0, 2)
	f.Add(make([]byte, 256), 0, 1)
	f.Fuzz(func(t *testing.T, record []byte, first, count int) {
		h, err := wire09.VerifyBatch(record)
		if err != nil {
			return
		}
		wire09.StampBatch(record, 1, 100, 200)
		if _, err := wire09.VerifyBatch(record); err != nil {
			t.Fatalf("a stamped valid batch fails: %v", err)
		}
		first, count = first%int(h.Count+1), count%int(h.Count+1)
		if slice := wire09.AppendSlice(nil, record, first, count); len(slice) > 0 {
			if _, err := wire09.VerifyBatch(slice); err != nil {
				t.Fatalf("slice %d+%d of a valid batch fails: %v", first, count, err)
			}
		}
	})
}

func FuzzPollIterator(f *testing.F) {
	f.Add(unhex(f, goldenPollBody))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, body []byte) {
		it, err := wire09.NewPollIterator(body)
		if err != nil {
			return
		}
		var m iggywire.PolledMessage
		n := uint32(0)
		for it.Next(&m) {
			n++
		}
		if it.Err() == nil && n != it.Prefix().MessagesCount {
			t.Fatalf("%d messages yielded, prefix says %d", n, it.Prefix().MessagesCount)
		}
	})
}
