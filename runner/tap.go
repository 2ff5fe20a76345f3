package runner

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// The live tap (docs/see-inside.md): the pumps ask the hub once per batch whether a point is
// tapped (one atomic load, r.tap.Mask), and only then copy the messages a tap takes. Rendering to
// JSON happens in the tap's own goroutine (tap.Serve).

// tapPolled offers a sink batch as read from Iggy.
func (c *sinkConsumer) tapPolled(b iggyclient.Batch) {
	t := c.t
	c.r.tap.Offer(tap.MaskPolled, b.PartitionID, len(b.Messages), func(i int) *tap.Sample {
		in := &b.Messages[i]
		s := &tap.Sample{Point: tap.PointPolled, Stream: t.Stream, Topic: t.Topic, Partition: b.PartitionID, Offset: in.Offset,
			ID: idFromBytes(in.ID), Timestamp: in.Timestamp, Schema: t.Schema, Payload: bytes.Clone(in.Payload)}
		if len(in.Headers) > 0 {
			s.Headers = tap.CopyHeaders(headersToPostcard(in.Headers))
		}
		return s
	})
}

// tapDelivered offers the records the plugin receives: the batch's records after decode,
// transforms and encode, each with its payload's format (sinkBatch.schemas).
func (c *sinkConsumer) tapDelivered(partition uint32) {
	t, recs, schemas := c.t, c.batch.records, c.batch.schemas
	c.r.tap.Offer(tap.MaskDelivered, partition, len(recs), func(i int) *tap.Sample {
		return deliveredSample(&t, partition, &recs[i], schemas[i]).Own()
	})
}

// tapProduced offers a source batch as the plugin returned it.
func (p *sourcePump) tapProduced(pm *postcard.ProducedMessages) {
	p.r.tap.Offer(tap.MaskProduced, 0, len(pm.Messages), func(i int) *tap.Sample {
		m := &pm.Messages[i]
		s := &tap.Sample{Point: tap.PointProduced, Stream: p.streams, Topic: p.topics, Schema: pm.Schema, Payload: bytes.Clone(m.Payload)}
		if m.ID != nil {
			s.ID = *m.ID
		}
		if m.Timestamp != nil {
			s.Timestamp = *m.Timestamp
		}
		if m.Headers != nil {
			s.Headers = tap.CopyHeaders(*m.Headers)
		}
		return s
	})
}

// tapSent offers the messages sent to one stream entry after transforms and encoding.
func (p *sourcePump) tapSent(s sourceStream, outs []iggyclient.OutMessage) {
	p.r.tap.Offer(tap.MaskSent, 0, len(outs), func(i int) *tap.Sample {
		return sentSample(&s, &outs[i]).Own()
	})
}

// tapDeadLettered offers failed records as they go to the dead-letter topic (or are logged and
// skipped without one), each with its stage and error.
func (d *deadLetterWriter) tapDeadLettered(recs []deadLetter) {
	r := d.r
	r.tap.Offer(tap.MaskDeadLettered, deadLetterPartition(recs), len(recs), func(i int) *tap.Sample {
		rec := &recs[i]
		s := &tap.Sample{Point: tap.PointDeadLettered, Stream: rec.stream, Topic: rec.topic, Partition: rec.partition,
			Offset: rec.offset, ID: rec.id, Timestamp: rec.timestamp, Schema: rec.schema, Payload: bytes.Clone(rec.payload)}
		if len(rec.headers) > 0 {
			s.Headers = tap.CopyHeaders(headersToPostcard(rec.headers))
		}
		errText := "unknown error"
		if rec.err != nil {
			errText = rec.err.Error()
		}
		s.Err = rec.stage + ": " + errText
		return s
	})
}

// deadLetterPartition is the partition of a sink batch's failed records (they come from one
// poll); 0 for a source's.
func deadLetterPartition(recs []deadLetter) uint32 {
	if len(recs) > 0 && recs[0].hasOffset {
		return recs[0].partition
	}
	return 0
}

// tapPath is the runner's tap route.
const tapPath = "/tap"

// handleTap serves GET /tap: the connector's sampled messages as Server-Sent Events
// (tap.Serve), ending at the query's limit, [http] tap_max_duration, the client leaving or the
// runner stopping. [http] tap = false answers 403; a fifth tap 429. HEAD gets the status and
// headers a GET would, and opens no tap.
func (r *Runner) handleTap(w http.ResponseWriter, req *http.Request) {
	h := r.settings.HTTP.Access
	if !h.Tap {
		http.Error(w, "the live tap is off on this runner: [http] tap = false (IGGY_CONNECTORS_HTTP_TAP)", http.StatusForbidden)
		return
	}
	q, err := tap.ParseQuery(req.URL.Query(), r.spec.Kind)
	if err != nil {
		http.Error(w, fmt.Sprintf("%s %q: %v", r.spec.Kind, r.spec.Key, err), http.StatusBadRequest)
		return
	}
	var sub *tap.Subscriber
	if req.Method == http.MethodHead {
		err = r.tap.Admit() // the answer a GET would start with, and no tap held open
	} else {
		sub, err = r.tap.Subscribe(q)
	}
	switch {
	case errors.Is(err, tap.ErrTooMany):
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("%s %q: %v; close one first", r.spec.Kind, r.spec.Key, err), http.StatusTooManyRequests)
		return
	case err != nil:
		http.Error(w, fmt.Sprintf("%s %q: %v", r.spec.Kind, r.spec.Key, err), http.StatusServiceUnavailable)
		return
	}
	if sub == nil {
		tap.WriteHead(w)
		return
	}
	defer sub.Close()
	tap.Serve(req.Context(), w, sub, tap.ServeOptions{Limit: q.Limit, MaxDuration: h.TapMaxDuration,
		WriteTimeout: r.settings.HTTP.Limits.WriteTimeout, Secrets: h.Secrets()})
}
