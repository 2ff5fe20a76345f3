package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// runSink loads and opens the sink plugin, checks every stream/topic, joins the consumer groups and
// runs one consumer goroutine per topic until ctx ends or one of them fails.
func (r *Runner) runSink(ctx context.Context, client iggyclient.Client) error {
	spec := r.spec
	path, err := r.plugins.Resolve(spec.Path) // checked again: the file may have changed since New
	if err != nil {
		return fmt.Errorf("sink %q: %w", spec.Key, err)
	}
	lib, err := plugin.LoadSink(path)
	if err != nil {
		return fmt.Errorf("sink %q: %w", spec.Key, err)
	}
	r.pluginVersion.Store(lib.Version())
	id := r.pluginInstanceID()
	if err := r.pluginCall("iggy_sink_open", func(ctx context.Context) error { return lib.OpenContext(ctx, id, spec.ConfigJSON) }); err != nil {
		return fmt.Errorf("sink %q: plugin initialization failed (ID: %d): %w", spec.Key, id, err)
	}
	r.log.Info("sink plugin opened", "path", path, "version", lib.Version(), "plugin_id", id)

	// stopBy is when the shutdown budget ends, once stopping began: settling the in-flight batch and
	// closing the plugin share one IGGY_CONNECTOR_SHUTDOWN_TIMEOUT.
	var stopBy time.Time
	closePlugin := func() error {
		if err := r.pluginClose("iggy_sink_close", stopBy, func(ctx context.Context) error { return lib.CloseContext(ctx, id) }); err != nil {
			r.log.Warn("closing the sink plugin failed", "error", err)
			return err
		}
		return nil
	}

	// Setup: every topic must exist; the sink never creates them (docs/pipeline.md §1.1).
	for _, t := range spec.SinkTopics {
		if err := r.setupSinkTopic(ctx, client, t); err != nil {
			_ = closePlugin()
			return err
		}
	}
	dlq := newDeadLetterWriter(r, client)
	if err := dlq.ensureTopic(ctx); err != nil {
		_ = closePlugin()
		return err
	}

	if !r.pause.setUp() { // started paused: paused once the consumers parked
		r.status.set(StatusRunning)
	}
	r.log.Info("sink running", "topics", len(spec.SinkTopics))

	// pollCtx stops polling at shutdown; the in-flight batch finishes under workCtx, which only
	// ends when the shutdown timeout expires.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()

	var wg sync.WaitGroup
	errs := make(chan error, len(spec.SinkTopics))
	r.pause.join(len(spec.SinkTopics))
	for _, t := range spec.SinkTopics {
		c := newSinkConsumer(r, client, lib, id, t)
		c.dlq = dlq
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.pause.leave()
			if err := c.run(runCtx, workCtx); err != nil {
				errs <- err
				stopAll() // one failed topic fails the connector; the supervisor restarts it whole
			}
		}()
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var fatal error
	select {
	case <-done:
	case <-runCtx.Done():
		if ctx.Err() != nil {
			r.status.set(StatusStopping)
			r.log.Info("stopping sink: settling in-flight batches")
		}
		stopBy = time.Now().Add(r.settings.Env.ShutdownTimeout)
		select {
		case <-done:
		case <-time.After(time.Until(stopBy)):
			cancelWork()
			fatal = fmt.Errorf("sink %q: in-flight batch not settled within %s", spec.Key, r.settings.Env.ShutdownTimeout)
		}
	}
	select {
	case err := <-errs:
		fatal = errors.Join(err, fatal)
	default:
	}
	if err := closePlugin(); err != nil && fatal == nil && errors.Is(err, ErrPluginHung) {
		fatal = err
	}
	return fatal
}

func (r *Runner) setupSinkTopic(ctx context.Context, client iggyclient.Client, t sinkTopic) error {
	if _, err := client.TopicInfo(ctx, t.Stream, t.Topic); err != nil {
		if errors.Is(err, iggyclient.ErrNotFound) {
			return fmt.Errorf("sink %q: stream %q topic %q: %w (the sink never creates them)", r.spec.Key, t.Stream, t.Topic, ErrStreamNotFound)
		}
		return fmt.Errorf("sink %q: stream %q topic %q: %w", r.spec.Key, t.Stream, t.Topic, err)
	}
	if err := client.EnsureConsumerGroup(ctx, t.Stream, t.Topic, t.Group); err != nil {
		return fmt.Errorf("sink %q: consumer group %q on stream %q topic %q: %w", r.spec.Key, t.Group, t.Stream, t.Topic, err)
	}
	return nil
}

