// Package v08 implements the iggyclient interfaces (package api) for Iggy 0.8
// servers, over the official Go SDK v0.8.0.
//
// Files: session.go (dial, log in, reconnect, heartbeat, the SDK's socket and
// lock), errors.go (the SDK's errors mapped to api's sentinels), ops.go (the
// Client operations), partition.go (standalone partition reads and the
// ownership check of standby sources), offsets.go (Admin), poll_reuse.go and
// send_direct.go (the allocation-free poll and send on the SDK's connection).
//
// The client pings the server every HeartbeatInterval, busy or idle: Iggy
// with heartbeat verification on counts only pings and drops a client silent
// for 1.2 of its intervals.
//
// The SDK never reconnects by itself (iggy-protocol.md §7). This package
// does: a call that meets a lost connection redials with capped exponential
// backoff (Options.ReconnectMin/Max), logs in again, rejoins every consumer
// group it was asked to ensure, and then retries the call. Poll, StoreOffset
// and Send are all retried, so Send delivers at least once (a resend after a
// lost reply can duplicate). Missing streams or topics (ErrNotFound) and bad
// credentials (ErrUnauthorized) are returned at once and never retried.
//
// Calls honour their context even while the server does not answer: the
// SDK has no deadlines, so the client closes the SDK's socket to interrupt a
// call whose context ends (the next call reconnects).
//
// A poll loop that is done with each batch before the next poll passes
// PollRequest.Reuse: the reply is then read and decoded into that memory on
// the SDK's own connection, under its request lock (poll_reuse.go), instead of
// through the SDK, which allocates per message; the result is the same batch.
// PollRequest.StoreFirst puts a StoreConsumerOffset request in front of the poll
// in the same write, and reads both replies: a sink that stores each consumed
// batch's offset and polls at once saves a round trip per batch, and the
// poll (strategy "next") sees the offset, since the server serves one
// connection's requests in order.
// Send likewise encodes its request straight into one reused buffer and writes it on
// the SDK's connection under the same lock (send_direct.go): the bytes the SDK's
// SendMessages writes, without its per-message slices and two whole-request copies.
//
// Admin (offsets.go, DialAdmin) is for operator tools, not pumps: a topic's
// partitions with their current offsets, a consumer group's stored offset per
// partition (read without joining), and rewriting or deleting those offsets
// as a short-lived member of the group (the server only takes offset writes
// from a member that owns the partition: ErrPartitionOwned otherwise).
//
// Stream and topic strings that parse as a u32 are numeric ids, anything else
// is a name (pipeline.md §1.1). Consumer group strings are always names.
package v08
