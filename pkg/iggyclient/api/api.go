package api

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Client is everything the pumps need from an Iggy server. Implementations
// are safe for concurrent use; calls on one client share one connection, so
// they run one at a time on the wire.
type Client interface {
	// Poll fetches the group's next messages (polling strategy "next") from
	// whichever partition the server assigns. An empty Batch is not an error.
	Poll(ctx context.Context, r PollRequest) (Batch, error)
	// StoreOffset stores the group's offset on one partition.
	StoreOffset(ctx context.Context, stream, topic, group string, partitionID uint32, offset uint64) error
	// Send appends msgs to the topic in one request.
	Send(ctx context.Context, stream, topic string, p Partitioning, msgs []OutMessage) error
	// TopicInfo describes a topic; ErrNotFound when the stream or topic is missing.
	TopicInfo(ctx context.Context, stream, topic string) (TopicInfo, error)
	// EnsureTopic creates the stream and the topic (with the given number of
	// partitions and the server's default expiry and size) when missing, as
	// upstream's producer init does. Only names can be created: a missing
	// numeric id gives ErrNotFound.
	EnsureTopic(ctx context.Context, stream, topic string, partitions uint32) error
	// EnsureTopicWith is EnsureTopic with the retention of a topic it creates (an existing
	// topic is left as it is).
	EnsureTopicWith(ctx context.Context, stream, topic string, spec TopicSpec) error
	// PollPartition reads one partition as a standalone consumer that stores no offset: the
	// newest messages (PollLast), the oldest (PollFirst) or from an offset.
	PollPartition(ctx context.Context, r PartitionPoll) (Batch, error)
	// OwnsPartition reports whether the server has assigned the partition to this
	// connection's membership of the group (joining it when it is not a member). Over 0.8 it
	// reads one message without committing, so the partition must hold at least one message:
	// the server answers an empty poll both to the owner of an empty partition and to a member
	// that does not own it. Over 0.9 it reads the assignment itself (SyncConsumerGroup).
	OwnsPartition(ctx context.Context, stream, topic, group string, partition uint32) (bool, error)
	// EnsureConsumerGroup creates the group if it is missing and joins it.
	// The client rejoins it by itself after every reconnect.
	EnsureConsumerGroup(ctx context.Context, stream, topic, group string) error
	// Assignment is this connection's share of the group: the partitions a poll may name
	// (PollRequest.At). It is cached for a moment (0.8: one second, 0.9: five) and read again
	// after a poll the server fenced or answered as not this member's (Batch.NotOwned).
	Assignment(ctx context.Context, stream, topic, group string) (Assignment, error)
	// Close ends the connection; later calls return ErrClosed.
	Close() error
}

// Options configure a client of either protocol.
type Options struct {
	Address string // host:port of the server's TCP transport

	// Protocol is the wire protocol spoken: ProtocolAuto (or ""), Protocol08 or Protocol09.
	// Implementations ignore it; iggyclient.Dial chooses the implementation by it.
	Protocol string

	// Username and Password log in unless Token (a personal access token) is
	// set, which then wins.
	Username, Password string
	Token              string

	TLSEnabled bool
	TLSCAFile  string // PEM file with the CA that signed the server certificate; empty = system roots
	TLSDomain  string // server name to verify; empty = the host part of Address

	// ReconnectMin and ReconnectMax bound the exponential backoff between
	// reconnect attempts. Zero values default to DefaultReconnectMin and DefaultReconnectMax.
	ReconnectMin, ReconnectMax time.Duration

	// HeartbeatInterval is how often the client pings the server, busy or
	// idle (the SDK's own client pings every 5 s): a server with heartbeat
	// verification drops a client silent for 1.2 of its intervals. Zero
	// means 5 s, a negative value turns the heartbeat off.
	HeartbeatInterval time.Duration

	// RequestTimeout bounds one request's round trip when the call's context allows longer
	// ([iggy] request_timeout): a server that stops answering fails the request with ErrTimeout
	// and the client reconnects. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration

	// OnState, when set, hears the connection come and go after the first login: State{Up:
	// false} with the error when a request or the heartbeat lost it (a reconnect follows), then
	// State{Up: true} once a new session is logged in. It is called without the client's locks
	// held and must not block.
	OnState func(State)

	Logger *slog.Logger // nil = slog.Default()
}