// sinkConsumer polls one topic and hands its batches to the plugin. Buffers are reused across batches.
type sinkConsumer struct {
	r      *Runner
	client iggyclient.Client
	lib    *plugin.Sink
	id     uint32
	t      sinkTopic

	topicMeta []byte
	metaBuf   []byte
	msgsBuf   []byte
	batch     *sinkBatch
	// feed polls and stores on its own goroutine, a batch ahead of the plugin (sink_feed.go).
	feed *sinkFeed

	dlq    *deadLetterWriter
	failed []sinkFailure // tolerance = "all": this batch's records that a stage failed on

	lagCapWarned bool // the lag table was full for one of this topic's partitions
}

func newSinkConsumer(r *Runner, client iggyclient.Client, lib *plugin.Sink, id uint32, t sinkTopic) *sinkConsumer {
	return &sinkConsumer{
		r: r, client: client, lib: lib, id: id, t: t,
		topicMeta: postcard.AppendTopicMetadata(nil, postcard.TopicMetadata{Stream: t.Stream, Topic: t.Topic}),
		batch:     newSinkBatch(t.Decoder, r.spec.Transforms, t.BatchLength),
	}
}

// run polls until pollCtx ends. A batch already polled is settled under workCtx.
//
// The feed (sink_feed.go) runs the polls and stores on its own goroutine: once a poll fills its
// batch, the next one goes out while the plugin consumes it, and the consumed batch's offset is
// stored in front of the next poll. A pause or a stop discards a batch fetched ahead; then, and
// whenever nothing is fetched ahead, the loop waits for the schedule (poll_interval, the idle
// back-off) and the pause gate before it polls, as it did before the feed existed.
func (c *sinkConsumer) run(pollCtx, workCtx context.Context) error {
	r, t := c.r, c.t
	e := r.settings.Env
	pollBackoff := reconnectBackoff(e)
	var lastPoll time.Time
	schedule := newPollSchedule(t.PollInterval, t.IdlePollMax, t.IdleAfter) // the idle back-off: sink_idle.go
	// busy: batches are flowing, so the GC runs less often (gc.go).
	busy := false
	defer r.gc.setBusy(&busy, false)
	feed := newSinkFeed(c.client, t, c.storeFailed)
	c.feed = feed
	defer feed.close(workCtx) // stores the last consumed batch's offset
	settle := func() { feed.drain(); feed.flush(workCtx) }
	for {
		if feed.inFlight() && (r.pause.isPaused() || pollCtx.Err() != nil) {
			feed.drain() // the batch fetched ahead is discarded: unconsumed, unstored
		}
		if !feed.inFlight() {
			wait := schedule.remaining(lastPoll)
			if wait > 0 {
				feed.flush(workCtx) // the next poll does not follow at once
			}
			// Paused between batches: the last one settled (offset stored), the plugin stays open.
			ok, parked := r.pause.awaitParked(pollCtx, settle)
			if !ok {
				return nil // the deferred close stores the last consumed batch's offset
			}
			if parked { // resumed: poll at once, and back off afresh from poll_interval
				schedule.reset()
				wait = 0
			}
			if wait > 0 && !schedule.sleep(pollCtx, r.pause.requested(), wait) {
				if pollCtx.Err() != nil {
					return nil
				}
				continue // a pause was requested: park at the gate
			}
			feed.poll(pollCtx, workCtx, r.rate.pollCount(t.BatchLength))
		}
		feed.storeBeforeCollect(workCtx)
		res := feed.collect()
		if !res.polled {
			continue // a poll ahead found nothing it may poll: the next one lets the server pick
		}
		lastPoll = res.start
		if err := res.err; err != nil {
			if pollCtx.Err() != nil {
				return nil
			}
			if errors.Is(err, iggyclient.ErrNotFound) {
				return fmt.Errorf("sink %q: poll stream %q topic %q: %w", r.spec.Key, t.Stream, t.Topic, ErrStreamNotFound)
			}
			if errors.Is(err, iggyclient.ErrUnauthorized) {
				return fmt.Errorf("sink %q: poll stream %q topic %q: %w", r.spec.Key, t.Stream, t.Topic, err)
			}
			r.metrics.errors(1)
			r.log.Warn("poll failed; retrying", "stream", t.Stream, "topic", t.Topic, "error", err)
			if pollBackoff.Wait(pollCtx) != nil {
				return nil
			}
			continue
		}
		pollBackoff.Reset()
		batch := res.batch
		c.recordLag(batch)
		r.gc.setBusy(&busy, len(batch.Messages) > 0)
		schedule.polled(len(batch.Messages) > 0, res.start)
		if len(batch.Messages) == 0 {
			continue
		}
		if uint32(len(batch.Messages)) >= res.count && !r.pause.isPaused() && pollCtx.Err() == nil {
			// A full batch: more is likely waiting, so the next poll goes out now, overlapping
			// the plugin, with the last consumed batch's offset stored in front of it.
			feed.pollAhead(pollCtx, workCtx, r.rate.pollCount(t.BatchLength), res, res.start.Add(t.PollInterval))
		} else {
			feed.storeNow(workCtx)
		}
		err := c.handle(pollCtx, workCtx, batch)
		feed.release(res)
		if err != nil {
			return err
		}
	}
}

