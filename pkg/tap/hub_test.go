package tap_test

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

func query(t *testing.T, kind, raw string) tap.Query {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	q, err := tap.ParseQuery(v, kind)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", raw, err)
	}
	return q
}

// sampleAt builds the sample of message i of a batch starting at offset base.
func sampleAt(point string, base uint64) func(i int) *tap.Sample {
	return func(i int) *tap.Sample {
		return &tap.Sample{Point: point, Offset: base + uint64(i), Schema: postcard.SchemaJSON, Payload: []byte(strconv.Itoa(i))}
	}
}

// drain takes what is buffered for s now.
func drain(s *tap.Subscriber) []*tap.Sample {
	var out []*tap.Sample
	for {
		select {
		case smp := <-s.Samples():
			out = append(out, smp)
		default:
			return out
		}
	}
}

func TestHubTappedIsTheUnionOfOpenTaps(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	if h.Tapped(tap.MaskPolled | tap.MaskDelivered | tap.MaskDeadLettered) {
		t.Fatal("tapped with no subscriber")
	}
	a, err := h.Subscribe(query(t, tap.KindSink, "point=polled"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Subscribe(query(t, tap.KindSink, "point=delivered&point=dead_lettered"))
	if err != nil {
		t.Fatal(err)
	}
	if !h.Tapped(tap.MaskPolled) || !h.Tapped(tap.MaskDelivered) || h.Tapped(tap.MaskProduced) {
		t.Fatal("mask does not match the open taps")
	}
	a.Close()
	if h.Tapped(tap.MaskPolled) || !h.Tapped(tap.MaskDeadLettered) {
		t.Fatal("mask kept a closed tap's point, or lost an open one's")
	}
	b.Close()
	b.Close() // twice is fine
	if h.Tapped(^tap.Mask(0)) || h.Open() != 0 {
		t.Fatal("tapped after every tap closed")
	}
}

func TestHubRefusesTheFifthTapAndAnyAfterClose(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	if err := h.Admit(); err != nil {
		t.Fatalf("Admit with no tap open: %v", err)
	}
	for i := range tap.DefaultMaxSubscribers {
		if _, err := h.Subscribe(query(t, tap.KindSink, "")); err != nil {
			t.Fatalf("tap %d: %v", i+1, err)
		}
	}
	if _, err := h.Subscribe(query(t, tap.KindSink, "")); !errors.Is(err, tap.ErrTooMany) {
		t.Fatalf("fifth tap: %v, want ErrTooMany", err)
	}
	if err := h.Admit(); !errors.Is(err, tap.ErrTooMany) || h.Open() != tap.DefaultMaxSubscribers {
		t.Fatalf("Admit with every tap open: %v, %d open", err, h.Open())
	}
	h.Close()
	if err := h.Admit(); !errors.Is(err, tap.ErrClosed) {
		t.Fatalf("Admit after close: %v, want ErrClosed", err)
	}
	if _, err := h.Subscribe(query(t, tap.KindSink, "")); !errors.Is(err, tap.ErrClosed) {
		t.Fatalf("tap after close: %v, want ErrClosed", err)
	}
}

// clock is a hub clock a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestHubOfferDropsWhatDoesNotFitAndCountsIt(t *testing.T) {
	var counted uint64
	c := &clock{t: time.Unix(1, 0)}
	h := tap.NewHub(tap.HubOptions{Buffer: 4, Now: c.now, OnDrop: func(n uint64) { counted += n }})
	s, err := h.Subscribe(query(t, tap.KindSink, "rate=1000"))
	if err != nil {
		t.Fatal(err)
	}
	built := 0
	build := sampleAt(tap.PointPolled, 100)
	count := func(i int) *tap.Sample { built++; return build(i) }
	h.Offer(tap.MaskPolled, 0, 10, count) // the burst is the buffer: 4 taken, nothing dropped
	if d := s.TakeDropped(); d != 0 || built != 4 {
		t.Fatalf("first batch: built %d, dropped %d; want 4 and 0", built, d)
	}
	c.advance(time.Second) // the rate allows more; the buffer still holds the first 4
	h.Offer(tap.MaskPolled, 0, 10, count)
	got := drain(s)
	if len(got) != 4 || got[0].Offset != 100 || got[1].Offset != 102 || got[3].Offset != 107 {
		t.Fatalf("got %d samples; want 4 of the first batch, spread over it", len(got))
	}
	if d := s.TakeDropped(); d != 4 || counted != 4 {
		t.Fatalf("dropped %d, counted %d; want 4 and 4", d, counted)
	}
	if built != 4 {
		t.Fatalf("built %d samples; the first batch's 4, and none for a full buffer", built)
	}
	if d := s.TakeDropped(); d != 0 {
		t.Fatalf("TakeDropped twice: %d the second time", d)
	}
}

func TestHubBufferHoldsASecondOfTheRate(t *testing.T) {
	c := &clock{t: time.Unix(1, 0)}
	h := tap.NewHub(tap.HubOptions{Now: c.now})
	for _, tc := range []struct {
		rate, want int
	}{{1, tap.MinBuffer}, {100, 100}, {500, 500}, {100000, tap.MaxBuffer}} {
		s, err := h.Subscribe(query(t, tap.KindSink, "rate="+strconv.Itoa(tc.rate)))
		if err != nil {
			t.Fatal(err)
		}
		h.Offer(tap.MaskPolled, 0, 5000, sampleAt(tap.PointPolled, 0))
		if got := len(drain(s)); got != min(tc.want, tc.rate) || s.TakeDropped() != 0 {
			t.Errorf("rate %d: a burst took %d samples, want %d and no drop", tc.rate, got, min(tc.want, tc.rate))
		}
		s.Close()
	}
}

func TestHubOfferBuildsNothingForUntappedPointsOrPartitions(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{})
	s, err := h.Subscribe(query(t, tap.KindSink, "point=delivered&partition=2"))
	if err != nil {
		t.Fatal(err)
	}
	fail := func(int) *tap.Sample { t.Fatal("built a sample nobody takes"); return nil }
	h.Offer(tap.MaskPolled, 2, 5, fail)
	h.Offer(tap.MaskDelivered, 1, 5, fail)
	h.Offer(tap.MaskDelivered, 2, 3, sampleAt(tap.PointDelivered, 0))
	if got := drain(s); len(got) != 3 {
		t.Fatalf("partition 2 delivered: %d samples, want 3", len(got))
	}
}

