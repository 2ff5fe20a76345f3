package iggywire

import "strconv"

// Status is an Iggy error code: the status of a 0.8 reply frame, the status of a 0.9 reply
// header or result section. 0 is OK. The numbers and names are those of the server's error
// variants, and one code means the same in both protocols. A Status is an error, so a decoder or
// a handler can return it and a caller can test it with errors.Is.
type Status uint32

// The codes either protocol's server, client or the dev broker answers with or branches on.
const (
	StatusOK                             Status = 0
	StatusError                          Status = 1
	StatusInvalidCommand                 Status = 3
	StatusInvalidFormat                  Status = 4
	StatusFeatureUnavailable             Status = 5
	StatusInvalidIdentifier              Status = 6
	StatusDisconnected                   Status = 8
	StatusResourceNotFound               Status = 20
	StatusStaleClient                    Status = 30
	StatusUnauthenticated                Status = 40
	StatusUnauthorized                   Status = 41
	StatusInvalidCredentials             Status = 42
	StatusInvalidUsername                Status = 43
	StatusInvalidPassword                Status = 44
	StatusUserInactive                   Status = 47
	StatusInvalidPersonalAccessToken     Status = 53
	StatusPersonalAccessTokenExpired     Status = 54
	StatusTransientNotCommitted          Status = 57
	StatusTransientNotAccepted           Status = 58
	StatusRequestAlreadyApplied          Status = 59
	StatusInvalidClientID                Status = 101
	StatusStreamIDNotFound               Status = 1009
	StatusStreamNameNotFound             Status = 1010
	StatusStreamNameAlreadyExists        Status = 1012
	StatusInvalidTopicSize               Status = 1019
	StatusTopicIDNotFound                Status = 2010
	StatusTopicNameNotFound              Status = 2011
	StatusTopicNameAlreadyExists         Status = 2013
	StatusTooManyPartitions              Status = 2015
	StatusInvalidPartitionsCount         Status = 2019
	StatusPartitionNotFound              Status = 3007
	StatusConsumerOffsetNotFound         Status = 3021
	StatusNotResolvedConsumer            Status = 3022
	StatusInvalidMessagesCount           Status = 4009
	StatusTooBigUserHeaders              Status = 4017
	StatusTooBigMessagePayload           Status = 4022
	StatusEmptyMessagePayload            Status = 4024
	StatusInvalidMessageChecksum         Status = 4027
	StatusNonZeroOffset                  Status = 4031
	StatusNonZeroTimestamp               Status = 4032
	StatusInvalidIndexesByteSize         Status = 4034
	StatusInvalidMessagesSize            Status = 4036
	StatusInvalidMessageTimestampDelta   Status = 4038
	StatusInvalidBatchChecksum           Status = 4039
	StatusUnsupportedOptionKey           Status = 4041
	StatusInvalidOptionValue             Status = 4042
	StatusOptionsBlockTooLarge           Status = 4043
	StatusInvalidOffset                  Status = 4100
	StatusConsumerGroupIDNotFound        Status = 5000
	StatusConsumerGroupNameNotFound      Status = 5003
	StatusConsumerGroupNameAlreadyExists Status = 5004
	StatusConsumerGroupMemberNotFound    Status = 5006
	StatusConsumerGroupPartitionNotOwned Status = 5009
	StatusIncompatibleProtocolVersion    Status = 14003
)

