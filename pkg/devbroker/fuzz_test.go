package devbroker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// Fuzz targets over the frame reader, every command decoder and the handlers
// behind them. Run: go test ./pkg/devbroker -run '^$' -fuzz FuzzConnection -parallel=1 -fuzztime 60s

// seedFrames are valid requests of most commands, so the fuzzer starts deep.
func seedFrames(t testing.TB) [][]byte {
	ids := "010400000000 010400000000" // stream 0, topic 0
	return [][]byte{
		unhex(t, loginIggyIggy),
		unhex(t, "04000000 01000000"),                                    // ping
		unhex(t, "04000000 0c000000"),                                    // cluster metadata
		unhex(t, "04000000 c9000000"),                                    // get streams
		unhex(t, "09000000 ca000000 0464656d6f"),                         // create stream
		unhex(t, "0a000000 c8000000 0204 64656d6f"),                      // get stream by name
		unhex(t, "10000000 2c010000"+ids),                                // get topic
		unhex(t, "14000000 92010000"+ids+"02000000"),                     // create partitions
		unhex(t, "15000000 5a020000"+ids+"0477726b72"),                   // create group
		unhex(t, "16000000 5c020000"+ids+"010400000000"),                 // join group
		unhex(t, "16000000 58020000"+ids+"010400000000"),                 // get group
		unhex(t, "1c000000 78000000 01 0104 01000000"+ids+"00 00000000"), // get offset
		unhex(t, "73000000 65000000 16000000"+ids+"0204 00000000 01000000 00000000 45000000 0000000000000000"+
			"0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000"+
			"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f"), // send
		unhex(t, "2a000000 64000000 01 0104 01000000"+ids+"01 00000000 05 0000000000000000 0a000000 01"), // poll single
		unhex(t, "2a000000 64000000 02 0104 00000000"+ids+"00 00000000 04 0000000000000000 0a000000 01"), // poll group
		unhex(t, "24000000 79000000 01 0104 01000000"+ids+"01 00000000 0000000000000000"),                // store offset
		unhex(t, "1c000000 7a000000 01 0104 01000000"+ids+"01 00000000"),                                 // delete offset
	}
}

// newFuzzConnection is a logged-in connection over in-memory streams, to a
// store with a stream, a two-partition topic, messages and a group. The small
// retention cap makes sends drop old batches, so that path is fuzzed too.
func newFuzzConnection(t testing.TB, input []byte, out *bytes.Buffer) *connection {
	srv := New(Config{RetainBytesPerPartition: 400})
	data := srv.currentData()
	st, err := data.createStream("demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := data.createTopic(iggywire.NumericID(st.id), "events", topicSettings{partitions: 2, compression: 1}, nil); err != nil {
		t.Fatal(err)
	}
	tp := data.streams[st.id].topics[0]
	msg := unhex(t, "0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000"+
		"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f")
	tp.partitions[0].append(append(msg, msg...), []uint32{69, 138}, 10)
	tp.groups = []*group{{id: 0, name: "g", partitions: []uint32{0, 1}}}
	tp.groups[0].join(1, tp.releasedFor(tp.groups[0]))
	return &connection{
		srv:  srv,
		data: data,
		sess: &session{clientID: 1, authenticated: true},
		r:    bufio.NewReader(bytes.NewReader(input)),
		w:    bufio.NewWriter(out),
	}
}

// checkReplies parses the reply stream: error frames carry no payload, no
// payload is 1 byte long (the SDK would desync), and frames end exactly.
func checkReplies(t *testing.T, out []byte) {
	for len(out) > 0 {
		if len(out) < 8 {
			t.Fatalf("%d trailing bytes, not a reply header", len(out))
		}
		status := binary.LittleEndian.Uint32(out)
		length := binary.LittleEndian.Uint32(out[4:])
		if status != 0 && length != 0 {
			t.Fatalf("error status %d carries a %d-byte payload", status, length)
		}
		if length == 1 {
			t.Fatal("a 1-byte payload, which the SDK would not read")
		}
		if uint64(len(out)-8) < uint64(length) {
			t.Fatalf("reply announces %d bytes, only %d follow", length, len(out)-8)
		}
		out = out[8+length:]
	}
}

func FuzzConnection(f *testing.F) {
	seeds := seedFrames(f)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add(bytes.Join(seeds, nil))
	f.Fuzz(func(t *testing.T, input []byte) {
		var out bytes.Buffer
		c := newFuzzConnection(t, input, &out)
		_ = c.serve08()
		_ = c.w.Flush()
		checkReplies(t, out.Bytes())
	})
}

func FuzzDecodeSend(f *testing.F) {
	for _, s := range seedFrames(f) {
		if wire08.Command(binary.LittleEndian.Uint32(s[4:])) == wire08.CmdSendMessages {
			f.Add(s[8:])
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		req, err := wire08.DecodeSendMessages(payload, nil)
		if err != nil {
			return
		}
		if len(req.Ends) != int(req.Count) || req.Ends[len(req.Ends)-1] != uint32(len(req.Messages)) {
			t.Fatalf("accepted %d messages with ends %v over %d bytes", req.Count, req.Ends, len(req.Messages))
		}
		start := uint32(0)
		for _, end := range req.Ends {
			msg := req.Messages[start:end]
			h := wire08.DecodeMessageHeader(msg)
			size := wire08.MessageHeaderSize + h.PayloadLength + h.HeadersLength
			if size != end-start {
				t.Fatalf("message of %d bytes has header lengths adding to %d", end-start, size)
			}
			start = end
		}
	})
}
