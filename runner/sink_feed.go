package runner

import (
	"context"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// sinkFeed is one sink consumer's Iggy side: its polls and its offset stores, run on an I/O
// goroutine of its own so that they overlap the plugin's work (docs/pipeline.md §1.8). The
// consumer goroutine decides; the I/O goroutine runs one request (or one write of two) at a time,
// in order, on the runner's one connection, where the group membership is.
//
// Poll ahead: once a poll filled its batch (a backlog), the next poll goes out while the plugin
// consumes it: one batch ahead, never more (two reply buffers take turns), no more messages than
// the last batch's average size allows in aheadBytes. It names its partition and its first offset
// (PollRequest.At): strategy "next" reads from the group's stored offset, which still lags the
// batch being consumed. The feed tracks the last offset fetched per partition; it polls ahead
// only while the client knows this member's partitions and no hand-over is under way
// (iggyclient.Assignment), round robin over them, moving on from an empty one. Otherwise (and
// whenever nothing is fetched ahead) a poll lets the server pick, as before the feed existed,
// with the last consumed batch's offset stored in front of it.
//
// Store off the critical path: a batch's offset is stored once the plugin returned for it and
// its dead letters are written, in front of the next poll (one write over 0.8; a store then a
// poll over 0.9, whose connection takes one request at a time), or alone when no poll follows
// at once. Before the plugin gets the next batch, the consumer waits until that store's reply is
// read (settle; OnStored tells it before the poll's reply arrives): so at most one batch is ever
// consumed with its offset unstored, as before, and a runner killed at any moment repeats at
// most the batch it was consuming.
//
// Discards: a pause or a stop discards the batch fetched ahead, unconsumed and unstored, and
// forgets where its partition was fetched to; so does a batch from a partition that left this
// member's assignment while it was fetched. The next poll of that partition starts from the
// group's stored offset (or the last consumed batch), so nothing is skipped.
type sinkFeed struct {
	client               iggyclient.Client
	stream, topic, group string
	autoCommit           bool
	ahead                bool          // fetch one batch ahead (offset_commit after_consuming)
	interval             time.Duration // poll_interval: a poll ahead waits it out from the last poll's start

	ops     chan feedOp     // consumer -> I/O goroutine
	results chan feedResult // the polls' results, one at a time
	done    chan struct{}   // closed when the I/O goroutine ended

	// The consumer goroutine's side.
	bufs     [2]iggyclient.PollBuffers
	held     [2]bool   // the buffer is a batch's: being consumed, or fetched ahead
	inflight bool      // a poll went out and its result is not collected yet
	due      time.Time // when the poll ahead in flight goes out (it waits out poll_interval)
	unstored iggyclient.StoredOffset
	pending  bool        // unstored holds a consumed batch's offset no request carries yet
	ticket   storeTicket // the store last sent; its outcome not settled yet while out
	out      bool
	failed   func(iggyclient.StoredOffset, error) // a store that failed (not fatal: redelivery)

	// The I/O goroutine's side.
	fetched map[uint32]uint64       // per partition: the last offset fetched (consumed, being consumed, or ahead)
	epoch   uint64                  // the assignment epoch fetched reflects
	rr      int                     // round-robin start among the assigned partitions
	targets []uint32                // scratch: partitions in the order a poll ahead tries them
	at      iggyclient.PollAt       // the position of the poll ahead in flight
	storing iggyclient.StoredOffset // the store in front of the poll in flight
	wait    *time.Timer
	later   []feedOp    // ops that arrived while a poll ahead waited, run after it
	hook    func(error) // ticket.heard, made once
}

// aheadBytes bounds what a poll ahead may fetch: its count is cut to what fits at the last
// batch's average message size.
const aheadBytes = 16 << 20

type feedOpKind uint8

const (
	opStore  feedOpKind = iota // store alone
	opPoll                     // a poll the server (or 0.9's round robin) picks the partition of
	opAhead                    // a poll ahead, naming its partition and offset
	opForget                   // roll back what a discarded batch advanced
)

// feedOp is one request for the I/O goroutine.
type feedOp struct {
	kind      feedOpKind
	ctx       context.Context // the poll's (it stops with polling)
	storeCtx  context.Context // the store's (it outlives polling, to settle at shutdown)
	store     bool            // the op carries unstored's offset first (ticket)
	offset    iggyclient.StoredOffset
	count     uint32
	buf       int // which reply buffer
	notBefore time.Time
	forget    fetchNote
}

// fetchNote is what a fetched batch advanced: the partition's last fetched offset before it.
type fetchNote struct {
	partition uint32
	prev      uint64
	hadPrev   bool
	set       bool
}

// feedResult is one poll's outcome.
type feedResult struct {
	batch  iggyclient.Batch
	err    error
	buf    int
	polled bool      // a request went out (a poll ahead may find nothing it may poll)
	start  time.Time // when it went out
	count  uint32    // messages asked for
	ahead  bool
	note   fetchNote
}

// storeTicket is one store's outcome, heard on the I/O goroutine and settled by the consumer.
type storeTicket struct {
	offset iggyclient.StoredOffset
	heard  chan struct{} // one signal per store
	err    error
	known  bool // false: the request failed before the store's reply was read
	told   bool // the I/O goroutine signalled this store already
}

func newSinkFeed(client iggyclient.Client, t sinkTopic, failed func(iggyclient.StoredOffset, error)) *sinkFeed {
	f := &sinkFeed{
		client: client, stream: t.Stream, topic: t.Topic, group: t.Group,
		autoCommit: t.Commit == commitAfterPolling, ahead: t.Commit == commitAfterConsuming, interval: t.PollInterval,
		ops: make(chan feedOp, 1), results: make(chan feedResult, 1), done: make(chan struct{}),
		failed: failed, fetched: map[uint32]uint64{},
	}
	f.ticket.heard = make(chan struct{}, 1)
	f.hook = func(err error) { f.tell(err, true) }
	go f.loop()
	return f
}

// --- The consumer goroutine's side.

// inFlight reports whether a poll went out whose result is not collected yet.
func (f *sinkFeed) inFlight() bool { return f.inflight }

// freeBuffer is a reply buffer no batch holds.
func (f *sinkFeed) freeBuffer() int {
	if f.held[0] {
		return 1
	}
	return 0
}

// poll sends a poll the server picks the partition of, with the consumed batch's offset stored
// in front of it.
func (f *sinkFeed) poll(ctx, storeCtx context.Context, count uint32) {
	f.send(feedOp{kind: opPoll, ctx: ctx, storeCtx: storeCtx, count: count, buf: f.freeBuffer()})
}

// pollAhead sends a poll ahead of the batch just collected, no earlier than notBefore, with the
// consumed batch's offset stored in front of it. Without a free buffer, or with fetching ahead
// off, it only sends that store.
func (f *sinkFeed) pollAhead(ctx, storeCtx context.Context, count uint32, last feedResult, notBefore time.Time) {
	if !f.ahead || (f.held[0] && f.held[1]) {
		f.storeNow(storeCtx)
		return
	}
	// At most aheadBytes at the last batch's average size (its reply buffer's, an upper bound).
	if n, size := len(last.batch.Messages), cap(f.bufs[last.buf].Reply); n > 0 {
		if per := size / n; per > 0 && uint64(per)*uint64(count) > aheadBytes {
			count = uint32(max(1, aheadBytes/per))
		}
	}
	f.due = notBefore
	f.send(feedOp{kind: opAhead, ctx: ctx, storeCtx: storeCtx, count: count, buf: f.freeBuffer(), notBefore: notBefore})
}

// storeBeforeCollect sends the consumed batch's store now, alone, when the poll ahead in flight
// is still waiting out poll_interval: the I/O goroutine stores it meanwhile, so that the offset
// does not wait for a poll that may be far off. Otherwise it goes in front of the next poll.
func (f *sinkFeed) storeBeforeCollect(ctx context.Context) {
	if f.inflight && f.pending && time.Now().Before(f.due) {
		f.storeNow(ctx)
	}
}

// send hands op to the I/O goroutine, with the pending store when there is one.
func (f *sinkFeed) send(op feedOp) {
	if f.pending {
		f.settle(op.storeCtx) // the store before it has been heard (it always has by now)
		op.store, op.offset, f.pending = true, f.unstored, false
		f.ticket.offset, f.ticket.told, f.out = op.offset, false, true
	}
	if op.kind == opPoll || op.kind == opAhead {
		f.held[op.buf], f.inflight = true, true
		if op.kind == opPoll {
			f.due = time.Time{}
		}
	}
	f.ops <- op
}

// collect waits for the result of the poll in flight. An empty result's buffer is free again.
func (f *sinkFeed) collect() feedResult {
	res := <-f.results
	f.inflight = false
	if res.err != nil || len(res.batch.Messages) == 0 {
		f.held[res.buf] = false
	}
	return res
}

// release frees a consumed batch's buffer.
func (f *sinkFeed) release(res feedResult) { f.held[res.buf] = false }

// discard drops a fetched batch unconsumed: its offset is never stored, and the partition is
// fetched again from where it was before it.
func (f *sinkFeed) discard(res feedResult) {
	f.held[res.buf] = false
	if res.note.set {
		f.ops <- feedOp{kind: opForget, forget: res.note}
	}
}

// consumed notes a batch the plugin took: its offset goes with the next request.
func (f *sinkFeed) consumed(partition uint32, last uint64) {
	f.unstored, f.pending = iggyclient.StoredOffset{PartitionID: partition, Offset: last}, true
}

// storeNow sends the pending store alone.
func (f *sinkFeed) storeNow(ctx context.Context) {
	if f.pending {
		f.send(feedOp{kind: opStore, storeCtx: ctx})
	}
}

// settle waits until the store sent last has been answered, reporting a failure; a store whose
// request was lost before its answer is sent again, alone. ctx bounds the wait (the shutdown
// budget): at its end the store's outcome is left unknown, as a kill would leave it.
func (f *sinkFeed) settle(ctx context.Context) {
	for f.out {
		select {
		case <-f.ticket.heard:
		case <-ctx.Done():
			return
		}
		f.out = false
		switch t := &f.ticket; {
		case !t.known:
			t.told, f.out = false, true // before the op: the I/O goroutine tells as soon as it has it
			f.ops <- feedOp{kind: opStore, storeCtx: ctx, store: true, offset: t.offset}
		case t.err != nil && f.failed != nil:
			f.failed(t.offset, t.err)
		}
	}
}

// flush stores the consumed batch's offset now and waits for the answer: before a wait, a
// pause or the end.
func (f *sinkFeed) flush(ctx context.Context) {
	f.settle(ctx)
	f.storeNow(ctx)
	f.settle(ctx)
}

// drain collects and discards a poll still in flight (a poll ahead at a pause or a stop).
func (f *sinkFeed) drain() {
	if f.inflight {
		f.discard(f.collect())
	}
}

// close drains, stores the consumed batch's offset under ctx and ends the I/O goroutine.
func (f *sinkFeed) close(ctx context.Context) {
	f.drain()
	f.flush(ctx)
	close(f.ops)
	<-f.done
}

// --- The I/O goroutine's side.

func (f *sinkFeed) loop() {
	defer close(f.done)
	for op := range f.ops {
		f.run(op)
		for len(f.later) > 0 {
			next := f.later[0]
			f.later = f.later[1:]
			f.run(next)
		}
	}
}

func (f *sinkFeed) run(op feedOp) {
	switch op.kind {
	case opStore:
		f.storeAlone(op)
	case opForget:
		f.forget(op.forget)
	default:
		f.results <- f.fetch(op)
	}
}

// tell records the outcome of the store in flight and signals it, once.
func (f *sinkFeed) tell(err error, known bool) {
	if f.ticket.told {
		return
	}
	f.ticket.err, f.ticket.known, f.ticket.told = err, known, true
	f.ticket.heard <- struct{}{}
}

func (f *sinkFeed) storeAlone(op feedOp) {
	if !op.store {
		return
	}
	f.tell(f.client.StoreOffset(op.storeCtx, f.stream, f.topic, f.group, op.offset.PartitionID, op.offset.Offset), true)
}

// forget rolls a partition's fetch position back past a discarded batch.
func (f *sinkFeed) forget(n fetchNote) {
	if n.hadPrev {
		f.fetched[n.partition] = n.prev
	} else {
		delete(f.fetched, n.partition)
	}
}

// fetch runs one poll op.
func (f *sinkFeed) fetch(op feedOp) feedResult {
	res := feedResult{buf: op.buf, ahead: op.kind == opAhead, count: op.count}
	req := iggyclient.PollRequest{Stream: f.stream, Topic: f.topic, Group: f.group, Count: op.count,
		AutoCommit: f.autoCommit, Reuse: &f.bufs[op.buf]}
	if op.store {
		f.storing = op.offset
		req.StoreFirst, req.OnStored = &f.storing, f.hook
	}
	if op.kind == opPoll {
		res.start, res.polled = time.Now(), true
		res.batch, res.err = f.client.Poll(op.ctx, req)
		f.storeUnheard(op)
		if res.err == nil && len(res.batch.Messages) > 0 {
			res.note = f.advance(res.batch.PartitionID, res.batch, false)
		}
		return res
	}
	ok := f.aheadTargets(op.ctx)
	if op.store && (!ok || time.Until(op.notBefore) > 0) { // the store goes now, alone: the plugin waits for it
		f.storeAlone(op)
		op.store, req.StoreFirst, req.OnStored = false, nil, nil
	}
	if !ok || !f.waitUntil(op.ctx, op.notBefore) {
		return res
	}
	for _, p := range f.targets {
		f.at = iggyclient.PollAt{PartitionID: p}
		if last, ok := f.fetched[p]; ok {
			f.at.Offset = last + 1
		} else {
			f.at.AfterStored = true // nothing of it fetched: nothing of it unstored either
		}
		req.At = &f.at
		res.start, res.polled = time.Now(), true
		res.batch, res.err = f.client.Poll(op.ctx, req)
		f.storeUnheard(op)
		op.store, req.StoreFirst, req.OnStored = false, nil, nil
		if res.err != nil {
			return res
		}
		if res.batch.NotOwned {
			delete(f.fetched, p)
			continue
		}
		if len(res.batch.Messages) == 0 && !f.at.AfterStored && res.batch.CurrentOffset+1 < f.at.Offset {
			delete(f.fetched, p) // it ends before what was fetched from it: deleted and made anew
			continue
		}
		if len(res.batch.Messages) > 0 {
			res.note = f.advance(p, res.batch, !f.at.AfterStored)
			if !f.stillAssigned(op.ctx, p) { // the partition moved while it was fetched
				f.forget(res.note)
				res.batch, res.note = iggyclient.Batch{}, fetchNote{}
			}
			return res
		}
	}
	return res
}

// storeUnheard: a poll that failed before its store's reply was read leaves the store unknown.
func (f *sinkFeed) storeUnheard(op feedOp) {
	if op.store {
		f.tell(nil, false)
	}
}

// advance records the batch's last offset as partition p's fetch position.
func (f *sinkFeed) advance(p uint32, b iggyclient.Batch, fromPosition bool) fetchNote {
	prev, had := f.fetched[p]
	n := fetchNote{partition: p, prev: prev, hadPrev: had && fromPosition, set: true}
	f.fetched[p] = b.Messages[len(b.Messages)-1].Offset
	return n
}

// aheadTargets fills targets with the member's partitions in round-robin order, when the client
// knows them and no hand-over is under way. A new assignment epoch forgets the positions of
// partitions that are no longer this member's.
func (f *sinkFeed) aheadTargets(ctx context.Context) bool {
	a, err := f.client.Assignment(ctx, f.stream, f.topic, f.group)
	if err != nil || !a.Known || a.Settling || len(a.Partitions) == 0 {
		return false
	}
	f.adopt(a)
	n := len(a.Partitions)
	f.targets = f.targets[:0]
	for i := range n {
		f.targets = append(f.targets, a.Partitions[(f.rr+i)%n])
	}
	f.rr = (f.rr + 1) % n
	return true
}

// adopt applies an assignment epoch to the fetch positions.
func (f *sinkFeed) adopt(a iggyclient.Assignment) {
	if a.Epoch == f.epoch {
		return
	}
	f.epoch = a.Epoch
	for p := range f.fetched {
		if !slices.Contains(a.Partitions, p) {
			delete(f.fetched, p)
		}
	}
}

// stillAssigned reads the (cached) assignment again after a poll ahead: a partition gone from it
// meanwhile makes the batch stale.
func (f *sinkFeed) stillAssigned(ctx context.Context, p uint32) bool {
	a, err := f.client.Assignment(ctx, f.stream, f.topic, f.group)
	if err != nil || a.Epoch == f.epoch {
		return true
	}
	f.adopt(a)
	return slices.Contains(a.Partitions, p)
}

// waitUntil waits for t unless ctx ends first. A store sent meanwhile is made at once (the
// poll has not gone out yet); any other op waits for its turn.
func (f *sinkFeed) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	if f.wait == nil {
		f.wait = time.NewTimer(d)
	} else {
		f.wait.Reset(d)
	}
	for {
		select {
		case <-f.wait.C:
			return true
		case <-ctx.Done():
			f.wait.Stop()
			return false
		case op, ok := <-f.ops:
			switch {
			case !ok: // closed (close drains first, so not while a poll is in flight)
				f.wait.Stop()
				return false
			case op.kind == opStore:
				f.storeAlone(op)
			default:
				f.later = append(f.later, op)
			}
		}
	}
}