func TestHubRateSpreadsOverTheBatchAndLimitCaps(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{Buffer: 1000, Now: (&clock{t: time.Unix(1, 0)}).now})
	rated, err := h.Subscribe(query(t, tap.KindSink, "rate=5"))
	if err != nil {
		t.Fatal(err)
	}
	limited, err := h.Subscribe(query(t, tap.KindSink, "limit=3&rate=1000"))
	if err != nil {
		t.Fatal(err)
	}
	h.Offer(tap.MaskPolled, 0, 100, sampleAt(tap.PointPolled, 0))
	got := drain(rated)
	if len(got) != 5 {
		t.Fatalf("rate 5: %d samples of a 100-message batch", len(got))
	}
	for i, s := range got {
		if s.Offset != uint64(i*20) {
			t.Fatalf("rate 5: sample %d is offset %d; want every 20th message", i, s.Offset)
		}
	}
	if got := drain(limited); len(got) != 3 || got[2].Offset != 2 {
		t.Fatalf("limit 3: %d samples", len(got))
	}
	h.Offer(tap.MaskPolled, 0, 100, sampleAt(tap.PointPolled, 100))
	if got := drain(limited); len(got) != 0 {
		t.Fatalf("limit 3 reached, yet %d more samples", len(got))
	}
}

func TestHubLimitGivesDroppedSamplesBack(t *testing.T) {
	c := &clock{t: time.Unix(1, 0)}
	h := tap.NewHub(tap.HubOptions{Buffer: 2, Now: c.now})
	s, err := h.Subscribe(query(t, tap.KindSink, "limit=3&rate=1000"))
	if err != nil {
		t.Fatal(err)
	}
	h.Offer(tap.MaskPolled, 0, 2, sampleAt(tap.PointPolled, 0)) // 2 taken, the buffer full
	c.advance(time.Second)
	h.Offer(tap.MaskPolled, 0, 2, sampleAt(tap.PointPolled, 2)) // the limit's last one: dropped
	if got, d := drain(s), s.TakeDropped(); len(got) != 2 || d != 1 {
		t.Fatalf("%d samples and %d dropped, want 2 and 1", len(got), d)
	}
	c.advance(time.Second)
	h.Offer(tap.MaskPolled, 0, 2, sampleAt(tap.PointPolled, 4)) // the dropped one's place
	if got := drain(s); len(got) != 1 || got[0].Offset != 4 {
		t.Fatalf("after a drop the limit leaves one more: got %d", len(got))
	}
	c.advance(time.Second)
	h.Offer(tap.MaskPolled, 0, 2, sampleAt(tap.PointPolled, 6))
	if got := drain(s); len(got) != 0 {
		t.Fatalf("limit reached, yet %d more", len(got))
	}
}

