package iggyclient_test

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// TestRecoversFromBrokerRestart restarts the broker (keeping its data) while
// one client sends and another polls. Both must carry on by themselves, and
// every sent message must come out of the group at least once.
func TestRecoversFromBrokerRestart(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		srv := startBroker(t, proto, testkit.WithStream("demo", map[string]uint32{"orders": 2}))
		producerLogs, consumerLogs := &capturingHandler{}, &capturingHandler{}
		producer := dial(t, srv, func(o *iggyclient.Options) { o.Logger = slog.New(producerLogs) })
		consumer := dial(t, srv, func(o *iggyclient.Options) { o.Logger = slog.New(consumerLogs) })
		ctx := testContext(t)
		if err := consumer.EnsureConsumerGroup(ctx, "demo", "orders", "restart"); err != nil {
			t.Fatal(err)
		}

		const batches, perBatch = 40, 25
		const total = batches * perBatch
		var (
			wg       sync.WaitGroup
			received atomic.Int64
			seen     = make(map[string]int)
			sendErr  error
			pollErr  error
		)
		restarted := make(chan struct{})
		wg.Go(func() {
			for b := range batches {
				if b == batches/2 {
					<-restarted // the second half goes to the restarted broker
				}
				msgs := make([]iggyclient.OutMessage, perBatch)
				for i := range msgs {
					msgs[i].Payload = fmt.Appendf(nil, "m%d", b*perBatch+i)
				}
				if err := producer.Send(ctx, "demo", "orders", iggyclient.Partitioning{}, msgs); err != nil {
					sendErr = fmt.Errorf("batch %d: %w", b, err)
					return
				}
			}
		})
		wg.Go(func() {
			for len(seen) < total {
				batch, err := consumer.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: "restart", Count: 10, AutoCommit: true})
				if err != nil {
					pollErr = fmt.Errorf("after %d distinct messages: %w", len(seen), err)
					return
				}
				for _, m := range batch.Messages {
					seen[string(m.Payload)]++
				}
				received.Store(int64(len(seen)))
			}
		})

		// Restart once the consumer is well into the first half.
		testkit.Eventually(t, 30*time.Second, "the consumer a quarter through (or the test context over)", func() bool { return received.Load() >= total/4 || ctx.Err() != nil })
		if err := srv.Restart(true); err != nil {
			t.Fatalf("restart broker: %v", err)
		}
		close(restarted)
		wg.Wait()

		if sendErr != nil {
			t.Fatalf("send did not recover: %v", sendErr)
		}
		if pollErr != nil {
			t.Fatalf("poll did not recover: %v", pollErr)
		}
		for i := range total {
			if seen[fmt.Sprintf("m%d", i)] == 0 {
				t.Fatalf("message m%d was lost across the restart", i)
			}
		}
		// The reconnect itself rejoined the group: no poll had to find out
		// that the new connection was not a member.
		for name, logs := range map[string]*capturingHandler{"producer": producerLogs, "consumer": consumerLogs} {
			if !logs.saw("iggy connection lost, reconnecting") {
				t.Fatalf("the %s never reconnected: the restart did not hit it", name)
			}
		}
		if consumerLogs.saw("not a member of the consumer group, joining again") {
			t.Fatal("a poll had to rejoin the group: reconnecting did not rejoin it")
		}
	})
}
