package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// sinkFailure is one polled record that a stage failed on, with tolerance = "all" (docs/architecture.md, decision 14).
type sinkFailure struct {
	stage  string // a metrics.DeadLetter* stage
	offset uint64
	err    error
}

// isolate finds the records the plugin refuses after the whole batch failed its retries: it
// consumes each half of the records, splitting a half that fails again, down to single records,
// which get the full retries before they count as failed. Every other record reaches the plugin;
// it returns how many did and the ones that failed, in offset order. A hung plugin, or a shutdown
// while retrying, is an error: the batch is then left unstored.
func (c *sinkConsumer) isolate(pollCtx context.Context, records []postcard.RawMessage) (int, []sinkFailure, error) {
	var failed []sinkFailure
	delivered := 0
	var split func(recs []postcard.RawMessage) error
	split = func(recs []postcard.RawMessage) error {
		switch len(recs) {
		case 0:
			return nil // an empty batch refused: nothing to isolate
		case 1:
			c.encodeRecords(recs)
			err := c.consume(pollCtx)
			switch {
			case err == nil:
				delivered++
			case errors.Is(err, ErrPluginHung) || pollCtx.Err() != nil:
				return err
			default:
				failed = append(failed, sinkFailure{stage: metrics.DeadLetterConsume, offset: recs[0].Offset, err: err})
			}
			return nil
		}
		half := len(recs) / 2
		for _, part := range [][]postcard.RawMessage{recs[:half], recs[half:]} {
			c.encodeRecords(part)
			err := c.consumeOnce()
			if err == nil {
				delivered += len(part)
				continue
			}
			if errors.Is(err, ErrPluginHung) {
				return fmt.Errorf("sink %q: %w", c.r.spec.Key, err)
			}
			c.r.metrics.errors(1)
			if err := split(part); err != nil {
				return err
			}
		}
		return nil
	}
	err := split(records)
	return delivered, failed, err
}

// batchFailed names the batch a fatal consume failure happened on, so a poison record can be
// found (docs/architecture.md, decision 14), and says so when the previous runner failed on the same offset.
func (c *sinkConsumer) batchFailed(batch iggyclient.Batch, err error) error {
	t := c.t
	where := fmt.Sprintf("stream %q, topic %q, partition %d, offset %d;", t.Stream, t.Topic, batch.PartitionID, batch.Messages[0].Offset)
	err = fmt.Errorf("%w (%s batch of %d up to offset %d)", err, where, len(batch.Messages), batch.Messages[len(batch.Messages)-1].Offset)
	if strings.Contains(c.r.metrics.previousError, where) {
		return fmt.Errorf("failed again on the same offset after a restart; [error_handling] tolerance = %q would dead-letter the failing records: %w", config.ToleranceAll, err)
	}
	return err
}

// deadLetterFailures sends the failed records of a polled batch to the dead-letter topic, each
// with its payload and user headers as polled. A consume failure without a dead-letter topic is
// logged here (the other stages were logged when the batch was prepared).
func (c *sinkConsumer) deadLetterFailures(ctx context.Context, batch iggyclient.Batch, failures []sinkFailure) error {
	if len(failures) == 0 {
		return nil
	}
	t := c.t
	slices.SortStableFunc(failures, func(a, b sinkFailure) int { return cmp.Compare(a.offset, b.offset) })
	recs := make([]deadLetter, len(failures))
	for i, f := range failures {
		d := deadLetter{stage: f.stage, err: f.err, stream: t.Stream, topic: t.Topic,
			hasOffset: true, partition: batch.PartitionID, offset: f.offset, schema: t.Schema}
		if in := polledAt(batch.Messages, f.offset); in != nil {
			d.payload, d.headers = in.Payload, in.Headers
			d.id, d.timestamp = idFromBytes(in.ID), in.Timestamp
		} else if i := c.recordAt(f.offset); i >= 0 {
			// A transform changed the record's offset: the record as the plugin saw it.
			rec := &c.batch.records[i]
			d.payload, d.id, d.timestamp, d.schema = rec.Payload, rec.ID, rec.Timestamp, c.batch.schemas[i]
		}
		if f.stage == metrics.DeadLetterConsume {
			c.r.dropLog.dropped(droppedMessage{Stage: f.stage, Stream: t.Stream, Topic: t.Topic,
				PartitionID: batch.PartitionID, Offset: f.offset, Err: f.err})
		}
		recs[i] = d
	}
	return c.dlq.send(ctx, recs)
}

// polledAt finds the polled message at offset (a batch is in offset order); nil when none is.
func polledAt(msgs []iggyclient.InMessage, offset uint64) *iggyclient.InMessage {
	i := sort.Search(len(msgs), func(i int) bool { return msgs[i].Offset >= offset })
	if i < len(msgs) && msgs[i].Offset == offset {
		return &msgs[i]
	}
	return nil
}

// recordAt is the index of the batch's record at offset, -1 when none is.
func (c *sinkConsumer) recordAt(offset uint64) int {
	for i := range c.batch.records {
		if c.batch.records[i].Offset == offset {
			return i
		}
	}
	return -1
}