// recordLag sets the polled partition's consumer lag from the poll reply, which carries the
// partition's current (last) offset: the messages after the last one polled, 0 after an empty
// poll (the group is caught up). An empty reply naming partition 0 at offset 0 is skipped: a
// member that owns no partition gets that too, and it tells nothing.
func (c *sinkConsumer) recordLag(b iggyclient.Batch) {
	var lag uint64
	if n := len(b.Messages); n > 0 {
		if last := b.Messages[n-1].Offset; b.CurrentOffset > last {
			lag = b.CurrentOffset - last
		}
	} else if b.PartitionID == 0 && b.CurrentOffset == 0 {
		return
	}
	if !c.r.metrics.c.SetLag(c.t.Stream, c.t.Topic, b.PartitionID, lag) && !c.lagCapWarned {
		c.lagCapWarned = true
		c.r.log.Warn("consumer lag is not reported for this partition: the connector already reports the lag of the most partitions a stats page holds",
			"stream", c.t.Stream, "topic", c.t.Topic, "partition_id", b.PartitionID, "max_partitions", metrics.MaxLagPartitions)
	}
}

// handle runs one polled batch through decode, transforms, encode, the plugin and the offset commit.
func (c *sinkConsumer) handle(pollCtx, workCtx context.Context, batch iggyclient.Batch) error {
	r, t := c.r, c.t
	m := r.metrics
	start := time.Now()
	m.consumed(len(batch.Messages))
	taps := r.tap.Mask() // the one atomic load a batch pays for the live tap (tap.go)
	if taps&tap.MaskPolled != 0 {
		c.tapPolled(batch)
	}

	errCount := 0
	c.failed = c.failed[:0]
	tolerant := r.errors.tolerateAll
	drop := func(stage string, offset uint64, err error) {
		errCount++
		r.dropLog.dropped(droppedMessage{Stage: stage, Stream: t.Stream, Topic: t.Topic,
			PartitionID: batch.PartitionID, Offset: offset, Err: err})
		if tolerant {
			c.failed = append(c.failed, sinkFailure{stage: stage, offset: offset, err: err})
		}
	}
	decodeDur, filtered := c.batch.prepare(batch.Messages, drop)
	records := c.batch.records
	if errCount > 0 {
		m.errors(errCount)
	}
	if filtered > 0 {
		m.filtered(filtered)
	}

	c.metaBuf = postcard.AppendMessagesMetadata(c.metaBuf[:0], postcard.MessagesMetadata{
		PartitionID: batch.PartitionID, CurrentOffset: batch.CurrentOffset, Schema: t.Schema,
	})
	c.encodeRecords(records)
	if taps&tap.MaskDelivered != 0 {
		c.tapDelivered(batch.PartitionID)
	}

	report := telemetry.SinkBatch{
		Start: start, Stream: t.Stream, Topic: t.Topic, PartitionID: batch.PartitionID,
		CurrentOffset: batch.CurrentOffset, BatchSize: len(batch.Messages), ProcessedCount: len(records),
	}
	fail := func(err error) error {
		report.Total, report.Err = time.Since(start), err
		m.stage("total", report.Total)
		r.batches.Sink(workCtx, report)
		return err
	}
	if !c.awaitRateLimit(pollCtx, records) { // [rate_limit] (ratelimit.go)
		return nil // stopping: the batch is polled again by the next run (its offset is not stored)
	}
	c.feed.settle(workCtx) // the previous batch's offset is stored before this one reaches the plugin
	ffiStart := time.Now()
	delivered := len(records)
	if err := c.consume(pollCtx); err != nil {
		if !tolerant || errors.Is(err, ErrPluginHung) || pollCtx.Err() != nil {
			return fail(c.batchFailed(batch, err))
		}
		// docs/architecture.md, decision 14: find the records the plugin refuses; the rest reach it.
		r.log.Warn("consume still fails after its retries; isolating the failing records", "stream", t.Stream, "topic", t.Topic,
			"partition_id", batch.PartitionID, "offset", batch.Messages[0].Offset, "batch_size", len(records), "error", err)
		var refused []sinkFailure
		if delivered, refused, err = c.isolate(pollCtx, records); err != nil {
			return fail(err)
		}
		c.failed = append(c.failed, refused...)
	}
	ffiDur := time.Since(ffiStart)
	if err := c.deadLetterFailures(workCtx, batch, c.failed); err != nil {
		return fail(err)
	}
	m.processed(delivered)

	if t.Commit == commitAfterConsuming {
		// Stored in front of the next poll, or before the loop waits or ends (sink_feed.go).
		c.feed.consumed(batch.PartitionID, batch.Messages[len(batch.Messages)-1].Offset)
	}
	total := time.Since(start)
	prepareDur := max(0, total-ffiDur-decodeDur)
	m.stage(metrics.StageDecode, decodeDur)
	m.stage(metrics.StageFFI, ffiDur)
	m.stage(metrics.StagePrepare, prepareDur)
	m.stage(metrics.StageTotal, total)
	report.Decode, report.Prepare, report.FFI, report.Total = decodeDur, prepareDur, ffiDur, total
	r.batches.Sink(workCtx, report)
	r.logProgress("sink batch processed", "stream", t.Stream, "topic", t.Topic, "partition_id", batch.PartitionID,
		"current_offset", batch.CurrentOffset, "batch_size", len(batch.Messages), "processed_count", len(records),
		"decode_us", decodeDur.Microseconds(), "prepare_us", prepareDur.Microseconds(), "ffi_us", ffiDur.Microseconds(),
		"total_us", total.Microseconds())
	return nil
}