// State is what Options.OnState hears.
type State struct {
	Up  bool
	Err error // why the connection was lost (Up false)
}

// PollRequest asks for up to Count messages of a consumer group.
type PollRequest struct {
	Stream, Topic, Group string
	Count                uint32
	// AutoCommit makes the server store the group offset of the last
	// returned message while serving the poll.
	AutoCommit bool
	// Reuse, when set, is memory from the previous Poll that the caller is
	// done with: the reply is decoded into it (see PollBuffers) and the
	// returned Batch is valid only until the next Poll with the same Reuse.
	Reuse *PollBuffers
	// StoreFirst, when set, stores that group offset before the poll, written in
	// the same request write on the same connection (the server serves a
	// connection's requests in order, so the poll already sees the stored
	// offset): a sink that stores after consuming saves a round trip per batch.
	// Its outcome is Batch.StoreErr; a failed poll leaves it unknown (store again).
	StoreFirst *StoredOffset
	// OnStored, when set with StoreFirst, hears the store's outcome as soon as its reply is read,
	// before the poll's reply: a sink may hand its next batch to the plugin then, while the poll
	// is still under way. It is called at most once, on the caller's goroutine of Poll; not at
	// all when the call fails before the outcome is known.
	OnStored func(error)
	// At, when set, names the partition and where the poll starts, instead of letting the server
	// (0.8) or the client's round robin (0.9) pick one. The partition must be this member's
	// (Assignment); a poll the server does not serve for this member is an empty Batch with
	// NotOwned set. A sink that fetches ahead uses it: strategy "next" reads from the group's
	// stored offset, which lags the batches still being consumed.
	At *PollAt
}

// PollAt is where a poll naming its partition starts.
type PollAt struct {
	PartitionID uint32
	// Offset is the first offset to read, unless AfterStored.
	Offset uint64
	// AfterStored reads from the group's stored offset + 1 (strategy "next" on this partition),
	// from the first offset when the group has stored none there.
	AfterStored bool
}

// Assignment is a group member's share of the group's partitions, as Client.Assignment reads
// it.
type Assignment struct {
	// Known is false while the client cannot tell which member it is (over 0.8, until a poll
	// the server picked a partition for names one of its partitions); poll without At then.
	Known bool
	// Partitions are the partitions this member may poll, in the server's order.
	Partitions []uint32
	// Settling: a hand-over between members is under way (0.8: a member waits without
	// partitions while another holds more than one). A member should then let the server pick
	// its partitions, which skips one it is handing over, so that the hand-over completes as
	// soon as what it polled there is stored.
	Settling bool
	// Epoch changes whenever Partitions or the connection change (a reconnect ends the
	// membership), and with 0.9's group generation (every rebalance): what a caller tracks per
	// partition under an older epoch may be stale.
	Epoch uint64
}

// StoredOffset is a group offset to store on one partition.
type StoredOffset struct {
	PartitionID uint32
	Offset      uint64
}

// Batch is one poll's result. Its slices are owned by the caller: the client
// never reuses or changes them after Poll returns, unless the caller handed
// them back through PollRequest.Reuse.
type Batch struct {
	PartitionID   uint32
	CurrentOffset uint64 // the partition's last offset (high-water mark)
	Messages      []InMessage
	// StoreErr is the error of PollRequest.StoreFirst's store, nil when it was
	// stored (or none was asked for). The batch is valid either way.
	StoreErr error
	// NotOwned: the poll named its partition (PollRequest.At) and the server did not serve it
	// to this member (the partition moved, is being handed over, or was deleted). The batch is
	// empty.
	NotOwned bool
}

