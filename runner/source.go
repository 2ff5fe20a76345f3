package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/state"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// Limits Iggy puts on one message (docs/pipeline.md §2.4).
const (
	maxPayloadBytes     = 64_000_000
	maxUserHeaderBytes  = 100_000
	defaultSendChunkLen = 1_000_000 // batch_length = 0
)

// producedBatch is one batch the plugin handed over, already copied out of its buffer.
type producedBatch struct {
	id  uint64
	msg postcard.ProducedMessages
	buf []byte // the copy msg aliases, released to the plugin package once forwarded
}

// sourcePump moves batches from the plugin thread (deliver) to the sending goroutine (forward).
type sourcePump struct {
	r      *Runner
	client iggyclient.Client
	lib    *plugin.Source
	id     uint32
	state  state.Saver
	lease  *sourceLease // nil without one (file backend); nothing is sent once it is lost

	// queue is closed only after the plugin's close returned, when no send callback can come any more.
	queue    chan producedBatch
	stopping atomic.Bool // v2 deliveries are rejected once set
	// sessionDone ends with the session (shutdown): a batch waiting for the rate limit gives up.
	sessionDone <-chan struct{}
	abort       chan struct{} // closed (giveUp) when shutdown stops waiting; unblocks everything
	abortOnce   sync.Once

	nacks     atomic.Int32 // consecutive NACKs, including batches rejected in deliver
	stalled   chan error   // the first stall or fatal error of the forwarder
	stallOnce sync.Once
	lastSend  []time.Time // per stream entry, for linger_time spacing
	streams   string      // the stream entries' streams and topics, comma-joined, for batch logs
	topics    string
	batch     *sourceBatch                    // the batch being forwarded; its buffers are reused
	spareMsgs chan []postcard.ProducedMessage // a forwarded batch's message slice, for the next decode
	dlq       *deadLetterWriter

	// The batch result is called on the forwarder's own goroutine (a goroutine per call costs a
	// wake-up per batch); watchdog reports it hung after the plugin call timeout, and resultHung
	// is closed then, so shutdown stops waiting for the forwarder stuck in the plugin.
	watchdog       *time.Timer
	resultHung     chan struct{}
	resultHungOnce sync.Once
}

// runSource takes the lease (iggy state backend), loads the state and the plugin, opens it with
// that state, checks the target streams and runs sourceSession until ctx ends or the source
// stalls; a pause ends a session, and its resume opens the plugin again with the state saved last.
func (r *Runner) runSource(ctx context.Context, client iggyclient.Client) error {
	spec := r.spec
	if len(spec.SourceStreams) == 0 {
		return fmt.Errorf("source %q: no streams configured", spec.Key)
	}
	var lease *sourceLease
	if r.sharedState() {
		var err error
		if lease, err = r.acquireLease(ctx, client); err != nil || lease == nil {
			return err // nil: stopped in standby
		}
		leaseCtx, loseLease := context.WithCancelCause(ctx)
		defer loseLease(nil)
		go lease.watch(leaseCtx, func(err error) {
			r.active.Store(false)
			r.log.Warn("stopping the source: its lease is lost", "error", err)
			loseLease(err)
		})
		ctx = leaseCtx
	} else if err := os.MkdirAll(r.settings.StatePath, 0o755); err != nil {
		// Upstream creates the state directory (with parents) at startup.
		return fmt.Errorf("source %q: create state directory: %w", spec.Key, err)
	}
	store, saved, err := r.stateBackend(client).Open(ctx, spec.Key)
	if err != nil {
		return fmt.Errorf("source %q: load state: %w", spec.Key, err)
	}
	// Every path below waits for the forwarder, the only saver, before returning: Close then leaves
	// the last saved state in upstream's file format.
	defer func() {
		if err := store.Close(); err != nil {
			r.log.Warn("writing the source state in upstream's format failed; it stays in the slots file", "error", err)
		}
	}()
	path, err := r.plugins.Resolve(spec.Path) // checked again: the file may have changed since New
	if err != nil {
		return fmt.Errorf("source %q: %w", spec.Key, err)
	}
	lib, err := plugin.LoadSource(path)
	if err != nil {
		return fmt.Errorf("source %q: %w", spec.Key, err)
	}
	r.pluginVersion.Store(lib.Version())
	id := r.pluginInstanceID()
	// The plugin is opened now, unless the connector starts paused, and again at every resume:
	// with the same id (its close removed it) and the state saved last.
	open := func(state []byte) error {
		if err := r.pluginCall("iggy_source_open", func(ctx context.Context) error { return lib.OpenContext(ctx, id, spec.ConfigJSON, state) }); err != nil {
			return fmt.Errorf("source %q: plugin initialization failed (ID: %d): %w", spec.Key, id, err)
		}
		r.log.Info("source plugin opened", "path", path, "version", lib.Version(), "plugin_id", id,
			"state_bytes", len(state), "acks", lib.SupportsAck())
		return nil
	}
	opened := !r.pause.isPaused()
	if opened {
		if err := open(saved); err != nil {
			return err
		}
	}
	closePlugin := func() error {
		return r.pluginClose("iggy_source_close", time.Time{}, func(ctx context.Context) error { return lib.CloseContext(ctx, id) })
	}
	closeOpened := func() {
		if opened {
			_ = closePlugin()
		}
	}
	for _, s := range spec.SourceStreams {
		if err := r.ensureSourceTopic(ctx, client, s); err != nil {
			closeOpened()
			return err
		}
	}
	dlq := newDeadLetterWriter(r, client)
	if err := dlq.ensureTopic(ctx); err != nil {
		closeOpened()
		return err
	}
	r.pause.join(1)
	defer r.pause.leave()
	for {
		if !opened {
			if !r.pause.await(ctx) {
				return nil
			}
			if err := open(store.Latest()); err != nil {
				return err
			}
		}
		paused, err := r.sourceSession(ctx, client, lib, id, store, lease, dlq, closePlugin)
		if err != nil || !paused {
			return err
		}
		opened = false
	}
}

