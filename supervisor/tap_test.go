package supervisor_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// stageTransform adds a field to every record, so delivered payloads differ from the broker's.
const stageTransform = `
[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "stage"
value.static = "tapped"
`

const tapKey = "k3y"

var tapAuth = http.Header{"Api-Key": {tapKey}}

// messageEvents reads n message events, failing on anything else.
func messageEvents(t *testing.T, s *testkit.EventStream, n int) []tap.Event {
	t.Helper()
	var out []tap.Event
	for len(out) < n {
		m := s.Next(t, waitLong)
		if m.Event != tap.EventMessage {
			t.Fatalf("after %d messages: %s %s", len(out), m.Event, m.Data)
		}
		var e tap.Event
		if err := json.Unmarshal(m.Data, &e); err != nil {
			t.Fatalf("%s: %v", m.Data, err)
		}
		out = append(out, e)
	}
	return out
}

// checkHeads sends HEAD to each stream route, more times than a runner has taps: each answer is
// 200 with the headers of an event stream and nothing else, the connection free for the next
// request at once.
func checkHeads(t *testing.T, raw testkit.RawHTTP, paths ...string) {
	t.Helper()
	for _, path := range paths {
		for range tap.DefaultMaxSubscribers + 1 {
			head, next := raw.HeadThen(t, path, "/health", waitLong)
			if head.StatusCode != http.StatusOK || head.Header.Get("Content-Type") != tap.ContentType || head.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("HEAD %s: %d %v, want 200 and a stream's headers", path, head.StatusCode, head.Header)
			}
			if next != http.StatusOK {
				t.Fatalf("HEAD %s held its connection: the next request got %d (0: no answer)", path, next)
			}
		}
	}
}

// readAll reads every message of partition 0 of stream/topic through the official SDK.
func readPartition0(t *testing.T, cli iggcon.Client, stream, topic string, n int) []iggcon.IggyMessage {
	t.Helper()
	sid, _ := iggcon.NewIdentifier(stream)
	tid, _ := iggcon.NewIdentifier(topic)
	partition := uint32(0)
	polled, err := cli.PollMessages(sid, tid, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(0), uint32(n), false, &partition)
	if err != nil {
		t.Fatal(err)
	}
	return polled.Messages
}

// The supervisor relays a runner's tap event by event: the delivered payloads are the broker's
// records as transformed, the limit ends the stream, the key is needed, a fifth tap is refused;
// the connector's logs hold runner, plugin and supervisor lines and survive a runner's crash.
func TestSupervisorTapAndLogs(t *testing.T) { testkit.OverProtocols(t, supervisorTapAndLogs) }

