package tap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// tapServer serves GET /tap from h over a real HTTP server with a short write timeout, and
// reports each stream's end reason on ends.
func tapServer(t *testing.T, h *tap.Hub, kind string, o tap.ServeOptions) (url string, ends <-chan string) {
	t.Helper()
	reasons := make(chan string, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := tap.ParseQuery(r.URL.Query(), kind)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sub, err := h.Subscribe(q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		defer sub.Close()
		opts := o
		opts.Limit = q.Limit
		reasons <- tap.Serve(r.Context(), w, sub, opts)
	}))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/tap", reasons
}

func open(t *testing.T, url string) (*http.Response, *tap.Reader) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return resp, tap.NewReader(resp.Body)
}

func next(t *testing.T, r *tap.Reader) tap.Message {
	t.Helper()
	m, err := r.Next()
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return m
}

// waitOpen waits until the hub has n taps open.
func waitOpen(t *testing.T, h *tap.Hub, n int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("%d taps open", n), func() bool { return h.Open() == n })
}

func TestServeStreamsEventsAndEndsAtTheLimit(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	url, ends := tapServer(t, h, tap.KindSink, tap.ServeOptions{WriteTimeout: 300 * time.Millisecond,
		Secrets: config.SecretKeys(config.DefaultSecretKeys)})
	resp, r := open(t, url+"?point=delivered&limit=2")
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	waitOpen(t, h, 1)
	h.Offer(tap.MaskDelivered, 0, 3, func(i int) *tap.Sample {
		return &tap.Sample{Point: tap.PointDelivered, Stream: "s", Topic: "t", Offset: uint64(i), Schema: postcard.SchemaJSON,
			Payload: []byte(`{"password":"p","n":1}`)}
	})
	for i := range 2 {
		m := next(t, r)
		var e tap.Event
		if m.Event != tap.EventMessage || json.Unmarshal(m.Data, &e) != nil || e.Offset != uint64(i) || string(e.Payload) != `{"password":"******","n":1}` {
			t.Fatalf("event %d: %s %s", i, m.Event, m.Data)
		}
	}
	if m := next(t, r); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"limit"}` {
		t.Fatalf("after the limit: %s %s", m.Event, m.Data)
	}
	if reason := <-ends; reason != tap.EndLimit {
		t.Fatalf("Serve returned %q", reason)
	}
	waitOpen(t, h, 0)
}

// A client that lets the stream sit longer than the write timeout still gets every event: each
// write extends the deadline.
func TestServeOutlivesTheWriteTimeoutAndEndsAtMaxDuration(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	url, ends := tapServer(t, h, tap.KindSource, tap.ServeOptions{WriteTimeout: 300 * time.Millisecond, MaxDuration: 900 * time.Millisecond})
	_, r := open(t, url)
	waitOpen(t, h, 1)
	offer := func() {
		h.Offer(tap.MaskProduced, 0, 1, func(int) *tap.Sample {
			return &tap.Sample{Point: tap.PointProduced, Schema: postcard.SchemaText, Payload: []byte("hi")}
		})
	}
	offer()
	if m := next(t, r); m.Event != tap.EventMessage {
		t.Fatalf("first: %s", m.Event)
	}
	// Let the write timeout pass (time passing is what is tested, not a state reached): the
	// deadline of the next write must have been extended.
	time.Sleep(500 * time.Millisecond)
	offer()
	if m := next(t, r); m.Event != tap.EventMessage || !strings.Contains(string(m.Data), `"payload":"hi"`) {
		t.Fatalf("second: %s %s", m.Event, m.Data)
	}
	if m := next(t, r); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"max_duration"}` {
		t.Fatalf("end: %s %s", m.Event, m.Data)
	}
	if reason := <-ends; reason != tap.EndMaxDuration {
		t.Fatalf("Serve returned %q", reason)
	}
}

func TestServeReportsDropsAndShutdown(t *testing.T) {
	c := &clock{t: time.Unix(1, 0)}
	h := tap.NewHub(tap.HubOptions{Buffer: 2, Now: c.now})
	url, ends := tapServer(t, h, tap.KindSink, tap.ServeOptions{})
	_, r := open(t, url+"?rate=10000")
	waitOpen(t, h, 1)
	// Batches offered faster than Serve drains a buffer of 2: the rate allows 2 more each time.
	for b := range 500 {
		c.advance(time.Second)
		h.Offer(tap.MaskPolled, 0, 2, sampleAt(tap.PointPolled, uint64(2*b)))
	}
	var messages int
	var dropped uint64
	for messages+int(dropped) < 1000 {
		m := next(t, r)
		switch m.Event {
		case tap.EventMessage:
			messages++
		case tap.EventDropped:
			var d struct{ Dropped uint64 }
			if err := json.Unmarshal(m.Data, &d); err != nil || d.Dropped == 0 {
				t.Fatalf("dropped event %s", m.Data)
			}
			dropped += d.Dropped
		default:
			t.Fatalf("unexpected %s %s", m.Event, m.Data)
		}
	}
	if messages < 2 || dropped == 0 {
		t.Fatalf("%d messages, %d dropped; a buffer of 2 takes 2 and drops the rest", messages, dropped)
	}
	h.Close()
	if m := next(t, r); m.Event != tap.EventEnd || string(m.Data) != `{"reason":"shutdown"}` {
		t.Fatalf("after Close: %s %s", m.Event, m.Data)
	}
	if reason := <-ends; reason != tap.EndShutdown {
		t.Fatalf("Serve returned %q", reason)
	}
}

func TestServeEndsWhenTheClientLeaves(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	url, ends := tapServer(t, h, tap.KindSink, tap.ServeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitOpen(t, h, 1)
	cancel()
	select {
	case reason := <-ends:
		if reason != "" {
			t.Fatalf("Serve returned %q for a client that left", reason)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end when its client left")
	}
	waitOpen(t, h, 0)
}

func TestReaderReadsEventsCommentsAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	in := ": keep-alive\n\nevent: dropped\ndata: {\"dropped\":3}\n\ndata: a\ndata: b\n\nevent: message\ndata: " + long + "\n\nevent: cut"
	r := tap.NewReader(strings.NewReader(in))
	for _, want := range []struct{ event, data string }{{"dropped", `{"dropped":3}`}, {"message", "a\nb"}, {"message", long}} {
		m, err := r.Next()
		if err != nil || m.Event != want.event || string(m.Data) != want.data {
			t.Fatalf("got %q %.40q %v; want %q %.40q", m.Event, m.Data, err, want.event, want.data)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("unfinished event at the end: %v, want EOF", err)
	}
	m, _ := tap.NewReader(strings.NewReader("event: end\ndata: {}\n\n")).Next()
	if string(m.Raw) != "event: end\ndata: {}\n\n" {
		t.Fatalf("Raw %q", m.Raw)
	}
}
