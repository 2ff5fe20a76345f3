package supervisor_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

var jsonContent = http.Header{"Content-Type": {"application/json"}}

// call sends one request and fails the test unless the answer has status want; it returns the body.
func call(t *testing.T, p *testkit.SupervisorProc, method, path, body string, want int) string {
	t.Helper()
	resp, got, err := p.Do(method, path, jsonContent, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s %s: status %d, want %d: %s", method, path, body, resp.StatusCode, want, got)
	}
	return string(got)
}

type partitionOffset struct {
	Stream        string  `json:"stream"`
	Topic         string  `json:"topic"`
	PartitionID   uint32  `json:"partition_id"`
	ConsumerGroup string  `json:"consumer_group"`
	StoredOffset  *uint64 `json:"stored_offset"`
	CurrentOffset *uint64 `json:"current_offset"`
	Lag           uint64  `json:"lag"`
}

func sinkOffsets(t *testing.T, p *testkit.SupervisorProc, key string) []partitionOffset {
	t.Helper()
	var out struct {
		Offsets []partitionOffset `json:"offsets"`
	}
	getJSON(t, p, nil, "/sinks/"+key+"/offsets", &out)
	return out.Offsets
}

func ptrText(v *uint64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

// wantOffsets checks one partition's stored offset, current offset and lag.
func wantOffsets(t *testing.T, got []partitionOffset, partition uint32, stored, current string, lag uint64) {
	t.Helper()
	for _, o := range got {
		if o.PartitionID != partition {
			continue
		}
		if ptrText(o.StoredOffset) != stored || ptrText(o.CurrentOffset) != current || o.Lag != lag {
			t.Fatalf("partition %d: stored %s, current %s, lag %d; want %s, %s, %d (all: %+v)",
				partition, ptrText(o.StoredOffset), ptrText(o.CurrentOffset), o.Lag, stored, current, lag, got)
		}
		return
	}
	t.Fatalf("no partition %d in %+v", partition, got)
}

// Offsets of a sink come from Iggy: the group's stored offset against the partition's last offset.
// A running sink catches up (lag 0) and its offsets cannot be rewritten (409); a disabled one can
// be rewound, rejected bodies name their entry, and once enabled it reprocesses from the offset
// after the one that was set. The lag gauge and the /stats lag follow its polls.
func TestSinkOffsetsReadRewindAndReprocess(t *testing.T) {
	testkit.OverProtocols(t, sinkOffsetsReadRewindAndReprocess)
}

func sinkOffsetsReadRewindAndReprocess(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 2}))
	testkit.FillTopic(t, broker, "demo", "events", 10) // partition 0, offsets 0..9
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/reader.toml", sinkFile("reader", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	parked := disabled(sinkFile("parked", f.plugin("stdout_sink"), "demo", "events", ""))
	f.write(t, "connectors/parked.toml", parked)
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)

	call(t, p, http.MethodGet, "/sinks/nope/offsets", "", http.StatusNotFound)
	got := sinkOffsets(t, p, "parked")
	if len(got) != 2 || got[0].Stream != "demo" || got[0].Topic != "events" || got[0].ConsumerGroup != "iggy-connect-sink-parked" {
		t.Fatalf("parked offsets = %+v, want two partitions of demo/events for group iggy-connect-sink-parked", got)
	}
	wantOffsets(t, got, 0, "null", "9", 10) // nothing stored: all ten are still to read
	wantOffsets(t, got, 1, "null", "null", 0)
	if st := statsOf(t, p, nil)["sink/parked"]; st.Lag != nil {
		t.Errorf("/stats lag of a sink that never polled = %d, want absent", *st.Lag)
	}

	waitFor(t, p, waitLong, "the running sink to catch up", func() bool {
		o := sinkOffsets(t, p, "reader")
		return ptrText(o[0].StoredOffset) == "9" && o[0].Lag == 0
	})
	put := `{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":5}]}`
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		body := call(t, p, method, "/sinks/reader/offsets", put, http.StatusConflict)
		if !strings.Contains(body, "connector_not_stopped") || !strings.Contains(body, "running") {
			t.Errorf("%s on a running sink: %s; want connector_not_stopped naming its status", method, body)
		}
	}

	for _, tc := range []struct{ body, names string }{
		{`{"offsets":[{"stream":"other","topic":"events","partition_id":0,"offset":1}]}`, `offsets[0]: stream \"other\" topic \"events\" is not read`},
		{`{"offsets":[{"stream":"demo","topic":"nope","partition_id":0,"offset":1}]}`, `topic \"nope\" is not read`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":7,"offset":1}]}`, `offsets[0].partition_id: stream \"demo\" topic \"events\" has no partition 7`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":10}]}`, `offsets[0].offset: 10 is beyond partition 0`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":1,"offset":0}]}`, `it holds no message`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":0}]}`, `offsets[0].offset: required`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":-1}]}`, `offsets.offset: expected uint64`},
		{`{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":1},{"stream":"demo","topic":"events","partition_id":0,"offset":2}]}`, `offsets[1]: the same partition as offsets[0]`},
		{`{"offsets":[]}`, `at least one entry`},
		{`{"offset":[]}`, `unknown field`},
	} {
		body := call(t, p, http.MethodPut, "/sinks/parked/offsets", tc.body, http.StatusBadRequest)
		if !strings.Contains(body, tc.names) || !strings.Contains(body, "invalid_offsets") {
			t.Errorf("PUT %s: %s; want invalid_offsets naming %s", tc.body, body, tc.names)
		}
	}

	call(t, p, http.MethodPut, "/sinks/parked/offsets", put, http.StatusNoContent)
	wantOffsets(t, sinkOffsets(t, p, "parked"), 0, "5", "9", 4)
	call(t, p, http.MethodDelete, "/sinks/parked/offsets", "", http.StatusNoContent)
	wantOffsets(t, sinkOffsets(t, p, "parked"), 0, "null", "9", 10)
	call(t, p, http.MethodPut, "/sinks/parked/offsets", strings.Replace(put, `"offset":5`, `"offset":6`, 1), http.StatusNoContent)

	// Enabled (a new version, activated, restarted), it goes on after offset 6.
	enabled := `{"enabled":true,"name":"parked","path":"` + f.plugin("stdout_sink") + `",` +
		`"streams":[{"stream":"demo","topics":["events"],"schema":"json","batch_length":50,"poll_interval":"5ms"}],"plugin_config":{"print_payload":true}}`
	var created struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal([]byte(call(t, p, http.MethodPost, "/sinks/parked/configs", enabled, http.StatusOK)), &created); err != nil {
		t.Fatal(err)
	}
	call(t, p, http.MethodPut, "/sinks/parked/configs/active", fmt.Sprintf(`{"version":%d}`, created.Version), http.StatusNoContent)
	call(t, p, http.MethodPost, "/sinks/parked/restart", "", http.StatusNoContent)
	waitFor(t, p, waitLong, "the enabled sink to reach offset 9", func() bool { return offsetsLogged("parked", p.Logs())[9] > 0 })
	seen := offsetsLogged("parked", p.Logs())
	for off := uint64(0); off <= 9; off++ {
		if want := off >= 7; (seen[off] > 0) != want {
			t.Errorf("offset %d processed %d times after the rewind to 6; want it processed: %v", off, seen[off], want)
		}
	}
	waitFor(t, p, waitLong, "the stored offset to reach 9", func() bool { return ptrText(sinkOffsets(t, p, "parked")[0].StoredOffset) == "9" })
	if st := statsOf(t, p, nil)["sink/parked"]; st.Lag == nil || *st.Lag != 0 {
		t.Errorf("/stats lag after catching up = %v, want 0", st.Lag)
	}
	_, metricsBody, err := p.Do(http.MethodGet, "/metrics", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	series := `iggy_connector_consumer_lag{connector_key="parked",connector_type="sink",partition="0",stream="demo",topic="events"}`
	if v, ok := testkit.MetricValue(string(metricsBody), series); !ok || v != 0 {
		t.Errorf("supervisor /metrics %s = %v (present %v), want 0", series, v, ok)
	}
}

