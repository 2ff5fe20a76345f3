// Package v09 is the Iggy 0.9 protocol for the client engine (package engine), speaking the 0.9
// wire protocol (docs/iggy-protocol-0.9.md, encoded by pkg/wire09), since no 0.9 Go SDK is
// served. Its behaviour is v08's: the same engine, sentinels, reconnect and retry rules, context
// handling, Reuse and StoreFirst results.
//
// Files: client.go (Dial, DialAdmin, the protocol's identity, message ids), conn.go (one
// connection: request numbering, the §6.1 reply checks), transient.go (replays of 57/58, §6.4),
// login.go (Register, ping, the cluster roster, §5.1, §8), errors.go (the losses and login
// refusals only 0.9 knows), requests.go (streams, topics, groups), groups.go (Sync and the cached
// assignment, OwnsPartition), poll.go (Poll, PollPartition), send.go (Send), offsets.go (offset
// writes and reads).
//
// The engine (package engine) owns dialling, TLS, deadlines, reconnects, the move to the
// cluster leader, groups to rejoin and the api.Client surface; this package is what 0.9 says on
// the wire.
//
// One connection, lock-step: one request in flight (the engine's wire token). Each connection
// draws a random client id, logs in (Register, with the version prefix and sdk name
// "iggy-connectors-go"; a token wins over username and password) and numbers its requests as §4.3
// says. Every exchange has the engine's deadline ([iggy] request_timeout, 30 s by default) and a
// frame above 64 MiB is refused unread; the connection is then out of step and replaced.
//
// A lost connection, a lost session (status 40, stale client 30, the evictions mapped to them),
// a node that keeps refusing (58) or a malformed reply drops the connection: the engine redials,
// logs in again, reads the cluster roster and moves to the leader when there is more than one
// node, rejoins every group it was asked to be a member of and retries the call. So Send
// delivers at least once: a send whose reply was lost is sent again, and 0.9 has no
// deduplication by message id. Refused credentials or tokens (evictions 9, 10, 11) are
// api.ErrUnauthorized at once; other evictions are logged with their reason.
//
// Consumer groups follow 0.9 (§10.6): the server wants the partition named in a group poll, so
// Poll asks Sync (606) for this connection's assignment (cached 5 s; Join first when not a
// member) and polls the assigned partitions round-robin; a fenced answer syncs again. A poll
// naming its partition (PollRequest.At) polls just that one; a fenced answer is Batch.NotOwned.
// Assignment is the same cached Sync answer. Membership
// lives exactly as long as the connection, so OwnsPartition (the lease of standby sources, a
// fresh Sync) moves to a standby as soon as the owner's connection ends. Group offset writes are
// fenced by ownership: Admin's writes as a short-lived member give api.ErrPartitionOwned when
// another member owns the partition.
//
// Send lets the server resolve partitioning (balanced round-robin per topic, message keys by
// XXH32(key) % partitions, exactly as the server places them) and gives zero message ids a
// random UUID v4, once, so a send repeated after a reconnect keeps its ids. Its batch is encoded
// into one reused buffer; a Poll with PollRequest.Reuse is read and decoded into the caller's
// buffers with no allocation per message. StoreFirst costs a round trip of its own (0.9 replies
// are matched one at a time), with v08's result.
//
// Stream and topic strings that parse as a u32 are numeric ids, anything else is a name
// (docs/pipeline.md §1.1). Consumer group strings are always names.
package v09
