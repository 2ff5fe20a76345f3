package wire09

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// HeaderSize is the fixed header of every frame in both directions (§3).
const HeaderSize = 256

// MaxFrameSize is the largest frame (header + body) either side accepts (§1).
const MaxFrameSize = 64 << 20

// FrameType is the "command" byte at offset 60 (§2).
type FrameType uint8

const (
	FrameRequest  FrameType = 5
	FrameReply    FrameType = 8
	FrameEviction FrameType = 13

	// maxFrameType is the highest frame type the server parses; above it the
	// connection is closed (§1).
	maxFrameType FrameType = 29
)

// Operation is the operation byte of a request (offset 176) and its reply (offset 208), §4.1.
type Operation uint8

const (
	OpReserved      Operation = 0
	OpRegister      Operation = 1
	OpNonReplicated Operation = 2
	OpLogout        Operation = 3

	OpCreateStream        Operation = 128
	OpUpdateStream        Operation = 129
	OpDeleteStream        Operation = 130
	OpPurgeStream         Operation = 131
	OpCreateTopic         Operation = 132
	OpUpdateTopic         Operation = 133
	OpDeleteTopic         Operation = 134
	OpPurgeTopic          Operation = 135
	OpCreatePartitions    Operation = 136
	OpDeletePartitions    Operation = 137
	OpDeleteSegments      Operation = 138
	OpCreateConsumerGroup Operation = 139
	OpDeleteConsumerGroup Operation = 140
	OpCreateUser          Operation = 141
	OpUpdateUser          Operation = 142
	OpDeleteUser          Operation = 143
	OpChangePassword      Operation = 144
	OpUpdatePermissions   Operation = 145
	OpCreatePAT           Operation = 146
	OpDeletePAT           Operation = 147
	OpJoinConsumerGroup   Operation = 148
	OpLeaveConsumerGroup  Operation = 149

	OpSendMessages         Operation = 160
	OpStoreConsumerOffset  Operation = 161
	OpDeleteConsumerOffset Operation = 162

	// Server-internal operations (64..68): valid values, never sent by clients.
	opInternalFirst Operation = 64
	opInternalLast  Operation = 68
)

// Defined reports whether op is an operation value the protocol declares
// (Reserved excluded). Clients reject replies echoing anything else.
func (op Operation) Defined() bool {
	switch {
	case op >= OpRegister && op <= OpLogout:
		return true
	case op >= opInternalFirst && op <= opInternalLast:
		return true
	case op >= OpCreateStream && op <= OpLeaveConsumerGroup:
		return true
	case op >= OpSendMessages && op <= OpDeleteConsumerOffset:
		return true
	}
	return false
}

// MetadataPlane reports whether op is numbered like a metadata operation:
// it consumes a request number and is deduplicated by the server (§4.3, §4.4).
// Logout is numbered the same way.
func (op Operation) MetadataPlane() bool {
	return (op >= OpCreateStream && op <= OpLeaveConsumerGroup) || op == OpLogout
}

// PartitionPlane reports whether op is a partition operation (160..162).
func (op Operation) PartitionPlane() bool {
	return op >= OpSendMessages && op <= OpDeleteConsumerOffset
}

// ResultFramed reports whether a reply to op starts with a result section (§6.2).
// Register replies are framed only when their body is non-empty; callers check that.
func (op Operation) ResultFramed() bool {
	switch {
	case op == OpDeleteSegments:
		return false
	case op >= OpCreateStream && op <= OpLeaveConsumerGroup:
		return true
	case op >= opInternalFirst && op <= opInternalLast:
		return true
	case op == OpStoreConsumerOffset || op == OpDeleteConsumerOffset:
		return true
	case op == OpRegister:
		return true
	}
	return false
}

// Command is a classic command code (§4.2). Non-replicated commands travel in
// the request header at offset 196 with operation NonReplicated.
type Command uint32