// sourceSession forwards the batches of one open of the plugin until ctx ends, the source stalls
// or a pause is requested; then it closes the plugin and settles what was accepted (sent, state
// saved). paused: it ended for a pause.
func (r *Runner) sourceSession(ctx context.Context, client iggyclient.Client, lib *plugin.Source, id uint32,
	store state.Saver, lease *sourceLease, dlq *deadLetterWriter, closePlugin func() error) (paused bool, fatal error) {
	spec := r.spec
	p := &sourcePump{
		r: r, client: client, lib: lib, id: id, state: store, dlq: dlq, lease: lease,
		queue:       make(chan producedBatch, r.settings.Env.SourceQueue),
		abort:       make(chan struct{}),
		stalled:     make(chan error, 1),
		resultHung:  make(chan struct{}),
		spareMsgs:   make(chan []postcard.ProducedMessage, 1),
		lastSend:    make([]time.Time, len(spec.SourceStreams)),
		batch:       newSourceBatch(spec.Transforms, spec.SourceStreams),
		sessionDone: ctx.Done(),
	}
	for i, st := range spec.SourceStreams {
		sep := ""
		if i > 0 {
			sep = ","
		}
		p.streams += sep + st.Stream
		p.topics += sep + st.Topic
	}

	// workCtx bounds in-flight sends; it outlives ctx by at most the shutdown timeout.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		p.forwardLoop(workCtx)
	}()

	if err := r.pluginCall("iggy_source_handle", func(ctx context.Context) error {
		return callWithContext(ctx, func() error { return lib.Start(id, p.deliver) })
	}); err != nil {
		p.stopping.Store(true)
		p.finish(closePlugin())
		<-forwarded
		return false, fmt.Errorf("source %q: %w: starting the plugin's poll loop failed: %w", spec.Key, ErrSourceStalled, err)
	}
	r.metrics.c.CreateErrorSeries() // upstream creates it when forwarding starts (docs/http-api.md §4.3.3)
	r.status.set(StatusRunning)
	r.log.Info("source running", "streams", len(spec.SourceStreams), "acks", lib.SupportsAck())

	select {
	case <-ctx.Done():
		r.status.set(StatusStopping)
		r.log.Info("stopping source: closing the plugin and settling accepted batches")
	case fatal = <-p.stalled:
	case <-r.pause.requested():
		paused = true
		r.log.Info("pausing source: closing the plugin and settling accepted batches")
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrLeaseLost) {
		fatal = errors.Join(fatal, fmt.Errorf("source %q: %w", spec.Key, cause))
	}

	// Stop accepting v2 batches and close the plugin, which stops its poll loop (NACKing anything
	// pending on its side) while the forwarder keeps settling what was accepted: sent, state saved,
	// result delivered. A legacy plugin may still be blocked handing over a batch; the forwarder
	// drains it, so close can return.
	p.stopping.Store(true)
	closed := make(chan error, 1)
	go func() { closed <- closePlugin() }()
	// One deadline for close and settling: a Done channel stays readable, unlike a timer's channel,
	// which the first select below may already have drained.
	deadline, cancelDeadline := context.WithTimeout(context.Background(), r.settings.Env.ShutdownTimeout)
	defer cancelDeadline()
	select {
	case err := <-closed:
		if err != nil {
			r.log.Warn("closing the source plugin failed", "error", err)
			if errors.Is(err, ErrPluginHung) {
				fatal = errors.Join(fatal, err)
			}
		}
		p.finish(err)
	case <-deadline.Done():
		p.giveUp()
		fatal = errors.Join(fatal, fmt.Errorf("source %q: plugin close did not return within %s", spec.Key, r.settings.Env.ShutdownTimeout))
	}
	select {
	case <-forwarded:
	case <-deadline.Done():
		p.giveUp()
		cancelWork()
		select {
		case <-forwarded:
		case <-p.resultHung: // the forwarder is stuck in the plugin's batch result, reported already
		}
		fatal = errors.Join(fatal, fmt.Errorf("source %q: in-flight batch not settled within %s", spec.Key, r.settings.Env.ShutdownTimeout))
	}
	return paused, fatal
}

