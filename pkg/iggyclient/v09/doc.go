// Package v09 implements the iggyclient interfaces (package api) for Iggy 0.9 servers, over our
// own connection speaking the 0.9 wire protocol (spec/iggy-protocol-0.9.md, encoded by
// pkg/wire09), since no 0.9 Go SDK is served. Its behaviour is v08's: the same sentinels, the
// same reconnect and retry rules, the same context handling, the same Reuse and StoreFirst results.
//
// Files: client.go (Dial, Close, the wire token, the reconnect loop, heartbeat), conn.go (one
// connection: request numbering, deadlines, the §6.1 reply checks), transient.go (replays of
// 57/58, §6.4), login.go (dial, TLS, Register, leader redirection, §5.1, §8), errors.go (server
// codes and evictions mapped to api's sentinels), identifiers.go (stream, topic and group
// strings), requests.go (the small request/reply pairs the operations share), topics.go
// (TopicInfo, EnsureTopic, StreamExists, Partitions), groups.go (membership, Sync and the cached
// assignment, OwnsPartition), poll.go (Poll, PollPartition), decode.go (poll replies into
// api.Batch without per-message allocations), send.go (Send), offsets.go (StoreOffset and Admin).
//
// One connection, lock-step: one request in flight, guarded by the wire token that every call
// takes (and honours its context while waiting for). Each connection draws a random client id,
// logs in (Register, with the version prefix and sdk name "iggy-connectors-go"; a token wins over
// username and password) and numbers its requests as §4.3 says. Calls set the socket deadline from
// their context (at most 30 s per exchange) and an ended context interrupts the exchange; the
// connection is then out of step and replaced.
//
// A lost connection, a lost session (status 40, stale client 30, the evictions mapped to them) or
// a malformed reply drops the connection: the client redials with capped exponential backoff
// (Options.ReconnectMin/Max), logs in again, reads the cluster roster and moves to the leader
// when there is more than one node, rejoins every group it was asked to be a member of and
// retries the call. So Send delivers at least once: a send whose reply was lost is sent again,
// and 0.9 has no deduplication by message id. Refused credentials or tokens (evictions 9, 10, 11)
// are api.ErrUnauthorized at once; other evictions are logged with their reason.
//
// Consumer groups follow 0.9 (§10.6): the server wants the partition named in a group poll, so
// Poll asks Sync (606) for this connection's assignment (cached 5 s; Join first when not a
// member) and polls the assigned partitions round-robin; a fenced answer syncs again. Membership
// lives exactly as long as the connection, so OwnsPartition (the lease of standby sources, a
// fresh Sync) moves to a standby as soon as the owner's connection ends. Group offset writes are
// fenced by ownership: Admin's writes as a short-lived member give api.ErrPartitionOwned when
// another member owns the partition.
//
// Send lets the server resolve partitioning (balanced round-robin per topic, message keys by
// XXH32(key) % partitions, exactly as the server places them) and gives zero message ids a
// random UUID v4. Its batch is encoded into one reused buffer; a Poll with PollRequest.Reuse is
// read and decoded into the caller's buffers with no allocation per message. StoreFirst costs a
// round trip of its own (0.9 replies are matched one at a time), with v08's result.
//
// Stream and topic strings that parse as a u32 are numeric ids, anything else is a name
// (pipeline.md §1.1). Consumer group strings are always names.
package v09