func TestParseQuery(t *testing.T) {
	q := query(t, tap.KindSink, "point=dead_lettered,polled&point=polled&limit=10&rate=7&partition=3")
	if len(q.Points) != 2 || q.Points[0] != "polled" || q.Points[1] != "dead_lettered" || q.Limit != 10 || q.Rate != 7 || *q.Partition != 3 {
		t.Fatalf("query %+v", q)
	}
	if back := query(t, tap.KindSink, q.Values().Encode()); back.Limit != 10 || back.Rate != 7 || *back.Partition != 3 || len(back.Points) != 2 {
		t.Fatalf("Values does not round-trip: %+v", back)
	}
	if q := query(t, tap.KindSource, ""); len(q.Points) != 3 || q.Points[2] != tap.PointDeadLettered || q.Rate != tap.DefaultRate || q.Limit != 0 || q.Partition != nil {
		t.Fatalf("defaults %+v", q)
	}
	// A source's [error_handling] dead-letters too: its dead letters are a point of its own.
	if q := query(t, tap.KindSource, "point=dead_lettered"); q.Mask() != tap.MaskDeadLettered {
		t.Fatalf("source dead_lettered: %+v", q)
	}
	for _, tc := range []struct{ kind, raw, names string }{
		{tap.KindSink, "point=produced", "point"},
		{tap.KindSource, "point=delivered", "point"},
		{tap.KindSink, "limit=-1", "limit"},
		{tap.KindSink, "limit=x", "limit"},
		{tap.KindSink, "rate=0", "rate"},
		{tap.KindSink, "rate=2000000", "rate"},
		{tap.KindSink, "partition=-1", "partition"},
		{tap.KindSource, "partition=0", "partition"},
	} {
		v, _ := url.ParseQuery(tc.raw)
		_, err := tap.ParseQuery(v, tc.kind)
		if !errors.Is(err, tap.ErrBadQuery) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s %q: %v; want ErrBadQuery naming %s", tc.kind, tc.raw, err, tc.names)
		}
	}
}

// Big messages fill a buffer's byte budget before its count: beyond MaxBufferBytes waiting, the
// rest is dropped without a copy, and what Release frees makes room again.
func TestHubBoundsTheBytesWaiting(t *testing.T) {
	c := &clock{t: time.Unix(1, 0)}
	h := tap.NewHub(tap.HubOptions{Now: c.now})
	s, err := h.Subscribe(query(t, tap.KindSink, "rate=1000"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	big := func(i int) *tap.Sample {
		return &tap.Sample{Point: tap.PointPolled, Offset: uint64(i), Payload: make([]byte, size)}
	}
	h.Offer(tap.MaskPolled, 0, 10, big)
	got := drain(s)
	if want := tap.MaxBufferBytes / size; len(got) != want || s.TakeDropped() != uint64(10-want) {
		t.Fatalf("%d of 10 messages of 4 MiB taken, want %d and the rest dropped", len(got), want)
	}
	for _, smp := range got {
		s.Release(smp)
	}
	c.advance(time.Second)
	h.Offer(tap.MaskPolled, 0, 1, big)
	if got := drain(s); len(got) != 1 {
		t.Fatalf("after Release: %d taken, want 1", len(got))
	}
}

// The largest rate takes every message however fast the batches come: nothing is left unsampled,
// so a client that keeps up sees every message and one that does not is told of every drop.
func TestHubMaxRateTakesEveryMessage(t *testing.T) {
	h := tap.NewHub(tap.HubOptions{Buffer: 2500, Now: (&clock{t: time.Unix(1, 0)}).now}) // the clock never moves
	s, err := h.Subscribe(query(t, tap.KindSink, "rate="+strconv.Itoa(tap.MaxRate)))
	if err != nil {
		t.Fatal(err)
	}
	for b := range 3 {
		h.Offer(tap.MaskPolled, 0, 1000, sampleAt(tap.PointPolled, uint64(1000*b)))
	}
	if got, d := len(drain(s)), s.TakeDropped(); got != 2500 || d != 500 {
		t.Fatalf("3 batches of 1,000 at the largest rate: %d taken and %d dropped, want 2,500 and 500", got, d)
	}
	limited, err := h.Subscribe(query(t, tap.KindSink, "limit=5&rate="+strconv.Itoa(tap.MaxRate)))
	if err != nil {
		t.Fatal(err)
	}
	h.Offer(tap.MaskPolled, 0, 1000, sampleAt(tap.PointPolled, 0))
	if got := drain(limited); len(got) != 5 || got[4].Offset != 4 {
		t.Fatalf("limit 5 at the largest rate: %d samples", len(got))
	}
}
