package devbroker

import (
	"bufio"
	"encoding/binary"
	"io"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// Server-side cost alone, without TCP or the SDK: one 1,000-message
// SendMessages (100-byte payloads) or PollMessages handled per iteration.

func benchSendPayload(count int) []byte {
	p := binary.LittleEndian.AppendUint32(nil, 22)
	p = append(p, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 2, 4, 0, 0, 0, 0) // stream 0, topic 0, partition 0
	p = binary.LittleEndian.AppendUint32(p, uint32(count))
	const size = wire08.MessageHeaderSize + 100
	for i := range count {
		p = binary.LittleEndian.AppendUint32(p, 0)
		p = binary.LittleEndian.AppendUint32(p, uint32((i+1)*size))
		p = binary.LittleEndian.AppendUint64(p, 0)
	}
	for range count {
		msg := make([]byte, size)
		binary.LittleEndian.PutUint32(msg[52:], 100)
		p = append(p, msg...)
	}
	return p
}

func benchConnection(b *testing.B, retainBytes uint64) *connection {
	srv := New(Config{RetainBytesPerPartition: retainBytes})
	data := srv.currentData()
	st, _ := data.createStream("bench")
	if _, err := data.createTopic(iggywire.NumericID(st.id), "events", topicSettings{partitions: 1, compression: 1}, nil); err != nil {
		b.Fatal(err)
	}
	return &connection{srv: srv, data: data, sess: &session{clientID: 1, authenticated: true}, w: bufio.NewWriter(io.Discard)}
}

func BenchmarkDispatchSend(b *testing.B) {
	for _, retain := range []uint64{0, 64 << 20} {
		name := "keep-all"
		if retain > 0 {
			name = "retain-64MiB"
		}
		b.Run(name, func(b *testing.B) {
			c := benchConnection(b, retain)
			payload := benchSendPayload(1000)
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, st := c.dispatch08(wire08.CmdSendMessages, payload); st != 0 {
					b.Fatal(st)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkDispatchPoll(b *testing.B) {
	c := benchConnection(b, 0)
	payload := benchSendPayload(1000)
	for range 100 {
		if _, st := c.dispatch08(wire08.CmdSendMessages, payload); st != 0 {
			b.Fatal(st)
		}
	}
	poll := unhex(b, "01 0104 01000000 010400000000 010400000000 01 00000000 01 0000000000000000 e8030000 00")
	i := 0
	for b.Loop() {
		binary.LittleEndian.PutUint64(poll[25:], uint64(i%100)*1000) // strategy offset value
		i++
		if _, st := c.dispatch08(wire08.CmdPollMessages, poll); st != 0 {
			b.Fatal(st)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
}
