package runner

import (
	"context"
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// deadLetterFailed handles a produced batch that prepare found errors in, with tolerance = "all"
// (docs/architecture.md, decision 14): it finds the records that fail, sends them to the dead-letter topic as the plugin
// produced them, and prepares the batch again without them, so the rest is sent and the batch
// ACKed. res becomes the second prepare's result (its counts were already taken from the first).
// An error means the failed records could not be dead-lettered: the batch must not be ACKed and
// the connector fails.
func (p *sourcePump) deadLetterFailed(ctx context.Context, pm *postcard.ProducedMessages, res *sourceBatchResult) error {
	var failed []deadLetter
	good := make([]postcard.ProducedMessage, 0, len(pm.Messages))
	for i := range pm.Messages {
		m := &pm.Messages[i]
		stage, stream, topic, err := p.firstFailure(pm.Schema, m)
		if err == nil {
			good = append(good, *m)
			continue
		}
		d := deadLetter{stage: stage, err: fmt.Errorf("message %d: %w", i, err), stream: stream, topic: topic, payload: m.Payload, schema: pm.Schema}
		if m.ID != nil {
			d.id = *m.ID
		}
		if m.Timestamp != nil {
			d.timestamp = *m.Timestamp
		}
		if m.Headers != nil {
			d.headers = appendHeadersToIggy(nil, *m.Headers)
		}
		failed = append(failed, d)
	}
	if len(failed) > 0 {
		// One line per batch, not per record: a plugin producing many bad records must not flood the log.
		first := failed[0]
		p.r.log.Warn("source records failed; dead-lettered and skipped", "count", len(failed), "dead_letter_topic", p.dlq.policy.dlqTopic,
			"first_stage", first.stage, "first_stream", first.stream, "first_topic", first.topic, "first_error", first.err)
	}
	if err := p.dlq.send(ctx, failed); err != nil {
		return err
	}
	rest := *pm
	rest.Messages = good
	second := p.batch.prepare(&rest, p.debugFailure)
	res.decodeErrs, res.errs, res.firstErr = second.decodeErrs, second.errs, second.firstErr
	return nil
}

// firstFailure is the batch's firstFailure, naming every stream entry for a decode or transform
// failure.
func (p *sourcePump) firstFailure(schema postcard.Schema, m *postcard.ProducedMessage) (stage, stream, topic string, err error) {
	stage, entry, err := p.batch.firstFailure(schema, m)
	if entry < 0 {
		return stage, p.streams, p.topics, err
	}
	s := p.batch.streams[entry]
	return stage, s.Stream, s.Topic, err
}

// firstFailure runs one produced message through decode, transforms and each stream entry's
// encode and Iggy's limits, as prepare does, and names the first stage that fails on it and the
// stream entry it failed for (-1: decode and transforms, before any entry); a nil error: none
// does, or a transform filtered it out.
func (b *sourceBatch) firstFailure(schema postcard.Schema, m *postcard.ProducedMessage) (stage string, entry int, err error) {
	pl, err := codec.PayloadFromFFI(schema, m.Payload)
	if err != nil {
		return metrics.DeadLetterDecode, -1, fmt.Errorf("decode as %s: %w", schema, err)
	}
	msg := producedToCodec(m, pl)
	keep, err := transform.Run(b.transforms, &msg)
	if err != nil {
		return metrics.DeadLetterTransform, -1, err
	}
	if !keep {
		return "", -1, nil
	}
	var limits sourceBatch // scratch: outMessage appends headers to it
	for i, s := range b.streams {
		payload, err := s.Encoder.Encode(msg.Payload)
		if err != nil {
			return metrics.DeadLetterEncode, i, fmt.Errorf("encode as %s: %w", s.Encoder.Schema(), err)
		}
		if _, err := limits.outMessage(msg.ID, msg.HasHeaders, msg.Headers, payload); err != nil {
			return metrics.DeadLetterSend, i, err
		}
	}
	return "", -1, nil
}