// InMessage is a stored message as the server returned it.
type InMessage struct {
	ID                                           [16]byte
	Offset, Checksum, Timestamp, OriginTimestamp uint64
	// Headers are the parsed user headers; nil when there are none or when
	// they could not be parsed (docs/pipeline.md §1.4 step 1).
	Headers []HeaderEntry
	Payload []byte
}

// OutMessage is a message to send. An all-zero ID gets a random UUID (from the
// server over 0.8, from the client over 0.9, whose server never creates ids).
type OutMessage struct {
	ID      [16]byte
	Headers []HeaderEntry
	Payload []byte
}

// HeaderEntry is one user header in Iggy's wire terms. Kind and KeyKind are
// wire kind codes 1..15 (see the Kind* constants); a KeyKind of 0 is taken
// as iggywire.KindString when sending, since keys are nearly always strings.
type HeaderEntry struct {
	Kind    uint8 // kind of Value
	Key     []byte
	KeyKind uint8
	Value   []byte
}

// Partitioning kinds accepted in Partitioning.Kind.
const (
	PartitionBalanced     = "balanced"     // the server round-robins per request
	PartitionByID         = "partition_id" // Partitioning.PartitionID
	PartitionByMessageKey = "messages_key" // hash of Partitioning.Key
)

// Partitioning chooses the partition of one Send. The zero value is balanced.
type Partitioning struct {
	Kind        string // PartitionBalanced (or ""), PartitionByID, PartitionByMessageKey
	PartitionID uint32
	Key         []byte // 1..255 bytes
}

// TopicSpec is a topic EnsureTopicWith creates. Zero MessageExpiry and MaxTopicSize mean the
// server's defaults.
type TopicSpec struct {
	Partitions    uint32
	MessageExpiry time.Duration // sealed segments older than this are deleted
	MaxTopicSize  uint64        // bytes; the oldest sealed segments go beyond it (>= the server's segment size)
}

// Where a PartitionPoll starts.
const (
	PollFirst  = "first"
	PollLast   = "last"
	PollOffset = "offset"
)

// PartitionPoll asks for up to Count messages of one partition.
type PartitionPoll struct {
	Stream, Topic string
	Partition     uint32
	From          string // PollFirst, PollLast or PollOffset
	Offset        uint64 // with PollOffset
	Count         uint32
}

// TopicInfo is what the pumps need to know about a topic.
type TopicInfo struct {
	Partitions uint32
}

// Sentinel errors callers branch on.
var (
	// ErrNotFound: the stream, topic, partition or consumer group does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the server refused the credentials (or the token).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalidMessage: a message, header or partitioning that the protocol
	// cannot carry; nothing was sent.
	ErrInvalidMessage = errors.New("invalid message")
	// ErrInvalidIdentifier: a stream, topic or group string that Iggy
	// cannot carry (empty, or longer than 255 bytes).
	ErrInvalidIdentifier = errors.New("invalid identifier")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("iggy client closed")
	// ErrTimeout: the server did not answer a request within Options.RequestTimeout; the
	// connection was dropped (a call that meets it reconnects and retries until its context ends).
	ErrTimeout = errors.New("no answer from the iggy server in time")
	// ErrReplyTooLarge: the server announced a reply larger than its request can be answered
	// with; the connection was dropped without reading or reserving it.
	ErrReplyTooLarge = errors.New("reply larger than the request can be answered with")
)

// Protocol limits, the same in 0.8 and 0.9 (docs/iggy-protocol-0.8.md §1.4, §5.2).
const (
	MaxHeaderFieldLen  = 255
	MaxUserHeadersSize = 100_000
	MaxPayloadSize     = 10_000_000
	MaxPartitions      = 1000
)