// sharedState reports whether the source's state lives in Iggy, where every replica reads it;
// only then do replicas run active/standby (standby.go).
func (r *Runner) sharedState() bool {
	return r.spec.Kind != kindSink && r.settings.Runtime.State.Backend == config.StateBackendIggy
}

// stateBackend is where the source's state is kept: [state] backend.
func (r *Runner) stateBackend(client iggyclient.Client) state.Backend {
	st := r.settings.Runtime.State
	if st.Backend == config.StateBackendIggy {
		return state.IggyBackend{Client: client, Stream: st.Stream, Dir: r.settings.StatePath, Log: r.log}
	}
	return state.FileBackend{Dir: r.settings.StatePath}
}

// finish ends the forwarder once the plugin's close returned. Whatever close answered, the SDK
// has stopped the poll loop, so no send callback can arrive: the queue is closed and what was
// accepted is still settled. Only a hung close leaves callbacks possible; then the forwarder gives up.
func (p *sourcePump) finish(closeErr error) {
	if errors.Is(closeErr, ErrPluginHung) {
		p.giveUp()
		return
	}
	close(p.queue)
}

// giveUp tells the forwarder and any blocked legacy hand-over to stop waiting.
func (p *sourcePump) giveUp() { p.abortOnce.Do(func() { close(p.abort) }) }

// ensureSourceTopic creates a missing target stream and topic (1 partition), as upstream's producer
// init does. A missing numeric id cannot be created and stops the connector.
func (r *Runner) ensureSourceTopic(ctx context.Context, client iggyclient.Client, s sourceStream) error {
	if err := client.EnsureTopic(ctx, s.Stream, s.Topic, 1); err != nil {
		if errors.Is(err, iggyclient.ErrNotFound) {
			return fmt.Errorf("source %q: stream %q topic %q: %w (%w)", r.spec.Key, s.Stream, s.Topic, ErrStreamNotFound, err)
		}
		return fmt.Errorf("source %q: create stream %q topic %q: %w", r.spec.Key, s.Stream, s.Topic, err)
	}
	return nil
}

