package wire09

import "strconv"

// Status is an Iggy error code as it travels in a reply header's status
// field or a result section (§6.5). It is an error, so a decoder can return
// it and a caller can test it with errors.Is.
type Status uint32

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
	StatusInvalidPersonalAccessToken     Status = 53
	StatusTransientNotCommitted          Status = 57
	StatusTransientNotAccepted           Status = 58
	StatusRequestAlreadyApplied          Status = 59
	StatusStreamIDNotFound               Status = 1009
	StatusStreamNameNotFound             Status = 1010
	StatusStreamNameAlreadyExists        Status = 1012
	StatusTopicIDNotFound                Status = 2010
	StatusTopicNameAlreadyExists         Status = 2013
	StatusInvalidPartitionsCount         Status = 2019
	StatusPartitionNotFound              Status = 3007
	StatusInvalidMessagesCount           Status = 4009
	StatusInvalidMessageChecksum         Status = 4027
	StatusInvalidMessageTimestampDelta   Status = 4038
	StatusInvalidBatchChecksum           Status = 4039
	StatusUnsupportedOptionKey           Status = 4041
	StatusInvalidOptionValue             Status = 4042
	StatusOptionsBlockTooLarge           Status = 4043
	StatusConsumerGroupIDNotFound        Status = 5000
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
	StatusInvalidPersonalAccessToken:     "invalid personal access token",
	StatusTransientNotCommitted:          "transient: not committed",
	StatusTransientNotAccepted:           "transient: not accepted",
	StatusRequestAlreadyApplied:          "request already applied",
	StatusStreamIDNotFound:               "stream id not found",
	StatusStreamNameNotFound:             "stream name not found",
	StatusStreamNameAlreadyExists:        "stream name already exists",
	StatusTopicIDNotFound:                "topic id not found",
	StatusTopicNameAlreadyExists:         "topic name already exists",
	StatusInvalidPartitionsCount:         "invalid partitions count",
	StatusPartitionNotFound:              "partition not found",
	StatusInvalidMessagesCount:           "invalid messages count",
	StatusInvalidMessageChecksum:         "invalid message checksum",
	StatusInvalidMessageTimestampDelta:   "invalid message timestamp delta",
	StatusInvalidBatchChecksum:           "invalid batch checksum",
	StatusUnsupportedOptionKey:           "unsupported option key",
	StatusInvalidOptionValue:             "invalid option value",
	StatusOptionsBlockTooLarge:           "options block too large",
	StatusConsumerGroupIDNotFound:        "consumer group id not found",
	StatusConsumerGroupNameAlreadyExists: "consumer group name already exists",
	StatusConsumerGroupMemberNotFound:    "consumer group member not found",
	StatusConsumerGroupPartitionNotOwned: "consumer group partition not owned",
	StatusIncompatibleProtocolVersion:    "incompatible protocol version",
}

func (s Status) Error() string {
	if name, ok := statusNames[s]; ok {
		return "iggy status " + strconv.Itoa(int(s)) + " (" + name + ")"
	}
	return "iggy status " + strconv.Itoa(int(s))
}

// Transient reports whether the status asks the client to replay (§6.4).
func (s Status) Transient() bool {
	return s == StatusTransientNotCommitted || s == StatusTransientNotAccepted
}

// Error is a decode or validation failure: the status the server answers
// with, plus what exactly was wrong. errors.Is(err, StatusX) matches it.
type Error struct {
	Status Status
	Detail string
}

func (e *Error) Error() string { return e.Detail + ": " + e.Status.Error() }

func (e *Error) Unwrap() error { return e.Status }

func errorf(status Status, detail string) error { return &Error{Status: status, Detail: detail} }

// malformed is the error of a body that does not decode.
func malformed(detail string) error { return errorf(StatusInvalidFormat, detail) }
