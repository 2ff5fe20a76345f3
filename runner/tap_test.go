package runner_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// addStageTOML is one add_fields transform stamping every record, so delivered payloads differ
// from polled ones.
const addStageTOML = `
[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "stage"
value.static = "tapped"
`

// tapEvents reads message events from s until it has n of them (other events are checked and
// skipped), failing the test on an end event first.
func tapEvents(t *testing.T, s *testkit.EventStream, n int) []tap.Event {
	t.Helper()
	var out []tap.Event
	for len(out) < n {
		m := s.Next(t, waitLong)
		switch m.Event {
		case tap.EventMessage:
			var e tap.Event
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatalf("message event %s: %v", m.Data, err)
			}
			out = append(out, e)
		case tap.EventDropped:
			t.Fatalf("dropped %s with a rate and a buffer that fit the test's messages", m.Data)
		default:
			t.Fatalf("after %d messages: %s %s", len(out), m.Event, m.Data)
		}
	}
	return out
}

// A sink's polled events are exactly what the broker holds (offsets, ids, timestamps, headers,
// payloads), and its delivered events carry the transformed payloads the plugin received.
func TestTapSinkPolledAndDeliveredMatchTheBroker(t *testing.T) {
	testkit.OverProtocols(t, tapSinkPolledAndDeliveredMatchTheBroker)
}

func tapSinkPolledAndDeliveredMatchTheBroker(t *testing.T, protocol string) {
	const total = 120
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	msgs := make([]iggcon.IggyMessage, total)
	for i := range msgs {
		var err error
		msgs[i], err = iggcon.NewIggyMessage(fmt.Appendf(nil, `{"n":%d,"password":"p%d"}`, i, i),
			iggcon.WithUserHeaders([]iggcon.HeaderEntry{stringHeader(t, "trace", fmt.Sprintf("t%d", i))}))
		if err != nil {
			t.Fatal(err)
		}
	}
	testkit.SendMessages(t, srv, "demo", "events", msgs)
	sink := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sinkTOML("out", testkit.PluginPath(t, "stdout_sink"), "demo", "events", "batch_length = 50", "print_payload = false")+addStageTOML),
		"IGGY_CONNECTOR_START_PAUSED=true"))
	sink.WaitStatus(t, "paused", waitLong)
	stream := sink.OpenStream(t, "/tap?point=polled&point=delivered&rate=100000", nil)
	if code, body, err := sink.Do(http.MethodPost, "/resume", nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("resume: %d %s %v", code, body, err)
	}
	events := tapEvents(t, stream, 2*total)
	broker := readTopic(t, srv, "demo", "events")
	polled, delivered := map[uint64]tap.Event{}, map[uint64]tap.Event{}
	for _, e := range events {
		if e.Stream != "demo" || e.Topic != "events" || e.Partition != 0 || e.Schema != "json" || e.Replica != "" {
			t.Fatalf("event %+v", e)
		}
		switch e.Point {
		case tap.PointPolled:
			polled[e.Offset] = e
		case tap.PointDelivered:
			delivered[e.Offset] = e
		default:
			t.Fatalf("point %q", e.Point)
		}
	}
	if len(polled) != total || len(delivered) != total {
		t.Fatalf("%d polled and %d delivered offsets, want %d each", len(polled), len(delivered), total)
	}
	for _, m := range broker {
		off := m.Header.Offset
		p, d := polled[off], delivered[off]
		var n struct{ N int }
		_ = json.Unmarshal(m.Payload, &n)
		wantPolled := fmt.Sprintf(`{"n":%d,"password":"******"}`, n.N) // secret fields masked, as in configs
		if string(p.Payload) != wantPolled || p.Size != len(m.Payload) || p.ID != tap.IDBytes(m.Header.Id) || p.Timestamp != m.Header.Timestamp {
			t.Fatalf("offset %d polled %+v (payload %s); the broker holds %s id %s timestamp %d", off, p, p.Payload, m.Payload, tap.IDBytes(m.Header.Id), m.Header.Timestamp)
		}
		if len(p.Headers) != 1 || string(p.Headers[0].Key) != `"trace"` || string(p.Headers[0].Value) != strconv.Quote(fmt.Sprintf("t%d", n.N)) {
			t.Fatalf("offset %d polled headers %+v", off, p.Headers)
		}
		var got map[string]any
		if err := json.Unmarshal(d.Payload, &got); err != nil || got["stage"] != "tapped" || got["password"] != "******" || got["n"] != float64(n.N) {
			t.Fatalf("offset %d delivered payload %s: want the add_fields stage and the record", off, d.Payload)
		}
		if d.ID != p.ID || len(d.Headers) != 1 {
			t.Fatalf("offset %d delivered %+v", off, d)
		}
	}
	if s := sink.Stats(t); s.TapDropped != nil {
		t.Fatalf("tap_dropped %d with a client that kept up", *s.TapDropped)
	}
}

