package runner_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// stdoutNumber matches the stdout sink's line for a {"n":i} payload (the log quotes it: {\"n\":i}).
var stdoutNumber = regexp.MustCompile(`Json\(\{\\?"n\\?":(\d+)\}\)`)

// numbersSeen counts the {"n":i} payloads the stdout sink logged, over all logs.
func numbersSeen(logs ...string) map[int]int {
	seen := map[int]int{}
	for _, l := range logs {
		for _, m := range stdoutNumber.FindAllStringSubmatch(l, -1) {
			n, _ := strconv.Atoi(m[1])
			seen[n]++
		}
	}
	return seen
}

// groupAssignment is each member's partition count in the sink's consumer group, read with the SDK.
func groupAssignment(t testing.TB, srv *devbroker.Server, key string) []int {
	t.Helper()
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier("demo")
	tid, _ := iggcon.NewIdentifier("events")
	gid, _ := iggcon.NewIdentifier(config.DefaultConsumerGroup(key))
	g, err := cli.GetConsumerGroup(sid, tid, gid)
	if err != nil || g == nil {
		t.Fatalf("consumer group of %s: %v", key, err)
	}
	var out []int
	for _, m := range g.Members {
		out = append(out, len(m.Partitions))
	}
	return out
}

// covers reports whether the members hold want partitions between them, each at least one.
func covers(assignment []int, members, want int) bool {
	sum := 0
	for _, n := range assignment {
		if n == 0 {
			return false
		}
		sum += n
	}
	return len(assignment) == members && sum == want
}

func sinkReplicaEnv(t testing.TB, srv *devbroker.Server, key string) []string {
	env := withConfig(baseEnv(srv, t.TempDir()), sinkTOML(key, testkit.PluginPath(t, "stdout_sink"), "demo", "events",
		"batch_length = 1000\npoll_interval = \"1ms\"", "print_payload = true"))
	// Every record's line is the evidence here, at far more lines a second than the plugin log limit.
	return append(env, "IGGY_CONNECTOR_PLUGIN_LOG_RATE=0")
}

func processedBy(t testing.TB, ps ...*testkit.RunnerProc) uint64 {
	var sum uint64
	for _, p := range ps {
		sum += testkit.OrZero(p.Stats(t).MessagesProcessed)
	}
	return sum
}

// Three runners of one sink key share a three-partition topic through their consumer group. One
// is killed with SIGKILL midway: the server hands its partition to the survivors, every record
// reaches the plugin, and at most the killed runner's batch in flight is delivered twice.
func TestSinkReplicasShareTheTopicAndSurviveAKill(t *testing.T) {
	testkit.OverProtocols(t, sinkReplicasShareTheTopicAndSurviveAKill)
}

func sinkReplicasShareTheTopicAndSurviveAKill(t *testing.T, protocol string) {
	const total, batch = 300_000, 1000
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 3}))
	testkit.FillPartitions(t, srv, "demo", "events", 3, total)
	var replicas []*testkit.RunnerProc
	for range 3 {
		p := testkit.StartRunner(t, append(sinkReplicaEnv(t, srv, "scaled"), testkit.ProtocolEnv(protocol)))
		p.WaitStatus(t, "running", waitLong)
		replicas = append(replicas, p)
	}
	// A joining replica gets its partition once the owner committed what it polled there.
	replicas[0].WaitUntil(t, waitLong, "one partition per replica", func() bool {
		return covers(groupAssignment(t, srv, "scaled"), 3, 3)
	})
	replicas[0].WaitUntil(t, waitLong, "a third of the records processed", func() bool {
		return processedBy(t, replicas...) >= total/3
	})
	victim, survivors := replicas[1], []*testkit.RunnerProc{replicas[0], replicas[2]}
	victim.Kill9()
	killed := time.Now()
	victim.WaitUntil(t, waitLong, "the survivors to hold all three partitions", func() bool {
		return covers(groupAssignment(t, srv, "scaled"), 2, 3)
	})
	t.Logf("rebalance: the survivors held all partitions %s after the kill", time.Since(killed).Round(time.Millisecond))

	byVictim := len(numbersSeen(victim.Logs()))
	survivors[0].WaitUntil(t, 40*time.Second, "the survivors to process the rest", func() bool {
		return processedBy(t, survivors...) >= uint64(total-byVictim)
	})
	t.Logf("all records processed %s after the kill", time.Since(killed).Round(time.Millisecond))
	// Processed counts move right after a plugin returned; its lines may still be on their way.
	var seen map[int]int
	testkit.Within(10*time.Second, func() bool {
		seen = numbersSeen(victim.Logs(), survivors[0].Logs(), survivors[1].Logs())
		return len(seen) >= total
	}) // a shortfall is reported below, record by record
	duplicates := -total
	for n := range total {
		if seen[n] == 0 {
			t.Fatalf("record %d never reached a sink plugin (%d of %d seen)", n, len(seen), total)
		}
		duplicates += seen[n]
	}
	t.Logf("duplicates: %d (one batch is %d)", duplicates, batch)
	if duplicates > batch {
		t.Errorf("%d records delivered twice; a killed replica repeats at most its batch in flight (%d)", duplicates, batch)
	}
	for i, p := range survivors {
		if testkit.OrZero(p.Stats(t).MessagesProcessed) == 0 {
			t.Errorf("survivor %d processed nothing", i)
		}
	}
}

// A sink replica that joins a running one gets partitions at once, and records sent afterwards
// reach both; when it leaves again, the first one takes everything back.
func TestLateSinkReplicaGetsPartitions(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 3}))
	first := testkit.StartRunner(t, sinkReplicaEnv(t, srv, "late"))
	first.WaitStatus(t, "running", waitLong)
	if a := groupAssignment(t, srv, "late"); !covers(a, 1, 3) {
		t.Fatalf("one replica holds %v, want all three partitions", a)
	}
	late := testkit.StartRunner(t, sinkReplicaEnv(t, srv, "late"))
	late.WaitStatus(t, "running", waitLong)
	late.WaitUntil(t, waitLong, "the late replica to get partitions", func() bool {
		return covers(groupAssignment(t, srv, "late"), 2, 3)
	})
	const total = 30_000
	testkit.FillPartitions(t, srv, "demo", "events", 3, total)
	first.WaitUntil(t, waitLong, "every record processed", func() bool {
		return len(numbersSeen(first.Logs(), late.Logs())) >= total
	})
	if n := len(numbersSeen(late.Logs())); n == 0 {
		t.Fatalf("the late replica processed nothing")
	}
	stopRunner(t, late)
	first.WaitUntil(t, waitLong, "the first replica to take all partitions back", func() bool {
		return covers(groupAssignment(t, srv, "late"), 1, 3)
	})
}