// deliver runs on a plugin thread with a copy of the batch, released once forwarded or rejected.
// A v2 batch is queued without blocking, or rejected (the plugin counts a NACK and polls again)
// when the queue is full or the pump is stopping. A legacy plugin cannot be told "no", so its batch waits for room instead.
func (p *sourcePump) deliver(batchID uint64, buf []byte) (accepted bool) {
	var reuse []postcard.ProducedMessage
	select {
	case reuse = <-p.spareMsgs:
	default:
	}
	pm, err := postcard.DecodeProducedMessagesInto(buf, reuse)
	if err != nil {
		plugin.ReleaseBatch(buf)
		p.r.metrics.errors(1)
		p.r.log.Warn("source batch is not valid postcard; rejected", "batch_id", batchID, "error", err)
		p.noteNack()
		return false
	}
	b := producedBatch{id: batchID, msg: pm, buf: buf}
	defer func() {
		if !accepted {
			p.release(b)
		}
	}()
	if !p.lib.SupportsAck() {
		select {
		case p.queue <- b:
			handOver()
			return true
		case <-p.abort:
			return false
		}
	}
	if p.stopping.Load() {
		return false
	}
	select {
	case p.queue <- b:
		handOver()
		return true
	default:
		p.r.log.Debug("source queue full; batch rejected", "batch_id", batchID)
		p.noteNack()
		return false
	}
}

// handOver yields the plugin thread's P right after a batch was queued. The forwarder it woke
// waits in that P's run queue, and when the callback returns to C the P sits in a syscall state
// until the scheduler's monitor takes it back: a median 148 µs per batch on the 2-core VM. The
// callback's goroutine is locked to the plugin thread, so yielding hands the P (and the
// forwarder) to another thread at once (48 µs); the plugin thread goes back to C a moment later,
// when the batch result is still far off.
func handOver() { runtime.Gosched() }

// release hands a batch's memory back for the next one once nothing refers to it: the copy to
// the plugin package, the message slice to the next decode.
func (p *sourcePump) release(b producedBatch) {
	plugin.ReleaseBatch(b.buf)
	clear(b.msg.Messages)
	select {
	case p.spareMsgs <- b.msg.Messages:
	default:
	}
}

// noteNack counts one NACK towards the stall limit (docs/architecture.md, decision 5): the plugin SDK stops its poll loop
// for good after that many consecutive NACKs.
func (p *sourcePump) noteNack() {
	if !p.lib.SupportsAck() {
		return
	}
	if n := p.nacks.Add(1); int(n) >= p.r.settings.Env.StallNacks {
		p.stall(fmt.Errorf("source %q: %w: %d consecutive NACKs stop the plugin's poll loop", p.r.spec.Key, ErrSourceStalled, n))
	}
}

func (p *sourcePump) stall(err error) {
	p.stallOnce.Do(func() { p.stalled <- err })
}

func (p *sourcePump) forwardLoop(workCtx context.Context) {
	busy := false // batches with messages are flowing: the GC runs less often (gc.go)
	defer p.r.gc.setBusy(&busy, false)
	for {
		select {
		case b, ok := <-p.queue:
			if !ok {
				return
			}
			p.r.gc.setBusy(&busy, len(b.msg.Messages) > 0)
			p.forward(workCtx, b)
			p.release(b) // forward is done with it: sent, state saved (the store keeps a copy), settled
		case <-p.abort:
			return
		}
	}
}