// A source's produced events are what its plugin returned, its sent events what reached Iggy, and
// the stream ends with reason limit after limit message events.
func TestTapSourceProducedAndSentMatchTheBroker(t *testing.T) {
	testkit.OverProtocols(t, tapSourceProducedAndSentMatchTheBroker)
}

func tapSourceProducedAndSentMatchTheBroker(t *testing.T, protocol string) {
	const limit = 40
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	source := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sourceTOML("gen", testkit.PluginPath(t, "fault"), "demo", "events", `linger_time = "1ms"`,
			"messages_per_batch = 10\nmax_messages = 20\ninterval_ms = 5")+addStageTOML), "IGGY_CONNECTOR_START_PAUSED=true"))
	source.WaitStatus(t, "paused", waitLong)
	stream := source.OpenStream(t, "/tap?rate=100000&limit="+strconv.Itoa(limit), nil)
	if code, body, err := source.Do(http.MethodPost, "/resume", nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("resume: %d %s %v", code, body, err)
	}
	events := tapEvents(t, stream, limit)
	if m := stream.Next(t, waitLong); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"limit"}` {
		t.Fatalf("after %d events: %s %s", limit, m.Event, m.Data)
	}
	produced, sent := map[string]tap.Event{}, map[string]tap.Event{}
	for _, e := range events {
		switch e.Point {
		case tap.PointProduced:
			produced[e.ID] = e
		case tap.PointSent:
			sent[e.ID] = e
		default:
			t.Fatalf("point %q", e.Point)
		}
	}
	if len(produced) != 20 || len(sent) != 20 {
		t.Fatalf("%d produced and %d sent ids, want 20 each", len(produced), len(sent))
	}
	source.WaitUntil(t, waitLong, "20 messages sent", func() bool { return testkit.OrZero(source.Stats(t).MessagesSent) >= 20 })
	for _, m := range readTopic(t, srv, "demo", "events") {
		id := tap.IDBytes(m.Header.Id)
		p, s := produced[id], sent[id]
		var body struct{ Seq int }
		if err := json.Unmarshal(m.Payload, &body); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"seq":%d}`, body.Seq); string(p.Payload) != want || id != strconv.Itoa(body.Seq+1) {
			t.Fatalf("id %s produced payload %s, want %s", id, p.Payload, want)
		}
		if string(s.Payload) != string(m.Payload) || s.Stream != "demo" || s.Topic != "events" || s.Size != len(m.Payload) || len(s.Headers) != 1 {
			t.Fatalf("id %s sent %+v (payload %s); the broker holds %s", id, s, s.Payload, m.Payload)
		}
		if !strings.Contains(string(s.Payload), `"stage":"tapped"`) {
			t.Fatalf("sent payload %s lacks the transform's field", s.Payload)
		}
	}
}