func supervisorTapAndLogs(t *testing.T, protocol string) {
	const total, limit = 100, 60
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+tapKey+`"`+"\nwrite_timeout = \"1s\"") // streams outlive it
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("stdout_sink"), "demo", "events", stageTransform)+
		"\n[plugin_config]\nprint_payload = true\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)
	waitFor(t, p, waitLong, "sink/out running", func() bool { return statsOf(t, p, tapAuth)["sink/out"].Status == "running" })

	testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{
		testkit.Call("GET", "/sinks/out/tap", nil, 401, ""),
		testkit.Call("GET", "/sinks/out/logs", nil, 401, ""),
		testkit.Call("GET", "/sinks/nope/tap", tapAuth, 404, "sink_not_found"),
		testkit.Call("GET", "/sinks/out/tap?point=sent", tapAuth, 400, "point"),
		testkit.Call("GET", "/sinks/out/logs?tail=x", tapAuth, 400, "tail"),
	})
	stream := testkit.OpenStream(t, http.DefaultClient, p.URL("/sinks/out/tap?point=delivered&rate=100000&limit="+strconv.Itoa(limit)), tapAuth)
	testkit.FillTopic(t, broker, "demo", "events", total)
	events := messageEvents(t, stream, limit)
	if m := stream.Next(t, waitLong); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"limit"}` {
		t.Fatalf("after the limit: %s %s", m.Event, m.Data)
	}
	broker08 := testkit.LoggedInClient(t, broker)
	stored := readPartition0(t, broker08, "demo", "events", total)
	for _, e := range events {
		m := stored[e.Offset]
		want := strings.TrimSuffix(string(m.Payload), "}") + `,"stage":"tapped"}`
		if e.Point != tap.PointDelivered || string(e.Payload) != want || e.ID != tap.IDBytes(m.Header.Id) {
			t.Fatalf("offset %d: delivered %s (id %s); the broker holds %s (id %s)", e.Offset, e.Payload, e.ID, m.Payload, tap.IDBytes(m.Header.Id))
		}
	}

	// HEAD gets the headers of the stream and no stream; it holds none of the runner's taps.
	checkHeads(t, testkit.RawHTTP{Network: "tcp", Addr: p.Addr, Header: tapAuth}, "/sinks/out/tap", "/sinks/out/logs?follow=true")
	for range 4 {
		testkit.OpenStream(t, http.DefaultClient, p.URL("/sinks/out/tap"), tapAuth)
	}
	if head, _ := (testkit.RawHTTP{Network: "tcp", Addr: p.Addr, Header: tapAuth}).HeadThen(t, "/sinks/out/tap", "/health", waitLong); head.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("HEAD of a fifth tap: %d, want 429 as a GET gets", head.StatusCode)
	}
	testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{testkit.Call("GET", "/sinks/out/tap", tapAuth, 429, "at most 4 taps")})

	// Logs: the runner's own lines, its plugin's and the supervisor's about it, oldest first.
	origins := func() map[string]int {
		_, body, err := p.Do(http.MethodGet, "/sinks/out/logs", tapAuth, "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
			var r logging.Record
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			seen[r.Origin+": "+r.Message]++
			seen[r.Origin]++
		}
		return seen
	}
	seen := origins()
	if seen["supervisor: runner started"] != 1 || seen["runner: sink plugin opened"] != 1 || seen[logging.OriginPlugin] == 0 {
		t.Fatalf("origins of the records: %v", seen)
	}
	follow := testkit.OpenStream(t, http.DefaultClient, p.URL("/sinks/out/logs?follow=true&tail=1"), tapAuth)
	opened := time.Now()
	if m := follow.Next(t, waitLong); m.Event != tap.EventLog {
		t.Fatalf("follow: %s %s", m.Event, m.Data)
	}
	// The stream must outlive http.write_timeout (1 s): let that much time pass (what is tested
	// is time passing, not a state reached) before the records it must still carry.
	time.Sleep(time.Until(opened.Add(1500 * time.Millisecond)))
	// A runner's crash: the ring lives in the supervisor and keeps the first run's lines.
	pid := statsOf(t, p, tapAuth)["sink/out"].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, waitLong, "the runner restarted", func() bool {
		c := statsOf(t, p, tapAuth)["sink/out"]
		return c.Restarts == 1 && c.Status == "running"
	})
	waitFor(t, p, waitLong, "both runs in the logs", func() bool {
		seen := origins()
		return seen["runner: sink plugin opened"] == 2 && seen["supervisor: runner exited"] == 1
	})
	for {
		m := follow.Next(t, waitLong) // the follow goes on across the restart
		if m.Event != tap.EventLog {
			t.Fatalf("follow: %s %s", m.Event, m.Data)
		}
		if strings.Contains(string(m.Data), `"message":"restarting runner"`) {
			break
		}
	}
	if c := statsOf(t, p, tapAuth)["sink/out"]; c.Errors != 0 {
		t.Fatalf("sink errors %d", c.Errors)
	}
}

// With [http] tap = false the supervisor answers 403 naming the key.
func TestSupervisorTapOff(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "tap = false")
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", ""))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	testkit.CheckCalls(t, "http://"+p.Addr, []testkit.HTTPCall{testkit.Call("GET", "/sinks/out/tap", nil, 403, "IGGY_CONNECTORS_HTTP_TAP")})
}

// In attach mode the supervisor merges the taps and logs of every replica, each event naming its
// replica; a replica that went away is reported in an event, not as a failure of the stream.
func TestFleetTapAndLogsMergeReplicas(t *testing.T) {
	const total = 2000 // two batches of 1,000: one to each partition, so each replica gets one
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 2}))
	cfg := strings.Replace(sinkFile("shared", testkit.PluginPath(t, "stdout_sink"), "demo", "events", ""), "batch_length = 50", "batch_length = 20", 1) +
		"\n[plugin_config]\nprint_payload = false\n"
	_, oneAt := startFleetRunner(t, broker, cfg)
	two, twoAt := startFleetRunner(t, broker, cfg)
	waitRunnerStatus(t, oneAt, "running")
	waitRunnerStatus(t, twoAt, "running")
	base := startAttached(t, broker, oneAt, twoAt)
	waitUntil(t, "both replicas in the fleet view", func() bool {
		var list []fleetEntry
		getBody(t, base+"/sinks", &list)
		return len(list) == 1 && len(list[0].Replicas) == 2 && list[0].replica(twoAt).Status == "running"
	})

	addr := strings.TrimPrefix(base, "http://")
	checkHeads(t, testkit.RawHTTP{Network: "tcp", Addr: addr, Header: http.Header{"Host": {addr}}}, "/sinks/shared/tap", "/sinks/shared/logs?follow=true")
	stream := testkit.OpenStream(t, http.DefaultClient, base+"/sinks/shared/tap?point=polled&rate=100000", nil)
	testkit.FillPartitions(t, broker, "demo", "events", 2, total)
	byReplica := map[string]int{}
	for seen := 0; seen < total; {
		m := stream.Next(t, waitLong)
		switch m.Event {
		case tap.EventMessage:
			var e tap.Event
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatal(err)
			}
			byReplica[e.Replica]++
			seen++
		case tap.EventDropped: // a loaded machine: counted, and named by replica
			var d struct {
				Dropped int
				Replica string
			}
			if err := json.Unmarshal(m.Data, &d); err != nil || d.Replica == "" {
				t.Fatalf("dropped event %s", m.Data)
			}
			byReplica[d.Replica] += d.Dropped
			seen += d.Dropped
		default:
			t.Fatalf("%s %s", m.Event, m.Data)
		}
	}
	if byReplica[oneAt] == 0 || byReplica[twoAt] == 0 || byReplica[oneAt]+byReplica[twoAt] != total {
		t.Fatalf("messages by replica: %v; want both of %s and %s, %d in all", byReplica, oneAt, twoAt, total)
	}
	stream.Close()

	resp, body, err := testkit.DoHTTP("GET", base+"/sinks/shared/logs?tail=400", nil, "")
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tap.LogsContentType {
		t.Fatalf("merged logs: %v %d %s", err, resp.StatusCode, body)
	}
	replicas, last := map[string]int{}, ""
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r logging.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Time < last {
			t.Fatalf("records not in time order: %s after %s", r.Time, last)
		}
		last = r.Time
		replicas[r.Replica]++
	}
	if replicas[oneAt] == 0 || replicas[twoAt] == 0 || len(replicas) != 2 {
		t.Fatalf("merged logs by replica: %v", replicas)
	}

	// Followed: the replicas' new records as they come, each naming its replica, nothing repeated.
	follow := testkit.OpenStream(t, http.DefaultClient, base+"/sinks/shared/logs?follow=true&tail=1", nil)
	if m := follow.Next(t, waitLong); m.Event != tap.EventLog {
		t.Fatalf("follow: %s %s", m.Event, m.Data)
	}
	testkit.FillPartitions(t, broker, "demo", "events", 2, 2000)
	followed, seenTimes := map[string]int{}, map[string]bool{}
	for followed[oneAt] == 0 || followed[twoAt] == 0 {
		m := follow.Next(t, waitLong)
		var r logging.Record
		if err := json.Unmarshal(m.Data, &r); m.Event != tap.EventLog || err != nil {
			t.Fatalf("follow: %s %s", m.Event, m.Data)
		}
		if key := r.Replica + r.Time + r.Message; seenTimes[key] {
			t.Fatalf("a record came twice: %s", m.Data)
		} else {
			seenTimes[key] = true
		}
		followed[r.Replica]++
	}
	follow.Close()

	two.Kill9()
	waitUntil(t, "the dead replica unreachable in the fleet view", func() bool {
		var list []fleetEntry
		getBody(t, base+"/sinks", &list)
		return len(list) == 1 && list[0].replica(twoAt).Status == "unreachable"
	})
	stream = testkit.OpenStream(t, http.DefaultClient, base+"/sinks/shared/tap?point=polled&rate=100000&limit=10", nil)
	if m := stream.Next(t, waitLong); m.Event != tap.EventUnreachable || !strings.Contains(string(m.Data), fmt.Sprintf(`"replica":%q`, twoAt)) {
		t.Fatalf("first event with a dead replica: %s %s", m.Event, m.Data)
	}
	testkit.FillPartitions(t, broker, "demo", "events", 2, 100)
	for _, e := range messageEvents(t, stream, 10) {
		if e.Replica != oneAt {
			t.Fatalf("an event of %q; only %s runs", e.Replica, oneAt)
		}
	}
	if m := stream.Next(t, waitLong); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"limit"}` {
		t.Fatalf("after the limit: %s %s", m.Event, m.Data)
	}
}

