package devbroker_test

import (
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// The 0.9 path over loopback with raw frames: 1,000-message batches of
// 100-byte payloads, the same shape as the SDK benchmarks. The client side
// reuses its buffers and decodes with wire09.PollIterator, so allocations
// reported are the broker's. Run: go test ./pkg/devbroker -run '^$' -bench Raw09 -benchmem

func bench09Messages() []iggywire.Message {
	payload := make([]byte, benchPayload)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	msgs := make([]iggywire.Message, benchBatch)
	for i := range msgs {
		msgs[i] = iggywire.Message{ID: [16]byte{byte(i), byte(i >> 8), 1}, OriginTimestamp: 1_700_000_000_000_000 + uint64(i), Payload: payload}
	}
	return msgs
}

func BenchmarkRaw09Send(b *testing.B) {
	srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"events": 1}), testkit.WithRetention(64<<20))
	c := testkit.DialRaw09(b, srv.Addr())
	c.Login("iggy", "iggy")
	frame := c.Frame(wire09.OpSendMessages, 0, sendBody(b, iggywire.NumericID(0), iggywire.NumericID(0),
		iggywire.Partitioning{Kind: iggywire.PartitionByID}, bench09Messages()))
	var buf []byte
	b.SetBytes(benchBatch * benchPayload)
	for b.Loop() {
		c.Write(frame)
		buf = c.ReadInto(buf)
		if h, _ := wire09.DecodeReplyHeader(buf); h.Status != 0 {
			b.Fatalf("send: status %d", h.Status)
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkRaw09Poll polls 1,000 messages per request: whole stored records,
// records sliced in the middle, and batches sent over 0.8 (converted).
func BenchmarkRaw09Poll(b *testing.B) {
	cases := []struct {
		name    string
		over08  bool
		skew    uint64 // a start inside a batch makes two sliced records
		batches int
	}{{"whole-records", false, 0, 100}, {"sliced-records", false, 500, 100}, {"sent-over-0.8", true, 0, 100}}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"events": 1}))
			c := testkit.DialRaw09(b, srv.Addr())
			c.Login("iggy", "iggy")
			if tc.over08 {
				msgs := benchMessages(b)
				sdk := testkit.LoggedInClient(b, srv)
				stream, _ := iggcon.NewIdentifier(uint32(0))
				for range tc.batches {
					if err := sdk.SendMessages(stream, stream, iggcon.PartitionId(0), msgs); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				send := c.Frame(wire09.OpSendMessages, 0, sendBody(b, iggywire.NumericID(0), iggywire.NumericID(0),
					iggywire.Partitioning{Kind: iggywire.PartitionByID}, bench09Messages()))
				for range tc.batches {
					c.Write(send)
					c.Read()
				}
			}
			polls := make([][]byte, tc.batches-1)
			for i := range polls {
				polls[i] = c.Frame(wire09.OpNonReplicated, wire09.CmdPollMessages, must[[]byte](b)(wire09.AppendPollMessages(nil, wire09.PollMessages{
					Consumer: iggywire.Consumer{Kind: iggywire.ConsumerKindSingle, ID: iggywire.NumericID(1)}, StreamID: iggywire.NumericID(0),
					TopicID: iggywire.NumericID(0), Partition: iggywire.SomePartition(0),
					Strategy: iggywire.PollingStrategy{Kind: iggywire.PollOffset, Value: uint64(i)*benchBatch + tc.skew}, Count: benchBatch})))
			}
			var buf []byte
			var m iggywire.PolledMessage
			b.SetBytes(benchBatch * benchPayload)
			i := 0
			for b.Loop() {
				c.Write(polls[i%len(polls)])
				i++
				buf = c.ReadInto(buf)
				it, err := wire09.NewPollIterator(wire09.Body(buf))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for it.Next(&m) {
					n++
				}
				if it.Err() != nil || n != benchBatch {
					b.Fatalf("polled %d messages: %v", n, it.Err())
				}
			}
			b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
