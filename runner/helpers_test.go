package runner_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// baseEnv is what every runner of a test gets: the broker, a state dir and a fast reconnect.
func baseEnv(srv *devbroker.Server, stateDir string) []string {
	return []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + srv.Addr(),
		"IGGY_CONNECTORS_IGGY_USERNAME=iggy",
		"IGGY_CONNECTORS_IGGY_PASSWORD=iggy",
		"IGGY_CONNECTORS_STATE_PATH=" + stateDir,
		"IGGY_CONNECTOR_RECONNECT_MIN=20ms",
		"IGGY_CONNECTOR_RECONNECT_MAX=200ms",
	}
}

// sinkTOML is a sink connector file for one stream and topic.
func sinkTOML(key, path, stream, topic, streamExtra, pluginConfig string) string {
	return fmt.Sprintf(`type = "sink"
key = %q
enabled = true
version = 1
name = "test sink %s"
path = %q

[[streams]]
stream = %q
topics = [%q]
schema = "json"
%s

[plugin_config]
%s
`, key, key, path, stream, topic, streamExtra, pluginConfig)
}

// sourceTOML is a source connector file for one target stream and topic.
func sourceTOML(key, path, stream, topic, streamExtra, pluginConfig string) string {
	return fmt.Sprintf(`type = "source"
key = %q
enabled = true
version = 1
name = "test source %s"
path = %q

[[streams]]
stream = %q
topic = %q
schema = "json"
%s

[plugin_config]
%s
`, key, key, path, stream, topic, streamExtra, pluginConfig)
}

func withConfig(env []string, toml string) []string {
	return append(append([]string{}, env...), "IGGY_CONNECTOR_CONFIG="+toml)
}

// readTopic reads every message of the topic's partition 0 through the official SDK.
func readTopic(t testing.TB, srv *devbroker.Server, stream, topic string) []iggcon.IggyMessage {
	t.Helper()
	cli := testkit.LoggedInClient(t, srv)
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	consumer := iggcon.DefaultConsumer()
	var all []iggcon.IggyMessage
	partition := uint32(0)
	for {
		polled, err := cli.PollMessages(sid, tid, consumer, iggcon.OffsetPollingStrategy(uint64(len(all))), 1000, false, &partition)
		if err != nil {
			t.Fatalf("SDK poll %s/%s at offset %d: %v", stream, topic, len(all), err)
		}
		if len(polled.Messages) == 0 {
			return all
		}
		all = append(all, polled.Messages...)
	}
}

// fillTopic sends n JSON messages {"n":i} to the topic through the official SDK, in batches of 1000.
func fillTopic(t testing.TB, srv *devbroker.Server, stream, topic string, n int) {
	t.Helper()
	testkit.FillTopic(t, srv, stream, topic, n)
}

var stdoutOffsetLine = regexp.MustCompile(`Message offset: (\d+), payload`)

// offsetsSeen collects the offsets the stdout sink logged (one line per message it received).
func offsetsSeen(logs ...string) map[uint64]int {
	seen := map[uint64]int{}
	for _, l := range logs {
		for _, m := range stdoutOffsetLine.FindAllStringSubmatch(l, -1) {
			off, _ := strconv.ParseUint(m[1], 10, 64)
			seen[off]++
		}
	}
	return seen
}

const waitLong = 30 * time.Second

// checkSequence checks the fault source's {"seq":N} messages: every sequence number from 0 to the
// highest is there (no gap), and at most maxDuplicates messages repeat one. It returns the highest
// sequence number and the number of duplicates.
func checkSequence(t testing.TB, msgs []iggcon.IggyMessage, maxDuplicates int) (maxSeq, duplicates int) {
	t.Helper()
	counts := map[int]int{}
	maxSeq = -1
	for _, m := range msgs {
		var body struct {
			Seq int `json:"seq"`
		}
		if err := json.Unmarshal(m.Payload, &body); err != nil {
			t.Fatalf("payload %q: %v", m.Payload, err)
		}
		counts[body.Seq]++
		maxSeq = max(maxSeq, body.Seq)
	}
	for seq := 0; seq <= maxSeq; seq++ {
		switch n := counts[seq]; {
		case n == 0:
			t.Fatalf("sequence %d is missing from the topic (max %d)", seq, maxSeq)
		case n > 1:
			duplicates += n - 1
		}
	}
	if duplicates > maxDuplicates {
		t.Errorf("%d duplicated messages; a restart from saved state repeats at most the batch in flight (%d)", duplicates, maxDuplicates)
	}
	return maxSeq, duplicates
}

// stopRunner stops p with SIGTERM and checks it exits 0.
func stopRunner(tb testing.TB, p *testkit.RunnerProc) {
	tb.Helper()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		tb.Fatal(err)
	}
	if code, err := p.Wait(15 * time.Second); err != nil || code != 0 {
		tb.Fatalf("runner pid %d after SIGTERM: exit %d, %v; logs:\n%s", p.Pid(), code, err, p.Logs())
	}
}

// baseEnvOver is baseEnv speaking the given Iggy protocol.
func baseEnvOver(protocol string, srv *devbroker.Server, stateDir string) []string {
	return append(baseEnv(srv, stateDir), testkit.ProtocolEnv(protocol))
}