// The supervisor's ring of a connector whose plugin logs without pause stays within
// http.log_records and http.log_bytes while the lines stream through it.
func TestSupervisorLogRingStaysBounded(t *testing.T) {
	const records, maxBytes, total = 50, 10000, 1500
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.FillTopic(t, broker, "demo", "events", total)
	f := newFixture(t, broker)
	f.writeRuntime(t, fmt.Sprintf("log_records = %d\nlog_bytes = %d", records, maxBytes))
	f.write(t, "connectors/noisy.toml", strings.Replace(sinkFile("noisy", f.plugin("fault"), "demo", "events", ""), "batch_length = 50", "batch_length = 10", 1)+
		"\n[plugin_config]\nlog_lines = 40\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	reads := 0
	for testkit.OrZero(statsOf(t, p, nil)["sink/noisy"].MessagesProcessed) < total {
		_, body, err := p.Do(http.MethodGet, "/sinks/noisy/logs", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(body), "\n")
		if n > records || len(body)-n > maxBytes {
			t.Fatalf("%d records of %d bytes; the ring holds at most %d and %d", n, len(body)-n, records, maxBytes)
		}
		if p.Exited() {
			t.Fatal("supervisor exited")
		}
		reads++
	}
	_, body, _ := p.Do(http.MethodGet, "/sinks/noisy/logs?tail=1", nil, "")
	var last logging.Record
	if err := json.Unmarshal(body, &last); err != nil || last.Origin != logging.OriginPlugin {
		t.Fatalf("the newest record %s: %v", body, err)
	}
	if reads == 0 {
		t.Fatal("the sink finished before the ring was read once")
	}
}