// A tap client that stops reading never slows the sink: the sink delivers everything, the tap
// drops what does not fit, and once the client reads again it is told how many it missed; the
// drops are in /stats and /metrics.
func TestTapStalledClientDropsWhileTheSinkDeliversAll(t *testing.T) {
	testkit.OverProtocols(t, tapStalledClientDropsWhileTheSinkDeliversAll)
}

func tapStalledClientDropsWhileTheSinkDeliversAll(t *testing.T, protocol string) {
	const total = 20000
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	fillTopic(t, srv, "demo", "events", total)
	sink := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()),
		sinkTOML("out", testkit.PluginPath(t, "null_sink"), "demo", "events", "batch_length = 500", "")), "IGGY_CONNECTOR_START_PAUSED=true"))
	sink.WaitStatus(t, "paused", waitLong)
	stalled := testkit.OpenStalled(t, "unix", sink.SocketPath, "/tap?rate=1000000", nil) // open once its headers came
	if code, body, err := sink.Do(http.MethodPost, "/resume", nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("resume: %d %s %v", code, body, err)
	}
	sink.WaitUntil(t, waitLong, "the sink to deliver every message", func() bool {
		return testkit.OrZero(sink.Stats(t).MessagesProcessed) >= total
	})
	dropped := testkit.OrZero(sink.Stats(t).TapDropped)
	if dropped == 0 {
		t.Fatalf("tap_dropped = 0 after %d messages to a client that never read", total)
	}
	if got := testkit.RequireMetric(t, sink.Metrics(t), `iggy_connector_tap_dropped_total{connector_key="out",connector_type="sink"}`); got != float64(dropped) {
		t.Fatalf("/metrics tap dropped %v, /stats %d", got, dropped)
	}
	// Reading again: the events taken before the buffer filled, then the count of the rest.
	s := stalled.Resume(t)
	var messages, told uint64
	for messages+told < 2*total { // polled and delivered of every message
		m := s.Next(t, waitLong)
		switch m.Event {
		case tap.EventMessage:
			messages++
		case tap.EventDropped:
			var d struct{ Dropped uint64 }
			if err := json.Unmarshal(m.Data, &d); err != nil || d.Dropped == 0 {
				t.Fatalf("dropped event %s", m.Data)
			}
			told += d.Dropped
		default:
			t.Fatalf("%s %s", m.Event, m.Data)
		}
	}
	if told != dropped || messages+told != 2*total {
		t.Fatalf("the client saw %d messages and was told of %d dropped; /stats tap_dropped %d; %d offered", messages, told, dropped, 2*total)
	}
}

// The tap and the logs carry data: they need the API key whenever the control routes do, a runner
// serves at most 4 taps at once (429 beyond), a bad query is 400 naming the parameter, and
// [http] tap = false turns the tap off (403 naming the key).
func TestTapAccessAndLimits(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	start := func(t *testing.T, address string, extra ...string) string {
		env := withConfig(baseEnv(srv, t.TempDir()), sinkTOML("guarded", testkit.PluginPath(t, "null_sink"), "demo", "events", "", ""))
		p := testkit.StartRunner(t, append(env, append([]string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + address}, extra...)...))
		return "http://" + p.WaitTCPEndpoint(t, waitLong)
	}
	t.Run("key", func(t *testing.T) {
		base := start(t, "127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=k3y")
		key := http.Header{"Api-Key": {"k3y"}}
		testkit.CheckCalls(t, base, []testkit.HTTPCall{
			testkit.Call("GET", "/tap", nil, 401, ""),
			testkit.Call("GET", "/logs", nil, 401, ""),
			testkit.Call("GET", "/tap?point=sent", key, 400, "point"),
			testkit.Call("GET", "/tap?limit=x", key, 400, "limit"),
			testkit.Call("GET", "/logs?level=loud", key, 400, "level"),
			testkit.Call("GET", "/logs?tail=2", key, 200, `"origin":"runner"`),
		})
		for range 4 {
			testkit.OpenStream(t, http.DefaultClient, base+"/tap", http.Header{"Authorization": {"Bearer k3y"}})
		}
		testkit.CheckCalls(t, base, []testkit.HTTPCall{testkit.Call("GET", "/tap", key, 429, "at most 4 taps")})
	})
	t.Run("no key beyond loopback", func(t *testing.T) {
		base := start(t, "0.0.0.0:0")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{
			testkit.Call("GET", "/tap", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"),
			testkit.Call("GET", "/logs", nil, 401, "IGGY_CONNECTORS_HTTP_API_KEY"),
		})
	})
	t.Run("tap off", func(t *testing.T) {
		base := start(t, "127.0.0.1:0", "IGGY_CONNECTORS_HTTP_TAP=false")
		testkit.CheckCalls(t, base, []testkit.HTTPCall{testkit.Call("GET", "/tap", nil, 403, "IGGY_CONNECTORS_HTTP_TAP")})
	})
}