// consume hands the encoded batch to the plugin, retrying a non-zero return with capped backoff
// (docs/architecture.md, decision 1; [error_handling] max_retries and retry_backoff when set). Retries stop at
// shutdown: the batch is then left unstored and is delivered again.
func (c *sinkConsumer) consume(pollCtx context.Context) error {
	r := c.r
	policy := r.errors
	bo := policy.backoff()
	for attempt := 0; ; attempt++ {
		err := c.consumeOnce()
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrPluginHung) {
			return fmt.Errorf("sink %q: %w", r.spec.Key, err)
		}
		r.metrics.errors(1)
		if attempt >= policy.consumeRetries {
			return fmt.Errorf("sink %q: consume failed after %d attempts: %w", r.spec.Key, attempt+1, err)
		}
		r.log.Warn("consume failed; retrying", "attempt", attempt+1, "error", err)
		if bo.Wait(pollCtx) != nil {
			return fmt.Errorf("sink %q: stopped while retrying a failed consume (offset not stored): %w", r.spec.Key, err)
		}
	}
}

// encodeRecords writes recs as the RawMessages buffer consume hands to the plugin.
func (c *sinkConsumer) encodeRecords(recs []postcard.RawMessage) {
	c.msgsBuf = postcard.AppendRawMessages(c.msgsBuf[:0], postcard.RawMessages{Schema: c.t.Schema, Messages: recs})
}