// forward runs one batch: decode, transforms, encode per stream, send to every stream, save state,
// then deliver the ACK/NACK (docs/pipeline.md §2.4 with decision 4 (docs/architecture.md)).
func (p *sourcePump) forward(ctx context.Context, b producedBatch) {
	r := p.r
	m := r.metrics
	start := time.Now()
	msgs := b.msg.Messages
	m.produced(len(msgs))
	taps := r.tap.Mask() // the one atomic load a batch pays for the live tap (tap.go)
	if taps&tap.MaskProduced != 0 {
		p.tapProduced(&b.msg)
	}

	res := p.batch.prepare(&b.msg, p.debugFailure)
	decodeDur, prepareDur := res.decode, res.prepare
	if res.decodeErrs > 0 {
		m.errors(res.decodeErrs)
	}
	if res.errs > 0 {
		m.errors(res.errs)
	}
	if res.filtered > 0 {
		m.filtered(res.filtered)
	}

	ack := true
	var nackReason error // why the batch is NACKed, for the batch report
	sentCount := 0
	t2 := time.Now()
	if res.decodeErrs+res.errs > 0 && r.errors.tolerateAll {
		if err := p.deadLetterFailed(ctx, &b.msg, &res); err != nil {
			res.firstErr = err
			p.stall(err) // docs/architecture.md, decision 14: fail rather than lose the records
		}
	}
	if !p.lease.holds() {
		ack = false
		nackReason = fmt.Errorf("source %q: batch %d not sent: %w", r.spec.Key, b.id, ErrLeaseLost)
		r.log.Warn(nackReason.Error())
	} else if bad := res.decodeErrs + res.errs; bad > 0 {
		ack = false
		m.errors(1)
		msg := fmt.Sprintf("Rejected source batch %d after %d decode or processing errors; nothing was sent; first error: %v", b.id, bad, res.firstErr)
		nackReason = errors.New(msg)
		r.status.setError(msg)
		r.log.Warn(msg)
	} else if !p.awaitRateLimit(ctx) { // [rate_limit] (ratelimit.go)
		ack = false
		nackReason = fmt.Errorf("source %q: batch %d not sent: the source stopped while it waited for its rate limit", r.spec.Key, b.id)
		r.log.Info(nackReason.Error())
	} else {
		for si, s := range r.spec.SourceStreams {
			outs := p.batch.outs[si]
			if err := p.send(ctx, si, s, outs); err != nil {
				ack = false
				m.errors(1)
				msg := fmt.Sprintf("Failed to send %d messages to stream %q topic %q: %v", len(outs), s.Stream, s.Topic, err)
				nackReason = errors.New(msg)
				r.status.setError(msg)
				r.log.Warn(msg)
				break
			}
			sentCount += len(outs)
			if taps&tap.MaskSent != 0 {
				p.tapSent(s, outs)
			}
		}
		if ack {
			m.sent(sentCount)
		}
	}
	sendDur := time.Since(t2)
	m.stage(metrics.StageIggySend, sendDur)

	stateSaved := false
	var stateDur time.Duration
	if ack && b.msg.HasState && !p.lease.holds() {
		ack = false
		nackReason = fmt.Errorf("source %q: state of batch %d not saved: %w", r.spec.Key, b.id, ErrLeaseLost)
		r.log.Warn(nackReason.Error())
	}
	if ack && b.msg.HasState {
		t3 := time.Now()
		if err := p.state.Save(ctx, b.msg.State); err != nil {
			ack = false
			m.errors(1)
			msg := fmt.Sprintf("Failed to save the state of source batch %d: %v", b.id, err)
			nackReason = errors.New(msg)
			r.status.setError(msg)
			r.log.Warn(msg)
		} else {
			stateDur = time.Since(t3)
			stateSaved = true
			m.stage(metrics.StageStateSave, stateDur)
		}
	}

	p.settle(b.id, ack)
	total := time.Since(start)
	m.stage(metrics.StageDecode, decodeDur)
	m.stage(metrics.StagePrepare, prepareDur)
	m.stage(metrics.StageTotal, total)
	r.batches.Source(ctx, telemetry.SourceBatch{
		Start: start, Stream: p.streams, Topic: p.topics, BatchSize: len(msgs), SentCount: sentCount,
		Decode: decodeDur, Prepare: prepareDur, IggySend: sendDur,
		StateSaved: stateSaved, StateSave: stateDur, Total: total, Err: nackReason,
	})
	r.logProgress("source batch processed", "stream", p.streams, "topic", p.topics, "batch_id", b.id, "batch_size", len(msgs), "sent_count", sentCount,
		"ack", ack, "decode_us", decodeDur.Microseconds(), "prepare_us", prepareDur.Microseconds(),
		"iggy_send_us", sendDur.Microseconds(), "state_saved", stateSaved, "state_save_us", stateDur.Microseconds(),
		"total_us", total.Microseconds())
}

// debugFailure logs a message that prepare failed on (its error names the message), at debug level.
func (p *sourcePump) debugFailure(msg string, err error) { p.r.log.Debug(msg, "error", err) }

