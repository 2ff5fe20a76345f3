package testkit

import (
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

// FillTopic sends n JSON messages {"n":i} to partition 0 of stream/topic through the official SDK,
// in batches of 1,000.
func FillTopic(tb testing.TB, srv *devbroker.Server, stream, topic string, n int) {
	tb.Helper()
	FillPartitions(tb, srv, stream, topic, 1, n)
}

// SendMessages sends msgs to partition 0 of stream/topic through the official SDK, in batches of
// 1,000.
func SendMessages(tb testing.TB, srv *devbroker.Server, stream, topic string, msgs []iggcon.IggyMessage) {
	tb.Helper()
	cli := LoggedInClient(tb, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	for from := 0; from < len(msgs); from += 1000 {
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), msgs[from:min(from+1000, len(msgs))]); err != nil {
			tb.Fatalf("SDK send: %v", err)
		}
	}
}

// FillPartitions sends n JSON messages {"n":i} to stream/topic through the official SDK in batches
// of 1,000, batch b to partition b mod partitions, so each partition gets an equal share.
func FillPartitions(tb testing.TB, srv *devbroker.Server, stream, topic string, partitions uint32, n int) {
	tb.Helper()
	cli := LoggedInClient(tb, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	batch := make([]iggcon.IggyMessage, 0, 1000)
	for from := 0; from < n; from += 1000 {
		batch = batch[:0]
		for i := from; i < min(from+1000, n); i++ {
			m, err := iggcon.NewIggyMessage(fmt.Appendf(nil, `{"n":%d}`, i))
			if err != nil {
				tb.Fatal(err)
			}
			batch = append(batch, m)
		}
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(uint32(from/1000)%partitions), batch); err != nil {
			tb.Fatalf("SDK send: %v", err)
		}
	}
}
