// Package wire09 is the Iggy 0.9 ("VSR framing") wire format, shared by our
// 0.9 client and the dev broker: pure encoding and decoding, no I/O policy
// beyond reading one frame. The layouts are those of docs/iggy-protocol-0.9.md
// (section numbers in the comments refer to it).
//
// Conventions: encoders append to a caller's buffer (Append*(dst, ...)) and
// return it; decoders return values whose byte slices alias the input, so
// the hot paths (send, poll) do not allocate. Body encoders and decoders
// cover the typed payload only: result-framed replies get their section from
// AppendResultOK / AppendResultRejection and lose it with StripResult.
// Decode failures are *iggywire.Error values carrying the iggywire.Status the
// server answers with (errors.Is(err, iggywire.StatusInvalidFormat)); framing
// failures are the sentinels ErrFrameSize, ErrFrameType and ErrTruncatedFrame.
// What 0.9 shares byte for byte with 0.8 (error codes, identifiers and the
// other primitive fields, topic, group and offset references, the poll reply
// prefix, the body reader, XXH32) is pkg/iggywire's.
//
// Files and their jobs:
//
//	consts.go      frame types, operations, command codes and OperationOf,
//	               planes, eviction reasons, protocol version and its gate
//	header.go      request, reply and eviction headers (by offset), §3.5
//	               request validation, u128 values, EvictionError
//	frame.go       ReadFrame: one frame off a stream into a reused buffer
//	result.go      the result section of result-framed replies (§6.2)
//	primitives.go  the ack byte (§9) and a body that is one identifier
//	tlv.go         TLV entries, options blocks and their limits (§9)
//	login.go       Register bodies (password, token) and the login reply (§5.1)
//	cluster.go     the cluster metadata reply (§10.1)
//	streams.go     CreateStream and the stream element (§10.2)
//	topics.go      CreateTopic, topic options, topic and partition elements (§10.3)
//	offsets.go     Store / Delete / Get consumer offset and its reply (§10.4)
//	groups.go      consumer group requests, elements and Sync reply (§10.6)
//	messages.go    send metadata, confirmations, the poll request (§10.5)
//	batch.go       batch records: encode, verify, stamp, slice (§11)
//	poll.go        PollIterator: the messages of a poll reply, allocation-free
package wire09
