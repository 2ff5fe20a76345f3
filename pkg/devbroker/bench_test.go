package devbroker_test

import (
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Throughput through the official SDK over loopback: 1,000-message batches of
// 100-byte payloads. Run: go test ./pkg/devbroker -run '^$' -bench SDK -benchmem

const (
	benchBatch   = 1000
	benchPayload = 100
)

func benchMessages(b *testing.B) []iggcon.IggyMessage {
	b.Helper()
	payload := make([]byte, benchPayload)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	msgs := make([]iggcon.IggyMessage, benchBatch)
	for i := range msgs {
		m, err := iggcon.NewIggyMessage(payload)
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = m
	}
	return msgs
}

func benchTopic(b *testing.B, retain uint64) (iggcon.Client, iggcon.Identifier, iggcon.Identifier) {
	b.Helper()
	srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"events": 1}), testkit.WithRetention(retain))
	cli := testkit.LoggedInClient(b, srv)
	stream, _ := iggcon.NewIdentifier(uint32(0))
	topic, _ := iggcon.NewIdentifier(uint32(0))
	return cli, stream, topic
}

// retentions: keeping everything (the default) grows the heap with every
// batch; a cap reuses dropped batches' memory.
var retentions = []struct {
	name  string
	bytes uint64
}{{"keep-all", 0}, {"retain-64MiB", 64 << 20}}

func BenchmarkSDKSend(b *testing.B) {
	for _, r := range retentions {
		b.Run(r.name, func(b *testing.B) {
			cli, stream, topic := benchTopic(b, r.bytes)
			msgs := benchMessages(b)
			b.SetBytes(benchBatch * benchPayload)
			for b.Loop() {
				if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkSDKPoll(b *testing.B) {
	cli, stream, topic := benchTopic(b, 0)
	msgs := benchMessages(b)
	const batches = 100
	for range batches {
		if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), msgs); err != nil {
			b.Fatal(err)
		}
	}
	consumer := iggcon.DefaultConsumer()
	partition := uint32(0)
	b.SetBytes(benchBatch * benchPayload)
	i := 0
	for b.Loop() {
		offset := uint64(i%batches) * benchBatch
		i++
		polled, err := cli.PollMessages(stream, topic, consumer, iggcon.OffsetPollingStrategy(offset), benchBatch, false, &partition)
		if err != nil {
			b.Fatal(err)
		}
		if len(polled.Messages) != benchBatch {
			b.Fatalf("polled %d messages, want %d", len(polled.Messages), benchBatch)
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
}
