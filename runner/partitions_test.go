package runner_test

import (
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Partitions added to, and deleted from, a topic while its connectors run (docs/pipeline.md
// §1.9): sinks take the new partitions up without a restart, a balanced source spreads over them,
// and a sink loses nothing of the partitions that remain when some are deleted from under it.

// sendNumbers sends {"n":i} for i in [from, to) to one partition with the official SDK.
func sendNumbers(t testing.TB, srv *devbroker.Server, partition uint32, from, to int) {
	t.Helper()
	msgs := make([]iggcon.IggyMessage, 0, to-from)
	for i := from; i < to; i++ {
		m, err := iggcon.NewIggyMessage(fmt.Appendf(nil, `{"n":%d}`, i))
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	if err := testkit.LoggedInClient(t, srv).SendMessages(sid, tid, iggcon.PartitionId(partition), msgs); err != nil {
		t.Fatalf("send to partition %d: %v", partition, err)
	}
}

// changePartitions adds (n > 0) or deletes (n < 0) partitions of demo/events with the SDK.
func changePartitions(t testing.TB, srv *devbroker.Server, n int) {
	t.Helper()
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	cli := testkit.LoggedInClient(t, srv)
	var err error
	if n > 0 {
		err = cli.CreatePartitions(sid, tid, uint32(n))
	} else {
		err = cli.DeletePartitions(sid, tid, uint32(-n))
	}
	if err != nil {
		t.Fatalf("change partitions by %d: %v", n, err)
	}
}

// allSeen reports whether every number in [from, to) is in seen.
func allSeen(seen map[int]int, from, to int) bool {
	for i := from; i < to; i++ {
		if seen[i] == 0 {
			return false
		}
	}
	return true
}

// One sink runner on a one-partition topic: two partitions added while it runs are consumed
// without a restart, messages sent to them and to the first alike.
func TestSinkConsumesPartitionsAddedWhileRunning(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		p := testkit.StartRunner(t, append(sinkReplicaEnv(t, srv, "grow"), testkit.ProtocolEnv(protocol)))
		p.WaitStatus(t, "running", waitLong)
		sendNumbers(t, srv, 0, 0, 1000)
		p.WaitUntil(t, waitLong, "the first partition's messages", func() bool { return allSeen(numbersSeen(p.Logs()), 0, 1000) })

		changePartitions(t, srv, 2)
		for part := range uint32(3) {
			sendNumbers(t, srv, part, 1000+int(part)*1000, 2000+int(part)*1000)
		}
		p.WaitUntil(t, waitLong, "the messages of all three partitions", func() bool { return allSeen(numbersSeen(p.Logs()), 0, 4000) })
		if p.Exited() {
			t.Fatalf("the runner exited; logs:\n%s", p.Logs())
		}
		stopRunner(t, p)
	})
}

// Three replicas of one sink on a one-partition topic: one owns it, two wait. Two partitions
// added while they run are dealt to the waiting ones, and all three consume.
func TestSinkReplicasTakeUpPartitionsAddedWhileRunning(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		var replicas []*testkit.RunnerProc
		for range 3 {
			p := testkit.StartRunner(t, append(sinkReplicaEnv(t, srv, "spread"), testkit.ProtocolEnv(protocol)))
			p.WaitStatus(t, "running", waitLong)
			replicas = append(replicas, p)
		}
		changePartitions(t, srv, 2)
		replicas[0].WaitUntil(t, waitLong, "one partition per replica", func() bool {
			return covers(groupAssignment(t, srv, "spread"), 3, 3)
		})
		for part := range uint32(3) {
			sendNumbers(t, srv, part, int(part)*3000, int(part+1)*3000)
		}
		logs := func() []string {
			var out []string
			for _, p := range replicas {
				out = append(out, p.Logs())
			}
			return out
		}
		replicas[0].WaitUntil(t, waitLong, "every message delivered", func() bool { return allSeen(numbersSeen(logs()...), 0, 9000) })
		for i, p := range replicas {
			if len(numbersSeen(p.Logs())) == 0 {
				t.Errorf("replica %d consumed nothing", i)
			}
			stopRunner(t, p)
		}
	})
}

// A source sending balanced batches to a one-partition topic spreads over two partitions added
// while it runs.
func TestBalancedSourceSpreadsOverPartitionsAddedWhileRunning(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		p := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()),
			sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events", "", "messages_per_batch = 10\ninterval_ms = 5")))
		p.WaitStatus(t, "running", waitLong)
		perPartition := func() map[uint32]int { return testkit.PartitionCounts(t, srv, "demo", "events") }
		p.WaitUntil(t, waitLong, "batches in the first partition", func() bool { return perPartition()[0] >= 50 })
		changePartitions(t, srv, 2)
		p.WaitUntil(t, waitLong, "batches in the added partitions", func() bool {
			c := perPartition()
			return c[1] >= 50 && c[2] >= 50
		})
		stopRunner(t, p)
	})
}

// One sink on a three-partition topic with a backlog in each: the last partition deleted from
// under it takes its messages along, as the server deletes them, and every message of the other
// two still reaches the plugin; the sink keeps running.
func TestSinkLosesNothingOfTheRestWhenPartitionsAreDeleted(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, protocol string) {
		const each = 20_000
		srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 3}))
		for part := range uint32(3) {
			sendNumbers(t, srv, part, int(part)*each, int(part+1)*each)
		}
		p := testkit.StartRunner(t, append(sinkReplicaEnv(t, srv, "shrink"), testkit.ProtocolEnv(protocol)))
		p.WaitStatus(t, "running", waitLong)
		p.WaitUntil(t, waitLong, "the sink under way", func() bool { return len(numbersSeen(p.Logs())) >= 2000 })
		changePartitions(t, srv, -1)
		p.WaitUntil(t, waitLong, "every message of the remaining partitions", func() bool {
			return allSeen(numbersSeen(p.Logs()), 0, 2*each)
		})
		sendNumbers(t, srv, 1, 3*each, 3*each+100)
		p.WaitUntil(t, waitLong, "a message sent after the deletion", func() bool {
			return allSeen(numbersSeen(p.Logs()), 3*each, 3*each+100)
		})
		if p.Exited() {
			t.Fatalf("the runner exited; logs:\n%s", p.Logs())
		}
		stopRunner(t, p)
	})
}