var statusNames = map[Status]string{
	StatusOK:                             "ok",
	StatusError:                          "error",
	StatusInvalidCommand:                 "invalid command",
	StatusInvalidFormat:                  "invalid format",
	StatusFeatureUnavailable:             "feature unavailable",
	StatusInvalidIdentifier:              "invalid identifier",
	StatusDisconnected:                   "disconnected",
	StatusResourceNotFound:               "resource not found",
	StatusStaleClient:                    "stale client",
	StatusUnauthenticated:                "unauthenticated",
	StatusUnauthorized:                   "unauthorized",
	StatusInvalidCredentials:             "invalid credentials",
	StatusInvalidUsername:                "invalid username",
	StatusInvalidPassword:                "invalid password",
	StatusUserInactive:                   "user inactive",
	StatusInvalidPersonalAccessToken:     "invalid personal access token",
	StatusPersonalAccessTokenExpired:     "personal access token expired",
	StatusTransientNotCommitted:          "transient: not committed",
	StatusTransientNotAccepted:           "transient: not accepted",
	StatusRequestAlreadyApplied:          "request already applied",
	StatusInvalidClientID:                "invalid client id",
	StatusStreamIDNotFound:               "stream id not found",
	StatusStreamNameNotFound:             "stream name not found",
	StatusStreamNameAlreadyExists:        "stream name already exists",
	StatusInvalidTopicSize:               "invalid topic size",
	StatusTopicIDNotFound:                "topic id not found",
	StatusTopicNameNotFound:              "topic name not found",
	StatusTopicNameAlreadyExists:         "topic name already exists",
	StatusTooManyPartitions:              "too many partitions",
	StatusInvalidPartitionsCount:         "invalid partitions count",
	StatusPartitionNotFound:              "partition not found",
	StatusConsumerOffsetNotFound:         "consumer offset not found",
	StatusNotResolvedConsumer:            "consumer not resolved",
	StatusInvalidMessagesCount:           "invalid messages count",
	StatusTooBigUserHeaders:              "user headers too big",
	StatusTooBigMessagePayload:           "message payload too big",
	StatusEmptyMessagePayload:            "empty message payload",
	StatusInvalidMessageChecksum:         "invalid message checksum",
	StatusNonZeroOffset:                  "non-zero index offset",
	StatusNonZeroTimestamp:               "non-zero index timestamp",
	StatusInvalidIndexesByteSize:         "invalid indexes byte size",
	StatusInvalidMessagesSize:            "invalid messages size",
	StatusInvalidMessageTimestampDelta:   "invalid message timestamp delta",
	StatusInvalidBatchChecksum:           "invalid batch checksum",
	StatusUnsupportedOptionKey:           "unsupported option key",
	StatusInvalidOptionValue:             "invalid option value",
	StatusOptionsBlockTooLarge:           "options block too large",
	StatusInvalidOffset:                  "invalid offset",
	StatusConsumerGroupIDNotFound:        "consumer group id not found",
	StatusConsumerGroupNameNotFound:      "consumer group name not found",
	StatusConsumerGroupNameAlreadyExists: "consumer group name already exists",
	StatusConsumerGroupMemberNotFound:    "consumer group member not found",
	StatusConsumerGroupPartitionNotOwned: "consumer group partition not owned",
	StatusIncompatibleProtocolVersion:    "incompatible protocol version",
}

// Error is "iggy status N (name)", or "iggy status N" for a code without a name here.
func (s Status) Error() string {
	if name, ok := statusNames[s]; ok {
		return "iggy status " + strconv.Itoa(int(s)) + " (" + name + ")"
	}
	return "iggy status " + strconv.Itoa(int(s))
}

// Transient reports whether the status asks a 0.9 client to replay its request (57, 58).
func (s Status) Transient() bool {
	return s == StatusTransientNotCommitted || s == StatusTransientNotAccepted
}

// Error is a decode or validation failure: the status a server answers with, plus what exactly
// was wrong. errors.Is(err, StatusX) matches it.
type Error struct {
	Status Status
	Detail string
}

func (e *Error) Error() string { return e.Detail + ": " + e.Status.Error() }

func (e *Error) Unwrap() error { return e.Status }

// Errorf is an *Error with the detail given.
func Errorf(status Status, detail string) error { return &Error{Status: status, Detail: detail} }

// Malformed is the error of a body that does not decode: InvalidFormat with the detail.
func Malformed(detail string) error { return Errorf(StatusInvalidFormat, detail) }
