package iggyclient

import "github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

// The interface and its types live in api, shared by the protocol implementations; these names
// keep every caller on one import.
type Client = api.Client
type Admin = api.Admin
type Options = api.Options
type State = api.State

type PollRequest = api.PollRequest
type PollBuffers = api.PollBuffers
type StoredOffset = api.StoredOffset
type PollAt = api.PollAt
type Assignment = api.Assignment
type Batch = api.Batch
type InMessage = api.InMessage

type OutMessage = api.OutMessage
type HeaderEntry = api.HeaderEntry
type Partitioning = api.Partitioning

type TopicSpec = api.TopicSpec
type PartitionPoll = api.PartitionPoll
type TopicInfo = api.TopicInfo
type PartitionInfo = api.PartitionInfo

// Partitioning kinds, partition-poll starts and protocol names (see api). The kinds of user
// headers are pkg/iggywire's, the same in both protocols.
const PartitionBalanced = api.PartitionBalanced
const PartitionByID = api.PartitionByID
const PartitionByMessageKey = api.PartitionByMessageKey

const PollFirst = api.PollFirst
const PollLast = api.PollLast
const PollOffset = api.PollOffset

const ProtocolAuto = api.ProtocolAuto
const Protocol08 = api.Protocol08
const Protocol09 = api.Protocol09

// Sentinel errors callers branch on (see api).
var ErrNotFound = api.ErrNotFound
var ErrUnauthorized = api.ErrUnauthorized
var ErrInvalidMessage = api.ErrInvalidMessage
var ErrInvalidIdentifier = api.ErrInvalidIdentifier

var ErrPartitionOwned = api.ErrPartitionOwned
var ErrOffsetOutOfRange = api.ErrOffsetOutOfRange

var ErrClosed = api.ErrClosed
var ErrTimeout = api.ErrTimeout
var ErrReplyTooLarge = api.ErrReplyTooLarge

// AppendUserHeaders and ParseUserHeaders encode and decode user headers (see api).
var AppendUserHeaders = api.AppendUserHeaders
var ParseUserHeaders = api.ParseUserHeaders
var ParseProtocol = api.ParseProtocol