type sourceStateBody struct {
	State     *string         `json:"state"`
	StateJSON json.RawMessage `json:"state_json"`
	UpdatedAt *string         `json:"updated_at"`
}

func sourceState(t *testing.T, p *testkit.SupervisorProc, key string) sourceStateBody {
	t.Helper()
	var out sourceStateBody
	getJSON(t, p, nil, "/sources/"+key+"/offsets", &out)
	return out
}

// A source's state is read from its state file (base64, and decoded from MessagePack to JSON),
// rewritten and deleted while the source is stopped (409 while it runs), bad bodies naming their
// field; a source started afterwards continues from the state that was put.
func TestSourceStateReadRewriteAndContinue(t *testing.T) {
	testkit.OverProtocols(t, sourceStateReadRewriteAndContinue)
}

func sourceStateReadRewriteAndContinue(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"numbers": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	gen := `[plugin_config]
interval = "5ms"
max_count = 1000
messages_range = [1, 4]
`
	f.write(t, "connectors/gen.toml", disabled(sourceFile("gen", f.plugin("random_source"), "demo", "numbers", ""))+gen)
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)

	call(t, p, http.MethodGet, "/sources/nope/offsets", "", http.StatusNotFound)
	if st := sourceState(t, p, "gen"); st.State != nil || string(st.StateJSON) != "null" || st.UpdatedAt != nil {
		t.Fatalf("state before any = %+v, want all null", st)
	}
	call(t, p, http.MethodPut, "/sources/gen/offsets", `{"state":"kSo="}`, http.StatusNoContent) // MessagePack [42]
	if st := sourceState(t, p, "gen"); st.State == nil || *st.State != "kSo=" || string(st.StateJSON) != "[42]" || st.UpdatedAt == nil {
		t.Fatalf("state after PUT state = %+v, want kSo= / [42] with a time", st)
	}
	call(t, p, http.MethodDelete, "/sources/gen/offsets", "", http.StatusNoContent)
	if st := sourceState(t, p, "gen"); st.State != nil {
		t.Fatalf("state after DELETE = %+v, want none", st)
	}
	for _, tc := range []struct{ body, names string }{
		{`{"state":"%%%"}`, "state: not standard base64"},
		{`{"state_json":18446744073709551616}`, "state_json: "},
		{`{"state_json":{"$bin":1}}`, "state_json: "},
		{`{"state":"kSo=","state_json":[42]}`, "exactly one of state"},
		{`{}`, "exactly one of state"},
		{`{"status":"kSo="}`, "unknown field"},
	} {
		body := call(t, p, http.MethodPut, "/sources/gen/offsets", tc.body, http.StatusBadRequest)
		if !strings.Contains(body, tc.names) {
			t.Errorf("PUT %s: %s; want it to name %q", tc.body, body, tc.names)
		}
	}
	// A GET answer with one of state and state_json set to null is a PUT body (updated_at is ignored).
	call(t, p, http.MethodPut, "/sources/gen/offsets", `{"state":null,"state_json":[990],"updated_at":"2026-01-01T00:00:00Z"}`, http.StatusNoContent)
	if st := sourceState(t, p, "gen"); st.State == nil || *st.State != "kc0D3g==" || string(st.StateJSON) != "[990]" {
		t.Fatalf("state after PUT state_json = %+v, want kc0D3g== / [990]", st)
	}

	// Enabled, it goes on from 990: ten more messages reach max_count.
	enabled := `{"enabled":true,"name":"gen","path":"` + f.plugin("random_source") + `",` +
		`"streams":[{"stream":"demo","topic":"numbers","schema":"json","batch_length":100,"linger_time":"5ms"}],` +
		`"plugin_config":{"interval":"5ms","max_count":1000,"messages_range":[1,4]}}`
	var created struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal([]byte(call(t, p, http.MethodPost, "/sources/gen/configs", enabled, http.StatusOK)), &created); err != nil {
		t.Fatal(err)
	}
	call(t, p, http.MethodPut, "/sources/gen/configs/active", fmt.Sprintf(`{"version":%d}`, created.Version), http.StatusNoContent)
	call(t, p, http.MethodPost, "/sources/gen/restart", "", http.StatusNoContent)
	waitFor(t, p, waitLong, "the state to reach max_count", func() bool { return string(sourceState(t, p, "gen").StateJSON) == "[1000]" })
	sent, err := broker.Messages("demo", "numbers")
	if err != nil || len(sent) != 10 {
		t.Errorf("the source sent %d messages (%v) after its state was set to 990 of 1000, want 10", len(sent), err)
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		body := call(t, p, method, "/sources/gen/offsets", `{"state":"kSo="}`, http.StatusConflict)
		if !strings.Contains(body, "connector_not_stopped") {
			t.Errorf("%s on a running source: %s; want connector_not_stopped", method, body)
		}
	}
}

