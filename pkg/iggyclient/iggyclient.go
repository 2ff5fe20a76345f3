package iggyclient

import "github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

// The interface and its types live in api, shared by the protocol implementations; these names
// keep every caller on one import.
type (
	Client        = api.Client
	Admin         = api.Admin
	Options       = api.Options
	PollRequest   = api.PollRequest
	PollBuffers   = api.PollBuffers
	StoredOffset  = api.StoredOffset
	Batch         = api.Batch
	InMessage     = api.InMessage
	OutMessage    = api.OutMessage
	HeaderEntry   = api.HeaderEntry
	Partitioning  = api.Partitioning
	TopicSpec     = api.TopicSpec
	PartitionPoll = api.PartitionPoll
	TopicInfo     = api.TopicInfo
	PartitionInfo = api.PartitionInfo
	State         = api.State
)

// Header kinds, partitioning kinds, partition-poll starts and protocol names (see api).
const (
	KindRaw     = api.KindRaw
	KindString  = api.KindString
	KindBool    = api.KindBool
	KindInt8    = api.KindInt8
	KindInt16   = api.KindInt16
	KindInt32   = api.KindInt32
	KindInt64   = api.KindInt64
	KindInt128  = api.KindInt128
	KindUint8   = api.KindUint8
	KindUint16  = api.KindUint16
	KindUint32  = api.KindUint32
	KindUint64  = api.KindUint64
	KindUint128 = api.KindUint128
	KindFloat32 = api.KindFloat32
	KindFloat64 = api.KindFloat64

	PartitionBalanced     = api.PartitionBalanced
	PartitionByID         = api.PartitionByID
	PartitionByMessageKey = api.PartitionByMessageKey

	PollFirst  = api.PollFirst
	PollLast   = api.PollLast
	PollOffset = api.PollOffset

	ProtocolAuto = api.ProtocolAuto
	Protocol08   = api.Protocol08
	Protocol09   = api.Protocol09
)

// Sentinel errors callers branch on (see api).
var (
	ErrNotFound          = api.ErrNotFound
	ErrUnauthorized      = api.ErrUnauthorized
	ErrInvalidMessage    = api.ErrInvalidMessage
	ErrInvalidIdentifier = api.ErrInvalidIdentifier
	ErrClosed            = api.ErrClosed
	ErrPartitionOwned    = api.ErrPartitionOwned
	ErrOffsetOutOfRange  = api.ErrOffsetOutOfRange
	ErrTimeout           = api.ErrTimeout
	ErrReplyTooLarge     = api.ErrReplyTooLarge
)

// AppendUserHeaders and ParseUserHeaders encode and decode user headers (see api).
var (
	AppendUserHeaders = api.AppendUserHeaders
	ParseUserHeaders  = api.ParseUserHeaders
	ParseProtocol     = api.ParseProtocol
)