// consumeOnce hands the encoded batch to the plugin once.
func (c *sinkConsumer) consumeOnce() error {
	return c.r.pluginCall("iggy_sink_consume", func(ctx context.Context) error {
		return c.lib.ConsumeContext(ctx, c.id, c.topicMeta, c.metaBuf, c.msgsBuf)
	})
}

// storeFailed reports a failed offset store. Not fatal: the messages will be delivered again (at
// least once).
func (c *sinkConsumer) storeFailed(s iggyclient.StoredOffset, err error) {
	c.r.metrics.errors(1)
	c.r.log.Warn("storing the consumer offset failed; the batch may be delivered again",
		"stream", c.t.Stream, "topic", c.t.Topic, "partition_id", s.PartitionID, "offset", s.Offset, "error", err)
}

// inMessageToCodec builds the message transforms see, every optional field set (docs/pipeline.md §1.4),
// pointing into f.
func inMessageToCodec(in *iggyclient.InMessage, p codec.Payload, f *messageFields) codec.Message {
	*f = messageFields{id: idFromBytes(in.ID), offset: in.Offset, sum: in.Checksum, ts: in.Timestamp, originStamp: in.OriginTimestamp}
	m := codec.Message{ID: &f.id, Offset: &f.offset, Checksum: &f.sum, Timestamp: &f.ts, OriginTimestamp: &f.originStamp, Payload: p}
	if len(in.Headers) > 0 {
		m.Headers = headersToPostcard(in.Headers)
		m.HasHeaders = true
	}
	return m
}

// idFromBytes reads Iggy's 16-byte message id (a little-endian u128 on the wire).
func idFromBytes(b [16]byte) postcard.Uint128 {
	return postcard.Uint128{Lo: binary.LittleEndian.Uint64(b[0:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

func idToBytes(id postcard.Uint128) [16]byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:8], id.Lo)
	binary.LittleEndian.PutUint64(b[8:16], id.Hi)
	return b
}

// Iggy's wire header kinds are 1..15 (raw=1 ... float64=15); postcard's indexes are the same order from 0.
func headersToPostcard(hs []iggyclient.HeaderEntry) postcard.HeaderMap {
	return appendHeadersToPostcard(make(postcard.HeaderMap, 0, len(hs)), hs)
}

func appendHeadersToPostcard(out postcard.HeaderMap, hs []iggyclient.HeaderEntry) postcard.HeaderMap {
	for _, h := range hs {
		keyKind := h.KeyKind
		if keyKind == 0 {
			keyKind = 2 // string: keys without a kind are text
		}
		out = append(out, postcard.HeaderEntry{
			Key:   postcard.HeaderField{Kind: postcard.HeaderKind(keyKind - 1), Value: h.Key},
			Value: postcard.HeaderField{Kind: postcard.HeaderKind(h.Kind - 1), Value: h.Value},
		})
	}
	return out
}

func appendHeadersToIggy(out []iggyclient.HeaderEntry, m postcard.HeaderMap) []iggyclient.HeaderEntry {
	for _, h := range m {
		out = append(out, iggyclient.HeaderEntry{
			KeyKind: uint8(h.Key.Kind) + 1, Key: h.Key.Value,
			Kind: uint8(h.Value.Kind) + 1, Value: h.Value.Value,
		})
	}
	return out
}

// errMissingMessageField: a transform left a message without a field the plugin needs.
var errMissingMessageField = errors.New("a transform removed a required message field (id, offset, checksum or timestamps)")

// logProgress logs per-batch progress: info when the connector is verbose, else debug. The
// benchmark-mode timing event is the telemetry Reporter's (r.batches).
func (r *Runner) logProgress(msg string, args ...any) {
	if r.spec.Verbose {
		r.log.Info(msg, args...)
		return
	}
	r.log.Debug(msg, args...)
}