// Without Iggy the offsets of a sink cannot be read: 503 iggy_unavailable naming the address, within
// the supervisor's 3 s bound; a source's state still reads on the file backend, and on backend iggy
// is 503 too.
func TestSinkOffsetsWithoutIggy(t *testing.T) {
	for _, backend := range []string{"file", "iggy"} {
		t.Run(backend, func(t *testing.T) { testOffsetsWithoutIggy(t, backend) })
	}
}

func testOffsetsWithoutIggy(t *testing.T, backend string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := l.Addr().String()
	l.Close()
	rt, err := os.ReadFile(filepath.Join(f.dir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "config.toml", strings.Replace(string(rt), broker.Addr(), nobody, 1))
	f.write(t, "connectors/parked.toml", disabled(sinkFile("parked", f.plugin("null_sink"), "demo", "events", "")))
	f.write(t, "connectors/gen.toml", disabled(sourceFile("gen", f.plugin("random_source"), "demo", "events", "")))
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTORS_STATE_BACKEND="+backend), waitLong)
	type request struct{ method, path, body string }
	unavailable := []request{{http.MethodGet, "/sinks/parked/offsets", ""}, {http.MethodDelete, "/sinks/parked/offsets", ""}}
	if backend == "iggy" { // the sink's requests are the same as above
		unavailable = []request{{http.MethodGet, "/sources/gen/offsets", ""}, {http.MethodPut, "/sources/gen/offsets", `{"state":"kSo="}`}}
	}
	for _, rq := range unavailable {
		start := time.Now()
		body := call(t, p, rq.method, rq.path, rq.body, http.StatusServiceUnavailable)
		if !strings.Contains(body, "iggy_unavailable") || !strings.Contains(body, nobody) {
			t.Errorf("%s %s: %s; want iggy_unavailable naming %s", rq.method, rq.path, body, nobody)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s %s: the answer took %s", rq.method, rq.path, took)
		}
	}
	if backend == "file" {
		call(t, p, http.MethodGet, "/sources/gen/offsets", "", http.StatusOK)
	}
}

// Stop, rewind, start: the operator's way to reprocess. A running sink is stopped through the API,
// its offset is put back, and after start it processes again exactly the messages after that
// offset; while stopped it stays stopped (no runner), and its offsets are writable only then.
func TestStopRewindStartReprocesses(t *testing.T) {
	testkit.OverProtocols(t, stopRewindStartReprocesses)
}

func stopRewindStartReprocesses(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.FillTopic(t, broker, "demo", "events", 10) // offsets 0..9
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "connectors/replay.toml", sinkFile("replay", f.plugin("stdout_sink"), "demo", "events", "")+"\n[plugin_config]\nprint_payload = true\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)

	waitFor(t, p, waitLong, "the sink to store offset 9", func() bool {
		return ptrText(sinkOffsets(t, p, "replay")[0].StoredOffset) == "9"
	})
	rewind := `{"offsets":[{"stream":"demo","topic":"events","partition_id":0,"offset":3}]}`
	call(t, p, http.MethodPut, "/sinks/replay/offsets", rewind, http.StatusConflict)
	call(t, p, http.MethodPost, "/sinks/replay/stop", "", http.StatusNoContent)
	if st := statsOf(t, p, nil)["sink/replay"]; st.Status != "stopped" {
		t.Fatalf("status after stop = %q, want stopped", st.Status)
	}
	before := offsetsLogged("replay", p.Logs())
	for off := uint64(0); off <= 9; off++ {
		if before[off] != 1 {
			t.Fatalf("offset %d processed %d times before the rewind, want once (all: %v)", off, before[off], before)
		}
	}
	call(t, p, http.MethodPut, "/sinks/replay/offsets", rewind, http.StatusNoContent)
	wantOffsets(t, sinkOffsets(t, p, "replay"), 0, "3", "9", 6)

	call(t, p, http.MethodPost, "/sinks/replay/start", "", http.StatusNoContent)
	waitFor(t, p, waitLong, "the restarted sink to store offset 9 again", func() bool {
		return offsetsLogged("replay", p.Logs())[9] == 2 && ptrText(sinkOffsets(t, p, "replay")[0].StoredOffset) == "9"
	})
	after := offsetsLogged("replay", p.Logs())
	for off := uint64(0); off <= 9; off++ {
		want := 1
		if off > 3 {
			want = 2
		}
		if after[off] != want {
			t.Errorf("offset %d processed %d times in all after the rewind to 3, want %d", off, after[off], want)
		}
	}
}
