package tap_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// What a sink batch of 1,000 messages pays the hub, per batch (go test -bench . ./pkg/tap): with
// no tap open (the one atomic load), with a tap whose client never reads (full buffer: counted,
// nothing copied), and with a client that keeps up at the default rate (the copies of the 100
// messages a second it takes). A tap of every message is measured end to end instead
// (iggy-bench-e2e sink-null-json-tap-all): its cost is the rendering, in the same process.
func BenchmarkHubPerBatch(b *testing.B) {
	const batch = 1000
	payload := []byte(`{"id":"0b5e5a7e-3f1c-4c8e-9a51-6f0c2d7a9e11","title":"Hello","name":"World","text":"AbCdEfGhIjKlMn"}`)
	build := func(i int) *tap.Sample {
		return &tap.Sample{Point: tap.PointPolled, Stream: "s", Topic: "t", Offset: uint64(i), Schema: postcard.SchemaJSON,
			Payload: append([]byte(nil), payload...)}
	}
	offer := func(h *tap.Hub) {
		if h.Mask()&tap.MaskPolled != 0 {
			h.Offer(tap.MaskPolled, 0, batch, build)
		}
	}
	b.Run("no tap", func(b *testing.B) {
		h := tap.NewHub(tap.HubOptions{})
		for b.Loop() {
			offer(h)
		}
	})
	b.Run("stalled client", func(b *testing.B) {
		h := tap.NewHub(tap.HubOptions{})
		if _, err := h.Subscribe(tap.Query{Points: []string{tap.PointPolled}, Rate: tap.MaxRate}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			offer(h)
		}
	})
	b.Run("reading client at the default rate", func(b *testing.B) {
		h := tap.NewHub(tap.HubOptions{})
		s, err := h.Subscribe(tap.Query{Points: []string{tap.PointPolled}, Rate: tap.DefaultRate})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			for {
				select {
				case smp := <-s.Samples():
					s.Release(smp)
				case <-done:
					return
				}
			}
		}()
		for b.Loop() {
			offer(h)
		}
		close(done)
	})
}
