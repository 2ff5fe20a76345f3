package engine

import (
	"context"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// Conn is a protocol's connection: a Link (embedded, so that Transport is promoted) with the
// protocol's session state. Implementations are pointers.
type Conn interface {
	comparable
	Transport() *Link
}

// Node is one node of a cluster roster, as a protocol reads it after login.
type Node struct {
	Addr            string // host:port of its TCP transport
	Leader, Healthy bool
}

// Protocol is what one wire protocol supplies to the engine: its session (login, ping, roster,
// the losses it alone knows) and its commands, each one request (or one exchange) on a live
// connection the engine hands it. The engine owns everything else: dialling, TLS, deadlines,
// reconnects, groups to rejoin, identifiers, error classification and the api.Client surface.
type Protocol[C Conn] interface {
	// Name is the protocol's name in logs ("0.8", "0.9").
	Name() string
	// Login opens a session on a freshly dialled link.
	Login(ctx context.Context, l *Link) (C, error)
	// Ping is one heartbeat.
	Ping(ctx context.Context, c C) error
	// Roster reads the cluster's nodes after login; an error or a single node keeps the client
	// where it is.
	Roster(ctx context.Context, c C) ([]Node, error)
	// Lost reports the losses of a session only this protocol knows (0.9 evictions, a node that
	// is not the leader); the engine knows the rest.
	Lost(err error) bool
	// LossBudget bounds how long the engine reconnects for a loss of this kind (0: until the
	// call's context ends).
	LossBudget(err error) time.Duration

	// StreamExists reads a stream.
	StreamExists(ctx context.Context, c C, stream iggywire.Identifier) (bool, error)
	// CreateStream creates a stream by name; StatusStreamNameAlreadyExists when it exists.
	CreateStream(ctx context.Context, c C, name []byte) error
	// Topic reads a topic with its partitions; found is false when it or its stream is missing.
	Topic(ctx context.Context, c C, t iggywire.TopicRef) (parts []api.PartitionInfo, found bool, err error)
	// CreateTopic creates a topic by name in a stream; StatusTopicNameAlreadyExists when it
	// exists.
	CreateTopic(ctx context.Context, c C, stream iggywire.Identifier, name []byte, spec api.TopicSpec) error
	// GroupExists reads a consumer group.
	GroupExists(ctx context.Context, c C, g iggywire.GroupRef) (bool, error)
	// CreateGroup creates a consumer group by name; StatusConsumerGroupNameAlreadyExists when
	// it exists.
	CreateGroup(ctx context.Context, c C, g iggywire.GroupRef) error
	// JoinGroup and LeaveGroup make this connection a member of the group, or not.
	JoinGroup(ctx context.Context, c C, g iggywire.GroupRef) error
	LeaveGroup(ctx context.Context, c C, g iggywire.GroupRef) error
	// StoreOffset and DeleteOffset write the group's offset on one partition.
	StoreOffset(ctx context.Context, c C, g iggywire.GroupRef, partition uint32, offset uint64) error
	DeleteOffset(ctx context.Context, c C, g iggywire.GroupRef, partition uint32) error
	// GroupOffset reads the group's stored offset on one partition.
	GroupOffset(ctx context.Context, c C, g iggywire.GroupRef, partition uint32) (offset uint64, found bool, err error)

	// Poll is one group poll with the protocol's group semantics (who picks the partition, unless
	// r.At names it); it runs r.StoreFirst first, its outcome in Batch.StoreErr and, once known,
	// r.OnStored, unless the store lost the session or the membership (then that is the error
	// and the engine retries both).
	Poll(ctx context.Context, c C, g *Group, r api.PollRequest) (api.Batch, error)
	// PollPartition reads one partition as a standalone consumer.
	PollPartition(ctx context.Context, c C, t iggywire.TopicRef, r api.PartitionPoll) (api.Batch, error)
	// Owns reports whether the group's assignment gives this connection the partition.
	Owns(ctx context.Context, c C, g *Group, partition uint32) (bool, error)
	// Assign refreshes g's assignment (Group.Assigned) unless the cached one is fresh enough.
	Assign(ctx context.Context, c C, g *Group) error
	// EncodeSend encodes a send once, into buf; SendEncoded sends it on a connection (again
	// after a reconnect: the protocol re-stamps what it must).
	EncodeSend(buf []byte, t iggywire.TopicRef, p iggywire.Partitioning, msgs []iggywire.Message) ([]byte, error)
	SendEncoded(ctx context.Context, c C, frame []byte) error
}
