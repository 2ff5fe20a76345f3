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
	cli := LoggedInClient(tb, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	for from := 0; from < n; from += 1000 {
		batch := make([]iggcon.IggyMessage, 0, 1000)
		for i := from; i < min(from+1000, n); i++ {
			m, err := iggcon.NewIggyMessage([]byte(fmt.Sprintf(`{"n":%d}`, i)))
			if err != nil {
				tb.Fatal(err)
			}
			batch = append(batch, m)
		}
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch); err != nil {
			tb.Fatalf("SDK send: %v", err)
		}
	}
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
