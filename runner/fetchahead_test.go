package runner_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A runner killed with SIGKILL while its plugin holds one batch and the next is already fetched
// ahead stored neither: the group's offset is the last batch the plugin returned for, and the
// next runner delivers both the batch that was in the plugin and the one fetched ahead.
func TestSinkKill9WithABatchFetchedAhead(t *testing.T) {
	testkit.OverProtocols(t, sinkKill9WithABatchFetchedAhead)
}

func sinkKill9WithABatchFetchedAhead(t *testing.T, protocol string) {
	const total, batch = 1000, 100
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", total)
	stream := "batch_length = 100\npoll_interval = \"0\""
	group := config.DefaultConsumerGroup("ahead")
	// The fault sink blocks for good in its second consume: batch 2 (offsets 100-199) is in the
	// plugin, and the poll ahead has fetched batch 3 (200-299) meanwhile.
	first := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sinkTOML("ahead", testkit.PluginPath(t, "fault"), "demo", "events", stream, "hang_on_batch = 2")))
	first.WaitStatus(t, "running", waitLong)
	first.WaitUntil(t, waitLong, "batch 3 fetched ahead while batch 2 is in the plugin", func() bool {
		off, ok, err := srv.LastPolled("demo", "events", group, 0)
		return err == nil && ok && off >= 3*batch-1
	})
	first.Kill9()
	if off, ok, err := groupOffset(t, srv, "demo", "events", group); err != nil || !ok || off != batch-1 {
		t.Fatalf("after the kill the group's offset is %d (stored %v, %v); want %d, batch 1's last: nothing the plugin did not return for is stored", off, ok, err, batch-1)
	}

	second := testkit.StartRunner(t, withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sinkTOML("ahead", testkit.PluginPath(t, "stdout_sink"), "demo", "events", stream, "print_payload = true")))
	second.WaitStatus(t, "running", waitLong)
	second.WaitUntil(t, waitLong, "the rest of the topic delivered", func() bool {
		return len(offsetsSeen(second.Logs())) >= total-batch
	})
	seen := offsetsSeen(second.Logs())
	for off := uint64(batch); off < total; off++ {
		if seen[off] == 0 {
			t.Fatalf("offset %d (batch %d) never reached the second runner's plugin", off, off/batch+1)
		}
	}
	if seen[batch-1] != 0 {
		t.Errorf("the second runner re-read offset %d, which the first stored", batch-1)
	}
	stopRunner(t, second)
}
