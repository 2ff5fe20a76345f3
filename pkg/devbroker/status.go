package devbroker

import "fmt"

// Status is an Iggy response status code; 0 means OK. The numbers and names are
// those of the server's IggyError variants that the SDK v0.8.0 knows.
type Status uint32

// Status codes the dev broker answers with.
const (
	StatusOK                             Status = 0
	StatusError                          Status = 1
	StatusInvalidCommand                 Status = 3
	StatusInvalidFormat                  Status = 4
	StatusDisconnected                   Status = 8
	StatusResourceNotFound               Status = 20
	StatusStaleClient                    Status = 30
	StatusUnauthenticated                Status = 40
	StatusInvalidCredentials             Status = 42
	StatusInvalidUsername                Status = 43
	StatusInvalidPassword                Status = 44
	StatusPersonalAccessTokenExpired     Status = 54
	StatusInvalidClientID                Status = 101
	StatusStreamIDNotFound               Status = 1009
	StatusStreamNameAlreadyExists        Status = 1012
	StatusInvalidTopicSize               Status = 1019
	StatusTopicIDNotFound                Status = 2010
	StatusTopicNameAlreadyExists         Status = 2013
	StatusTooManyPartitions              Status = 2015
	StatusPartitionNotFound              Status = 3007
	StatusConsumerOffsetNotFound         Status = 3021
	StatusNotResolvedConsumer            Status = 3022
	StatusInvalidMessagesCount           Status = 4009
	StatusTooBigUserHeaders              Status = 4017
	StatusTooBigMessagePayload           Status = 4022
	StatusEmptyMessagePayload            Status = 4024
	StatusNonZeroOffset                  Status = 4031
	StatusNonZeroTimestamp               Status = 4032
	StatusInvalidIndexesByteSize         Status = 4034
	StatusInvalidMessagesSize            Status = 4036
	StatusInvalidOffset                  Status = 4100
	StatusConsumerGroupIDNotFound        Status = 5000
	StatusConsumerGroupNameAlreadyExists Status = 5004
	StatusConsumerGroupMemberNotFound    Status = 5006
)

var statusNames = map[Status]string{
	StatusOK:                             "ok",
	StatusError:                          "error",
	StatusInvalidCommand:                 "invalid command",
	StatusInvalidFormat:                  "invalid format",
	StatusDisconnected:                   "disconnected",
	StatusResourceNotFound:               "resource not found",
	StatusStaleClient:                    "stale client",
	StatusUnauthenticated:                "unauthenticated",
	StatusInvalidCredentials:             "invalid credentials",
	StatusInvalidUsername:                "invalid username",
	StatusInvalidPassword:                "invalid password",
	StatusPersonalAccessTokenExpired:     "personal access token expired",
	StatusInvalidClientID:                "invalid client id",
	StatusStreamIDNotFound:               "stream not found",
	StatusStreamNameAlreadyExists:        "stream name already exists",
	StatusInvalidTopicSize:               "invalid topic size",
	StatusTopicIDNotFound:                "topic not found",
	StatusTopicNameAlreadyExists:         "topic name already exists",
	StatusTooManyPartitions:              "too many partitions",
	StatusPartitionNotFound:              "partition not found",
	StatusConsumerOffsetNotFound:         "consumer offset not found",
	StatusNotResolvedConsumer:            "consumer not resolved",
	StatusInvalidMessagesCount:           "invalid messages count",
	StatusTooBigUserHeaders:              "user headers too big",
	StatusTooBigMessagePayload:           "message payload too big",
	StatusEmptyMessagePayload:            "empty message payload",
	StatusNonZeroOffset:                  "non-zero index offset",
	StatusNonZeroTimestamp:               "non-zero index timestamp",
	StatusInvalidIndexesByteSize:         "invalid indexes byte size",
	StatusInvalidMessagesSize:            "invalid messages size",
	StatusInvalidOffset:                  "invalid offset",
	StatusConsumerGroupIDNotFound:        "consumer group not found",
	StatusConsumerGroupNameAlreadyExists: "consumer group name already exists",
	StatusConsumerGroupMemberNotFound:    "consumer group member not found",
}

// Error makes a non-zero Status usable as an error, so decoders and handlers can
// return it and the connection loop can put it on the wire unchanged.
func (s Status) Error() string {
	if name, ok := statusNames[s]; ok {
		return fmt.Sprintf("iggy status %d (%s)", uint32(s), name)
	}
	return fmt.Sprintf("iggy status %d", uint32(s))
}