// settle delivers the batch result and tracks consecutive NACKs. A result the plugin refuses while
// the connector is not stopping means its poll loop has stopped (hook failure or a 30 s timeout race).
func (p *sourcePump) settle(batchID uint64, ack bool) {
	r := p.r
	if !p.lib.SupportsAck() {
		return
	}
	err := p.batchResult(batchID, ack)
	if errors.Is(err, ErrPluginHung) {
		return // reported by the watchdog
	}
	if ack && err == nil {
		p.nacks.Store(0)
	}
	if err != nil {
		if p.stopping.Load() || r.status.is(StatusStopping, StatusStopped) {
			r.log.Debug("batch result refused while stopping", "batch_id", batchID, "error", err)
			return
		}
		r.metrics.errors(1)
		r.status.setError(fmt.Sprintf("Failed to deliver %s for batch %d: %v", ackWord(ack), batchID, err))
		p.stall(fmt.Errorf("source %q: %w: the plugin refused the result of batch %d: %w", r.spec.Key, ErrSourceStalled, batchID, err))
		return
	}
	if !ack {
		p.noteNack()
	}
}

// batchResult calls the plugin's batch result on this goroutine, watched: if it has not returned
// after the plugin call timeout, resultWedged reports the connector hung while the call goes on,
// and batchResult returns ErrPluginHung once it does.
func (p *sourcePump) batchResult(batchID uint64, ack bool) error {
	limit := p.r.settings.Env.PluginCallTimeout
	if limit <= 0 {
		return p.lib.BatchResultContext(context.Background(), p.id, batchID, ack)
	}
	if p.watchdog == nil {
		p.watchdog = time.AfterFunc(limit, func() { p.resultWedged(limit) })
	} else {
		p.watchdog.Reset(limit)
	}
	err := p.lib.BatchResultContext(context.Background(), p.id, batchID, ack)
	if !p.watchdog.Stop() {
		return ErrPluginHung // resultWedged reported it
	}
	return err
}

// resultWedged runs when a batch result call outlived limit: the connector stalls with the error
// a timed-out plugin call gives, and shutdown no longer waits for the forwarder.
func (p *sourcePump) resultWedged(limit time.Duration) {
	p.resultHungOnce.Do(func() {
		r := p.r
		err := fmt.Errorf("iggy_source_batch_result: %w after %s", ErrPluginHung, limit)
		r.metrics.errors(1)
		r.status.setError(fmt.Sprintf("Failed to deliver a batch result: %v", err))
		p.stall(fmt.Errorf("source %q: %w: %w", r.spec.Key, ErrSourceStalled, err))
		close(p.resultHung)
	})
}

func ackWord(ack bool) string {
	if ack {
		return "Ack"
	}
	return "Nack"
}

// send writes msgs to one stream entry in chunks of batch_length, spaced by linger_time, retrying a
// failed chunk (only that chunk and later ones) with capped backoff.
func (p *sourcePump) send(ctx context.Context, si int, s sourceStream, msgs []iggyclient.OutMessage) error {
	policy := p.r.errors // [error_handling] max_retries and retry_backoff, else the runner's settings
	chunk := int(s.BatchLength)
	if chunk == 0 {
		chunk = defaultSendChunkLen
	}
	for from := 0; from < len(msgs); from += chunk {
		part := msgs[from:min(from+chunk, len(msgs))]
		bo := policy.backoff()
		for attempt := 0; ; attempt++ {
			if backoff.Sleep(ctx, s.Linger-time.Since(p.lastSend[si])) != nil {
				return ctx.Err()
			}
			err := p.client.Send(ctx, s.Stream, s.Topic, iggyclient.Partitioning{Kind: "balanced"}, part)
			if err == nil {
				p.lastSend[si] = time.Now()
				break
			}
			if errors.Is(err, iggyclient.ErrNotFound) || errors.Is(err, iggyclient.ErrUnauthorized) || attempt >= policy.sendRetries {
				return err
			}
			p.r.log.Warn("send failed; retrying", "stream", s.Stream, "topic", s.Topic, "attempt", attempt+1, "error", err)
			if bo.Wait(ctx) != nil {
				return err
			}
		}
	}
	return nil
}
