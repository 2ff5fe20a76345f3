package iggyclient_test

import (
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const (
	benchBatch       = 1000
	benchPayloadSize = 100
	// Poll benchmarks read a pre-filled topic through a fresh consumer
	// group every benchGroupSpan polls, so the topic size stays bounded.
	benchGroupSpan = 100
)

func benchPayloads() [][]byte {
	payloads := make([][]byte, benchBatch)
	for i := range payloads {
		payloads[i] = make([]byte, benchPayloadSize)
		payloads[i][0] = byte(i)
	}
	return payloads
}

func reportMsgsPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)*benchBatch/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkSend sends 1,000 messages of 100 bytes per op, through this
// package over each protocol and through the bare SDK (0.8), all building
// their messages per op.
func BenchmarkSend(b *testing.B) {
	payloads := benchPayloads()
	for _, proto := range testkit.Protocols {
		b.Run("iggyclient-"+proto, func(b *testing.B) {
			srv := startBroker(b, proto, testkit.WithStream("bench", map[string]uint32{"t": 1}))
			c := dial(b, srv)
			ctx := testContext(b)
			msgs := make([]iggyclient.OutMessage, benchBatch)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for i := range msgs {
					msgs[i] = iggyclient.OutMessage{Payload: payloads[i]}
				}
				if err := c.Send(ctx, "bench", "t", iggyclient.Partitioning{}, msgs); err != nil {
					b.Fatal(err)
				}
			}
			reportMsgsPerSecond(b)
		})
	}
	b.Run("sdk", func(b *testing.B) {
		srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"t": 1}))
		sdk := testkit.LoggedInClient(b, srv)
		stream, _ := iggcon.NewIdentifier("bench")
		topic, _ := iggcon.NewIdentifier("t")
		msgs := make([]iggcon.IggyMessage, benchBatch)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			for i := range msgs {
				m, err := iggcon.NewIggyMessage(payloads[i])
				if err != nil {
					b.Fatal(err)
				}
				msgs[i] = m
			}
			if err := sdk.SendMessages(stream, topic, iggcon.None(), msgs); err != nil {
				b.Fatal(err)
			}
		}
		reportMsgsPerSecond(b)
	})
}

// BenchmarkPoll polls 1,000 messages of 100 bytes per op as a consumer
// group ("next", auto-commit), through this package over each protocol (the
// topic filled over the same protocol, so the broker serves its own format)
// and through the bare SDK (0.8).
func BenchmarkPoll(b *testing.B) {
	payloads := benchPayloads()
	fill := func(b *testing.B, proto string) *devbroker.Server {
		srv := startBroker(b, proto, testkit.WithStream("bench", map[string]uint32{"t": 1}))
		c := dial(b, srv)
		msgs := make([]iggyclient.OutMessage, benchBatch)
		for i := range msgs {
			msgs[i].Payload = payloads[i]
		}
		for range benchGroupSpan {
			if err := c.Send(testContext(b), "bench", "t", iggyclient.Partitioning{}, msgs); err != nil {
				b.Fatal(err)
			}
		}
		return srv
	}
	for _, proto := range testkit.Protocols {
		for _, reuse := range []bool{false, true} {
			name := "iggyclient-" + proto
			if reuse {
				name = "iggyclient-reuse-" + proto
			}
			b.Run(name, func(b *testing.B) {
				c := dial(b, fill(b, proto))
				ctx := testContext(b)
				var bufs iggyclient.PollBuffers
				b.ReportAllocs()
				b.ResetTimer()
				for n := range b.N {
					group := fmt.Sprintf("g%d", n/benchGroupSpan)
					if n%benchGroupSpan == 0 {
						if err := c.EnsureConsumerGroup(ctx, "bench", "t", group); err != nil {
							b.Fatal(err)
						}
					}
					var buf *iggyclient.PollBuffers
					if reuse {
						buf = &bufs
					}
					batch, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "bench", Topic: "t", Group: group, Count: benchBatch, AutoCommit: true, Reuse: buf})
					if err != nil {
						b.Fatal(err)
					}
					if len(batch.Messages) != benchBatch {
						b.Fatalf("poll %d returned %d messages, want %d", n, len(batch.Messages), benchBatch)
					}
				}
				reportMsgsPerSecond(b)
			})
		}
	}
	b.Run("sdk", func(b *testing.B) {
		srv := testkit.StartBroker(b, testkit.WithStream("bench", map[string]uint32{"t": 1}))
		sdk := testkit.LoggedInClient(b, srv)
		stream, _ := iggcon.NewIdentifier("bench")
		topic, _ := iggcon.NewIdentifier("t")
		for range benchGroupSpan {
			msgs := make([]iggcon.IggyMessage, benchBatch)
			for i := range msgs {
				msgs[i], _ = iggcon.NewIggyMessage(payloads[i])
			}
			if err := sdk.SendMessages(stream, topic, iggcon.None(), msgs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for n := range b.N {
			name := fmt.Sprintf("g%d", n/benchGroupSpan)
			group, _ := iggcon.NewIdentifier(name)
			if n%benchGroupSpan == 0 {
				if _, err := sdk.CreateConsumerGroup(stream, topic, name); err != nil {
					b.Fatal(err)
				}
				if err := sdk.JoinConsumerGroup(stream, topic, group); err != nil {
					b.Fatal(err)
				}
			}
			polled, err := sdk.PollMessages(stream, topic, iggcon.NewGroupConsumer(group), iggcon.NextPollingStrategy(), benchBatch, true, nil)
			if err != nil {
				b.Fatal(err)
			}
			if len(polled.Messages) != benchBatch {
				b.Fatalf("poll %d returned %d messages, want %d", n, len(polled.Messages), benchBatch)
			}
		}
		reportMsgsPerSecond(b)
	})
}

// BenchmarkEmptyPoll is an idle sink's poll: a consumer group's poll of an empty topic into
// reused buffers, under a cancellable context as the runner's. The broker runs in this process,
// so allocs/op counts both sides.
func BenchmarkEmptyPoll(b *testing.B) {
	for _, proto := range testkit.Protocols {
		b.Run("iggyclient-"+proto, func(b *testing.B) {
			c := dial(b, startBroker(b, proto, testkit.WithStream("bench", map[string]uint32{"t": 1})))
			ctx := testContext(b)
			if err := c.EnsureConsumerGroup(ctx, "bench", "t", "g"); err != nil {
				b.Fatal(err)
			}
			var bufs iggyclient.PollBuffers
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				batch, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "bench", Topic: "t", Group: "g", Count: benchBatch, Reuse: &bufs})
				if err != nil || len(batch.Messages) != 0 {
					b.Fatalf("poll: %d messages, %v", len(batch.Messages), err)
				}
			}
		})
	}
}
