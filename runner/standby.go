package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// Standby sources (docs/architecture.md, decision 15). With the iggy state backend several runners of one source key
// may run at once; one is active, the others wait in standby. The lease is Iggy's own
// consumer-group assignment: every runner joins group leaseGroup on the one-partition topic
// lock_<key> of the state stream, and the member the server assigns partition 0 runs the plugin.
//
// The server moves the partition when its owner leaves the group or its connection closes (a
// killed process's socket is closed by the kernel), and only then: a member that joins later
// gets nothing while the owner stays. A connection that dies silently (a host or network gone)
// keeps its partition until the server drops the client: Iggy 0.8 does that only with
// [heartbeat] enabled (off by default), 1.2 heartbeat intervals after its last ping.
//
// The owner confirms the lease every leaseCheckEvery, reading the lock topic as a group member
// (iggyclient.Client.OwnsPartition), and stops, NACKing what it has not sent, when the server
// answers that another member holds the partition or when no check succeeded for
// leaseConfirmWithin (5 s, below the 6 s after which an Iggy server with default heartbeat
// settings drops a silent client). The runner then exits with ErrLeaseLost, and its restart
// waits in standby. Before each send and each state save the forwarder checks the lease is held
// and was confirmed within leaseConfirmWithin.
//
// The remaining window: a zombie (partitioned from the server, or frozen) may still send the
// batch whose send was already on the wire, or one it sends within leaseConfirmWithin of its last
// confirmation while the server already gave the lease away (a server heartbeat threshold below
// 5 s, or a rebalance it did not see yet). That gives duplicates, never loss: every state a
// runner saves follows the batch it describes.
//
// With the file backend there is no lease: state is not shared, so replicas would each start
// from their own file. One runner per source key, as upstream.

// ErrLeaseLost: another runner of the source holds the lease, or this one could not confirm it.
var ErrLeaseLost = errors.New("source lease lost")

const (
	leaseGroup         = "runners"
	leaseCheckEvery    = 500 * time.Millisecond
	leaseConfirmWithin = 5 * time.Second
)

// LockTopic is the lease topic of source connector key in the state stream.
func LockTopic(key string) string { return "lock_" + key }

// sourceLease is this runner's hold on partition 0 of the source's lock topic.
type sourceLease struct {
	client        iggyclient.Client
	stream, topic string
	held          atomic.Bool  // false once lost; the forwarder sends nothing then
	confirmed     atomic.Int64 // monotonic nanoseconds (since leaseEpoch) of the last confirmation
}

// leaseEpoch anchors sourceLease.confirmed on the monotonic clock, which keeps counting while the
// process is stopped (SIGSTOP, a frozen VM): a zombie waking up sees how long it was away.
var leaseEpoch = time.Now()

func (l *sourceLease) confirm() { l.confirmed.Store(int64(time.Since(leaseEpoch))) }

func (l *sourceLease) sinceConfirmed() time.Duration {
	return time.Since(leaseEpoch) - time.Duration(l.confirmed.Load())
}

// acquireLease joins the lock topic's group and waits in standby until this runner holds the
// partition. It returns nil, nil when ctx ended first.
func (r *Runner) acquireLease(ctx context.Context, client iggyclient.Client) (*sourceLease, error) {
	key := r.spec.Key
	l := &sourceLease{client: client, stream: r.settings.Runtime.State.Stream, topic: LockTopic(key)}
	fail := func(what string, err error) error {
		return fmt.Errorf("source %q: lease %s on stream %q topic %q: %w", key, what, l.stream, l.topic, err)
	}
	if err := client.EnsureTopicWith(ctx, l.stream, l.topic, state.StateTopicSpec); err != nil {
		return nil, stopOr(ctx, fail("topic", err))
	}
	if err := client.EnsureConsumerGroup(ctx, l.stream, l.topic, leaseGroup); err != nil {
		return nil, stopOr(ctx, fail("group", err))
	}
	// OwnsPartition needs a message in the partition: each runner leaves one naming itself.
	host, _ := os.Hostname()
	marker := fmt.Appendf(nil, `{"runner":%q,"pid":%d,"joined_at":%q}`, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
	if err := client.Send(ctx, l.stream, l.topic, iggyclient.Partitioning{Kind: iggyclient.PartitionByID}, []iggyclient.OutMessage{{Payload: marker}}); err != nil {
		return nil, stopOr(ctx, fail("marker", err))
	}
	start := time.Now()
	waiting := false
	for ; ; waiting = true {
		owns, err := client.OwnsPartition(ctx, l.stream, l.topic, leaseGroup, 0)
		if err != nil {
			return nil, stopOr(ctx, fail("check", err))
		}
		if owns {
			break
		}
		if !waiting {
			r.status.set(StatusStandby)
			r.log.Info("standby: another runner of this source holds the lease", "stream", l.stream, "topic", l.topic)
		}
		if backoff.Sleep(ctx, leaseCheckEvery) != nil {
			return nil, nil
		}
	}
	l.confirm()
	l.held.Store(true)
	r.active.Store(true)
	if waiting {
		r.status.set(StatusStarting) // opening the plugin with the state the last active one saved
	}
	r.log.Info("lease acquired: this runner is the active one", "stream", l.stream, "topic", l.topic,
		"waited_ms", time.Since(start).Milliseconds())
	return l, nil
}

// stopOr is nil when ctx ended (a stop while waiting is no failure), else err.
func stopOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// watch confirms the lease until ctx ends, and calls lost once when it is gone. The check runs
// on its own goroutine without a deadline: a deadline would close the shared connection, which
// itself gives the partition away. A check that has not come back is judged by the time since
// the last confirmation instead.
func (l *sourceLease) watch(ctx context.Context, lost func(error)) {
	taken := make(chan struct{}) // closed when the server answered that another member owns it
	go func() {
		for backoff.Sleep(ctx, leaseCheckEvery) == nil {
			owns, err := l.client.OwnsPartition(ctx, l.stream, l.topic, leaseGroup, 0)
			if err != nil {
				continue // judged by the time since the last confirmation
			}
			if !owns {
				close(taken)
				return
			}
			l.confirm()
		}
	}()
	tick := time.NewTicker(leaseCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-taken:
			l.giveUp(lost, fmt.Errorf("%w: the server assigned partition 0 of %s/%s to another runner", ErrLeaseLost, l.stream, l.topic))
			return
		case <-tick.C:
			if since := l.sinceConfirmed(); since >= leaseConfirmWithin {
				l.giveUp(lost, fmt.Errorf("%w: not confirmed by the server for %s", ErrLeaseLost, since.Round(time.Millisecond)))
				return
			}
		}
	}
}

func (l *sourceLease) giveUp(lost func(error), err error) {
	l.held.Store(false)
	lost(err)
}

// holds reports whether a batch (or its state) may still be sent: the lease is not known lost and
// was confirmed less than leaseConfirmWithin ago. A nil lease (file backend) always may. The
// time test is what stops a runner that was frozen past the point where the server may have
// given its partition away before its watcher ran again.
func (l *sourceLease) holds() bool {
	return l == nil || (l.held.Load() && l.sinceConfirmed() < leaseConfirmWithin)
}
