package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// groupKey names a consumer group as the caller does.
type groupKey struct{ stream, topic, group string }

// Group is a consumer group the client was asked to be a member of (or polls): its wire
// reference, whether to rejoin it after every reconnect, and what a protocol caches about this
// connection's place in it. It is guarded by the wire token.
type Group struct {
	stream, topic, group string
	Ref                  iggywire.GroupRef
	rejoin               bool

	// Assignment is the partitions this member may poll, as the protocol learns them from the
	// server (0.9's Sync, 0.8's GetConsumerGroup), valid for connection Seq (a Link's) until
	// Synced is older than the protocol allows; Next is the round-robin cursor. A reconnect
	// resets Synced: membership ends with the connection. Known and Settling are
	// api.Assignment's; Epoch changes with Seq or Partitions (Assigned).
	Seq        uint64
	Synced     time.Time
	Generation uint64
	Partitions []uint32
	Next       int
	Known      bool
	Settling   bool
	Epoch      uint64

	spare  []uint32 // the other buffer of Partitions, for the next read (Scratch)
	public []uint32 // Partitions as the callers of Assignment see them: replaced, never changed
}

// Forget drops a cached assignment the server contradicted.
func (g *Group) Forget() { g.Synced = time.Time{} }

// Scratch is an empty list to read the next assignment into (Assigned takes it over).
func (g *Group) Scratch() []uint32 { return g.spare[:0] }

// Assigned records an assignment read from the server on connection seq: the partitions (read
// into Scratch), the group's generation (0 where the protocol has none), whether the client
// knows which member it is, and whether a hand-over is under way.
func (g *Group) Assigned(seq, generation uint64, parts []uint32, known, settling bool) {
	if seq != g.Seq || generation != g.Generation {
		g.Next = 0
	}
	if seq != g.Seq || generation != g.Generation || known != g.Known || !slices.Equal(parts, g.Partitions) {
		g.Epoch++
		g.public = slices.Clone(parts)
	}
	g.spare = g.Partitions
	g.Seq, g.Synced, g.Generation, g.Partitions, g.Known, g.Settling = seq, time.Now(), generation, parts, known, settling
}

// assignment is the api view of the cached assignment.
func (g *Group) assignment() api.Assignment {
	return api.Assignment{Known: g.Known, Partitions: g.public, Settling: g.Settling, Epoch: g.Epoch}
}

// Name is the group's name, for logs.
func (g *Group) Name() string { return g.group }

// identifier is a parsed string: the wire identifier, or why it cannot be one.
type identifier struct {
	id  iggywire.Identifier
	err error
}

// identifier turns a stream or topic string into a wire identifier (api.ParseIdentifier), kept
// so that hot paths neither re-parse nor allocate.
func (e *Engine[C]) identifier(what, s string) (iggywire.Identifier, error) {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	return e.identifierLocked(what, s)
}

func (e *Engine[C]) identifierLocked(what, s string) (iggywire.Identifier, error) {
	if v, ok := e.ids[s]; ok {
		return v.id, v.err
	}
	var v identifier
	switch n, numeric, err := api.ParseIdentifier(s); {
	case err != nil:
		v.err = fmt.Errorf("%s %q: %w", what, s, err)
	case numeric:
		v.id = iggywire.NumericID(n)
	default:
		v.id = iggywire.NamedID(s)
	}
	if len(e.ids) < maxCachedIdentifiers {
		e.ids[s] = v
	}
	return v.id, v.err
}

// maxCachedIdentifiers bounds the identifier caches against a caller that names endless streams.
const maxCachedIdentifiers = 4096

// topicRef resolves a stream and topic pair.
func (e *Engine[C]) topicRef(stream, topic string) (iggywire.TopicRef, error) {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	return e.topicRefLocked(stream, topic)
}

func (e *Engine[C]) topicRefLocked(stream, topic string) (iggywire.TopicRef, error) {
	s, err := e.identifierLocked("stream", stream)
	if err != nil {
		return iggywire.TopicRef{}, err
	}
	t, err := e.identifierLocked("topic", topic)
	if err != nil {
		return iggywire.TopicRef{}, err
	}
	return iggywire.TopicRef{StreamID: s, TopicID: t}, nil
}

// groupOf is the group named by the three strings (a consumer group string is always a name:
// the server assigns group ids), registered for its cached state but not for rejoining.
func (e *Engine[C]) groupOf(stream, topic, group string) (*Group, error) {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	k := groupKey{stream, topic, group}
	if g := e.groups[k]; g != nil {
		return g, nil
	}
	t, err := e.topicRefLocked(stream, topic)
	if err != nil {
		return nil, err
	}
	if len(e.groups) >= maxCachedIdentifiers {
		return nil, fmt.Errorf("consumer group %q: more than %d groups on one client", group, maxCachedIdentifiers)
	}
	if group == "" || len(group) > api.MaxHeaderFieldLen {
		return nil, fmt.Errorf("consumer group %q: %w: a name must be 1..255 bytes", group, api.ErrInvalidIdentifier)
	}
	g := &Group{stream: stream, topic: topic, group: group, Ref: iggywire.GroupRef{TopicRef: t, GroupID: iggywire.NamedID(group)}}
	e.groups[k] = g
	return g, nil
}

// ensureGroup creates the group unless it exists, then joins it (joining twice is a no-op on the
// server).
func (e *Engine[C]) ensureGroup(ctx context.Context, cn C, g *Group) error {
	exists, err := e.proto.GroupExists(ctx, cn, g.Ref)
	if err != nil {
		return err
	}
	if !exists {
		if err := e.proto.CreateGroup(ctx, cn, g.Ref); err != nil && !isStatus(err, iggywire.StatusConsumerGroupNameAlreadyExists) {
			return err
		}
	}
	return e.proto.JoinGroup(ctx, cn, g.Ref)
}

// Join makes this connection a member of the group (creating it when missing) and registers it
// for rejoining after reconnects; a group that cannot be joined is not registered. A protocol
// calls it when the server says the connection is not (or no longer) a member.
func (e *Engine[C]) Join(ctx context.Context, cn C, g *Group) error {
	e.log.Info("not a member of the consumer group, joining", "stream", g.stream, "topic", g.topic, "group", g.group)
	return e.join(ctx, cn, g)
}

func (e *Engine[C]) join(ctx context.Context, cn C, g *Group) error {
	if err := e.ensureGroup(ctx, cn, g); err != nil {
		return err
	}
	g.rejoin = true
	g.Forget()
	return nil
}

// rejoinGroups re-enters every group joined before, on a fresh connection. A group whose topic
// is gone is logged and skipped (its next Poll reports api.ErrNotFound); only a lost connection
// fails the session.
func (e *Engine[C]) rejoinGroups(ctx context.Context, cn C) error {
	e.regMu.Lock()
	groups := make([]*Group, 0, len(e.groups))
	for _, g := range e.groups {
		groups = append(groups, g)
	}
	e.regMu.Unlock()
	for _, g := range groups {
		g.Forget() // membership ends with the connection
		if !g.rejoin {
			continue
		}
		err := e.ensureGroup(ctx, cn, g)
		if err == nil {
			continue
		}
		if cn.Transport().broken != nil || e.isLoss(err) {
			return fmt.Errorf("rejoin consumer group %q: %w", g.group, err)
		}
		e.log.Warn("could not rejoin consumer group", "stream", g.stream, "topic", g.topic, "group", g.group, "error", classify(err))
	}
	return nil
}