const (
	CmdPing                 Command = 1
	CmdGetStats             Command = 10
	CmdGetSnapshot          Command = 11
	CmdGetClusterMetadata   Command = 12
	CmdDescribeOptions      Command = 13
	CmdGetMe                Command = 20
	CmdGetClient            Command = 21
	CmdGetClients           Command = 22
	CmdGetUser              Command = 31
	CmdGetUsers             Command = 32
	CmdCreateUser           Command = 33
	CmdDeleteUser           Command = 34
	CmdUpdateUser           Command = 35
	CmdUpdatePermissions    Command = 36
	CmdChangePassword       Command = 37
	CmdLoginUser            Command = 38 // legacy: evicted with reason 15
	CmdLogoutUser           Command = 39
	CmdLoginRegister        Command = 40
	CmdGetPATs              Command = 41
	CmdCreatePAT            Command = 42
	CmdDeletePAT            Command = 43
	CmdLoginWithPAT         Command = 44 // legacy: evicted with reason 15
	CmdLoginRegisterWithPAT Command = 45
	CmdPollMessages         Command = 100
	CmdSendMessages         Command = 101
	CmdFlushUnsavedBuffer   Command = 102
	CmdGetConsumerOffset    Command = 120
	CmdStoreConsumerOffset  Command = 121
	CmdDeleteConsumerOffset Command = 122
	CmdGetStream            Command = 200
	CmdGetStreams           Command = 201
	CmdCreateStream         Command = 202
	CmdDeleteStream         Command = 203
	CmdUpdateStream         Command = 204
	CmdPurgeStream          Command = 205
	CmdGetTopic             Command = 300
	CmdGetTopics            Command = 301
	CmdCreateTopic          Command = 302
	CmdDeleteTopic          Command = 303
	CmdUpdateTopic          Command = 304
	CmdPurgeTopic           Command = 305
	CmdCreatePartitions     Command = 402
	CmdDeletePartitions     Command = 403
	CmdDeleteSegments       Command = 503
	CmdGetConsumerGroup     Command = 600
	CmdGetConsumerGroups    Command = 601
	CmdCreateConsumerGroup  Command = 602
	CmdDeleteConsumerGroup  Command = 603
	CmdJoinConsumerGroup    Command = 604
	CmdLeaveConsumerGroup   Command = 605
	CmdSyncConsumerGroup    Command = 606
)

// OperationOf maps a command code to the operation it travels as (§4.2). Codes
// that are not replicated, including unknown ones, travel as NonReplicated
// with the code in the header; both login codes travel as Register.
func OperationOf(code Command) Operation {
	switch code {
	case CmdCreateUser:
		return OpCreateUser
	case CmdDeleteUser:
		return OpDeleteUser
	case CmdUpdateUser:
		return OpUpdateUser
	case CmdUpdatePermissions:
		return OpUpdatePermissions
	case CmdChangePassword:
		return OpChangePassword
	case CmdLogoutUser:
		return OpLogout
	case CmdLoginRegister, CmdLoginRegisterWithPAT:
		return OpRegister
	case CmdCreatePAT:
		return OpCreatePAT
	case CmdDeletePAT:
		return OpDeletePAT
	case CmdSendMessages:
		return OpSendMessages
	case CmdStoreConsumerOffset:
		return OpStoreConsumerOffset
	case CmdDeleteConsumerOffset:
		return OpDeleteConsumerOffset
	case CmdCreateStream:
		return OpCreateStream
	case CmdDeleteStream:
		return OpDeleteStream
	case CmdUpdateStream:
		return OpUpdateStream
	case CmdPurgeStream:
		return OpPurgeStream
	case CmdCreateTopic:
		return OpCreateTopic
	case CmdDeleteTopic:
		return OpDeleteTopic
	case CmdUpdateTopic:
		return OpUpdateTopic
	case CmdPurgeTopic:
		return OpPurgeTopic
	case CmdCreatePartitions:
		return OpCreatePartitions
	case CmdDeletePartitions:
		return OpDeletePartitions
	case CmdDeleteSegments:
		return OpDeleteSegments
	case CmdCreateConsumerGroup:
		return OpCreateConsumerGroup
	case CmdDeleteConsumerGroup:
		return OpDeleteConsumerGroup
	case CmdJoinConsumerGroup:
		return OpJoinConsumerGroup
	case CmdLeaveConsumerGroup:
		return OpLeaveConsumerGroup
	}
	return OpNonReplicated
}

