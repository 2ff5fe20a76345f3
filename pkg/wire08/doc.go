// Package wire08 is the Iggy 0.8 wire format, shared by our 0.8 client (pkg/iggyclient/v08)
// and the dev broker (pkg/devbroker), as pkg/wire09 is for 0.9: pure encoding and decoding, no
// I/O policy beyond reading one reply. The layouts are those the official Go SDK v0.8.0 sends and
// reads and the 0.8 server answers with (docs/iggy-protocols.md);
// the SDK stays the reference the tests cross-check these bytes against.
//
// A request frame is [length u32][code u32][payload], the length counting code and payload; a
// reply is [status u32][length u32][payload], an error carrying no payload. One connection is
// served strictly in order, so a client may write several requests before reading their replies.
//
// Conventions: encoders append to a caller's buffer and return it; decoders return values whose
// byte slices alias the input. What 0.8 shares with 0.9 byte for byte (error codes, identifiers,
// consumers, partitioning, polling strategies, topic/group/offset references, the poll prefix) is
// pkg/iggywire's; decoding here reads with NewReader, whose failures carry the statuses a 0.8
// server answers with (a short payload or a bad enum byte InvalidCommand, a bad identifier or
// name InvalidFormat).
//
// Files and their jobs:
//
//	frame.go     command codes, limits, request and reply framing, ReadReply (bounded), NewReader
//	login.go     LoginUser, LoginWithPersonalAccessToken and their reply
//	cluster.go   the cluster metadata reply, client details
//	streams.go   CreateStream, the stream record
//	topics.go    CreateTopic, topic and partition records, Create/DeletePartitions
//	offsets.go   Get / Store / Delete consumer offset and its reply
//	groups.go    consumer-group requests, the group record and its members
//	messages.go  the message layout, SendMessages, PollMessages, the poll reply and PollIterator
package wire08