// The dead_lettered point shows each failed record as polled, with the stage and the error.
func TestTapDeadLetteredShowsTheStageAndError(t *testing.T) {
	testkit.OverProtocols(t, tapDeadLetteredShowsTheStageAndError)
}

func tapDeadLetteredShowsTheStageAndError(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	testkit.SendMessages(t, srv, "demo", "events", messagesWith(t, 50, func(i int) []byte {
		switch i {
		case 7:
			return []byte(`{"n":7,"kind":"POISON"}`)
		case 20:
			return []byte(`{"n":20,`) // does not decode
		}
		return nil
	}))
	toml := sinkTOML("poison", testkit.PluginPath(t, "fault"), "demo", "events", "", `fail_payload_contains = "POISON"`) +
		errorHandling(`dead_letter_stream = "dlq"`+"\n"+`dead_letter_topic = "poison_dlq"`)
	p := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()), toml), "IGGY_CONNECTOR_START_PAUSED=true"))
	p.WaitStatus(t, "paused", waitLong)
	stream := p.OpenStream(t, "/tap?point=dead_lettered", nil)
	if code, body, err := p.Do(http.MethodPost, "/resume", nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("resume: %d %s %v", code, body, err)
	}
	events := tapEvents(t, stream, 2)
	byOffset := map[uint64]tap.Event{}
	for _, e := range events {
		byOffset[e.Offset] = e
	}
	if e := byOffset[7]; e.Point != tap.PointDeadLettered || string(e.Payload) != `{"n":7,"kind":"POISON"}` || !strings.HasPrefix(e.Error, "consume: ") || len(e.Headers) != 1 {
		t.Fatalf("offset 7: %+v", e)
	}
	if e := byOffset[20]; e.Encoding != "base64" || !strings.HasPrefix(e.Error, "decode: ") || e.Schema != "json" {
		t.Fatalf("offset 20: %+v", e)
	}
}

// A source's dead_lettered point shows each record its [error_handling] dead-letters, as the
// plugin produced it, with the stage and the error; a tap naming no point includes it.
func TestTapSourceDeadLettered(t *testing.T) {
	testkit.OverProtocols(t, tapSourceDeadLettered)
}