// EvictionReason is byte 255 of an eviction frame (§3.4).
type EvictionReason uint8

const (
	EvictNoSession              EvictionReason = 1
	EvictClientReleaseTooLow    EvictionReason = 2
	EvictClientReleaseTooHigh   EvictionReason = 3
	EvictInvalidRequestOp       EvictionReason = 4
	EvictInvalidRequestBody     EvictionReason = 5
	EvictInvalidRequestBodySize EvictionReason = 6
	EvictSessionTooLow          EvictionReason = 7
	EvictSessionReleaseMismatch EvictionReason = 8
	EvictInvalidCredentials     EvictionReason = 9
	EvictInvalidToken           EvictionReason = 10
	EvictUserInactive           EvictionReason = 11
	EvictSessionError           EvictionReason = 12
	EvictStaleClient            EvictionReason = 13
	EvictIncompatibleProtocol   EvictionReason = 14
	EvictMalformedLogin         EvictionReason = 15
)

// Status is the error a client reports for the eviction, as the Go SDK maps it
// (§3.4). An unknown reason is InvalidCommand, never a retryable error.
func (r EvictionReason) Status() iggywire.Status {
	switch r {
	case EvictNoSession, EvictSessionTooLow, EvictSessionReleaseMismatch, EvictUserInactive, EvictSessionError:
		return iggywire.StatusUnauthenticated
	case EvictInvalidCredentials:
		return iggywire.StatusInvalidCredentials
	case EvictInvalidToken:
		return iggywire.StatusInvalidPersonalAccessToken
	case EvictStaleClient:
		return iggywire.StatusStaleClient
	case EvictIncompatibleProtocol:
		return iggywire.StatusIncompatibleProtocolVersion
	case EvictMalformedLogin:
		return iggywire.StatusInvalidFormat
	}
	return iggywire.StatusInvalidCommand
}

func (r EvictionReason) String() string {
	switch r {
	case EvictNoSession:
		return "no session"
	case EvictClientReleaseTooLow:
		return "client release too low"
	case EvictClientReleaseTooHigh:
		return "client release too high"
	case EvictInvalidRequestOp:
		return "invalid request operation"
	case EvictInvalidRequestBody:
		return "invalid request body"
	case EvictInvalidRequestBodySize:
		return "invalid request body size"
	case EvictSessionTooLow:
		return "session too low"
	case EvictSessionReleaseMismatch:
		return "session release mismatch"
	case EvictInvalidCredentials:
		return "invalid credentials"
	case EvictInvalidToken:
		return "invalid personal access token"
	case EvictUserInactive:
		return "user inactive"
	case EvictSessionError:
		return "session error"
	case EvictStaleClient:
		return "stale client"
	case EvictIncompatibleProtocol:
		return "incompatible protocol version"
	case EvictMalformedLogin:
		return "malformed login"
	}
	return "unknown reason"
}

// ProtocolVersion is the packed protocol version this package speaks:
// 0.11.0 = 0<<20 | 11<<10 | 0 (§5.1).
const ProtocolVersion uint32 = 11264

// PackVersion packs major.minor.patch, 10 bits each.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&0x3FF)<<20 | (minor&0x3FF)<<10 | patch&0x3FF
}

// VersionAccepted is the server's gate: the client's version is at least the
// minimum (ProtocolVersion with patch zeroed) and its major.minor is not newer
// than ours, so only 0.11.x passes (§5.1).
func VersionAccepted(client uint32) bool {
	minVersion := ProtocolVersion &^ 0x3FF
	return client >= minVersion && client>>10 <= ProtocolVersion>>10
}

// Sentinel partition ids of poll replies (§10.5, §10.6).
const (
	// PartitionResync is the server's "resync required" answer to a group poll
	// for a partition the caller does not own.
	PartitionResync uint32 = 0xFFFFFFFF
	// PartitionNoneAssigned is what the Go SDK reports when its member owns nothing.
	PartitionNoneAssigned uint32 = 0xFFFFFFFE
)