func tapSourceDeadLettered(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t)
	toml := sourceTOML("badsrc", testkit.PluginPath(t, "fault"), "out", "events", "",
		"max_messages = 20\nmessages_per_batch = 10\nbad_payload_every = 4") +
		errorHandling(`dead_letter_stream = "dlq"`+"\n"+`dead_letter_topic = "badsrc_dlq"`)
	p := testkit.StartRunner(t, append(withConfig(baseEnvOver(protocol, srv, t.TempDir()), toml), "IGGY_CONNECTOR_START_PAUSED=true"))
	p.WaitStatus(t, "paused", waitLong)
	dead := p.OpenStream(t, "/tap?point=dead_lettered&rate=100000", nil)
	all := p.OpenStream(t, "/tap?rate=100000", nil) // every point of a source
	if code, body, err := p.Do(http.MethodPost, "/resume", nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("resume: %d %s %v", code, body, err)
	}
	stored := waitTopicLen(t, p, srv, "dlq", "badsrc_dlq", 5)
	events := tapEvents(t, dead, 5)
	for i, e := range events {
		seq := 4*i + 3
		raw := fmt.Sprintf(`{"seq":%d,"bad":`, seq)
		if e.Point != tap.PointDeadLettered || e.Stream != "out" || e.Topic != "events" || e.Schema != "json" ||
			e.Encoding != "base64" || e.Size != len(raw) || !strings.HasPrefix(e.Error, "decode: ") {
			t.Fatalf("dead letter %d: %+v", i, e)
		}
		if got, _ := base64.StdEncoding.DecodeString(strings.Trim(string(e.Payload), `"`)); string(got) != raw || string(stored[i].Payload) != raw {
			t.Fatalf("dead letter %d: tapped %q, the dead-letter topic holds %q; want %q", i, got, stored[i].Payload, raw)
		}
		if len(e.Headers) != 1 || string(e.Headers[0].Key) != `"seq"` {
			t.Fatalf("dead letter %d: headers %+v, want the plugin's seq", i, e.Headers)
		}
	}
	points := map[string]int{}
	for _, e := range tapEvents(t, all, 20+15+5) { // 20 produced, 15 sent, 5 dead-lettered
		points[e.Point]++
	}
	if points[tap.PointProduced] != 20 || points[tap.PointSent] != 15 || points[tap.PointDeadLettered] != 5 {
		t.Fatalf("a tap of every point saw %v", points)
	}
}

// HEAD on the stream routes answers the status and headers a GET would start with, and no
// stream: the next request on the same connection is answered, and however many HEADs came, the
// runner's four taps are all still free.
func TestTapAndLogsAnswerHEADWithHeadersAlone(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	p := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), sinkTOML("headed", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")))
	p.WaitStatus(t, "running", waitLong)
	raw := testkit.RawHTTP{Network: "unix", Addr: p.SocketPath}
	for _, tc := range []struct {
		path        string
		status      int
		contentType string
	}{
		{"/tap", http.StatusOK, tap.ContentType},
		{"/tap?point=delivered&limit=1", http.StatusOK, tap.ContentType},
		{"/tap?point=sent", http.StatusBadRequest, "text/plain; charset=utf-8"},
		{"/logs?follow=true", http.StatusOK, tap.ContentType},
		{"/logs?tail=1", http.StatusOK, tap.LogsContentType},
	} {
		for range tap.DefaultMaxSubscribers + 1 { // more HEADs than a runner has taps
			head, next := raw.HeadThen(t, tc.path, "/health", waitLong)
			if head.StatusCode != tc.status || head.Header.Get("Content-Type") != tc.contentType {
				t.Fatalf("HEAD %s: %d %q, want %d %q", tc.path, head.StatusCode, head.Header.Get("Content-Type"), tc.status, tc.contentType)
			}
			if tc.contentType == tap.ContentType && (head.Header.Get("Cache-Control") != "no-store" || head.Header.Get("X-Accel-Buffering") != "no") {
				t.Fatalf("HEAD %s: headers %v, want a stream's", tc.path, head.Header)
			}
			if next != http.StatusOK {
				t.Fatalf("HEAD %s held its connection: the next request got %d (0: no answer)", tc.path, next)
			}
		}
	}
	for range tap.DefaultMaxSubscribers {
		p.OpenStream(t, "/tap", nil)
	}
	if head, _ := raw.HeadThen(t, "/tap", "/health", waitLong); head.StatusCode != http.StatusTooManyRequests || head.Header.Get("Retry-After") != "1" {
		t.Fatalf("HEAD /tap with every tap open: %d %v, want 429 as a GET gets", head.StatusCode, head.Header)
	}
}
