// Package engine is the connection and session engine both Iggy protocol clients run on (v08
// over pkg/wire08, v09 over pkg/wire09), and the api.Client and api.Admin surface they share.
// Each protocol is a sibling package supplying a Protocol: its login, ping and roster, and its
// commands, each one request (or one exchange) on a connection the engine hands it. Everything
// else is here, once: dialling and TLS, a deadline on every request, the one reconnect loop,
// groups to rejoin, identifiers, the classification of server answers into api's sentinels, and
// the wording of errors.
//
// One connection, lock-step: one request in flight, guarded by the wire token every call takes
// (honouring its context while it waits). Every request's socket deadline is the call's context
// deadline, at most Options.RequestTimeout ([iggy] request_timeout) away; a server that does not
// answer in time fails the request with api.ErrTimeout, and an ended context interrupts the
// exchange. A protocol reads a reply no larger than its request can be answered with
// (api.ErrReplyTooLarge), growing its buffer only as bytes arrive. Either way the connection is
// out of step and is dropped.
//
// A group member's share of its group (Assignment: the partitions a poll may name, and whether a
// hand-over is under way) is what the protocol learns from the server, cached in the Group with
// an epoch that changes with the partitions or the connection. A poll with PollRequest.OnStored
// tells its caller the outcome of the store written in front of it as soon as that reply is
// read, once, however often the call is retried.
//
// A lost connection (a network failure, a timeout, a malformed reply, a session the server says
// is gone, or a loss only the protocol knows) is retired, reported to Options.OnState, and the
// engine redials with capped, jittered exponential backoff (Options.ReconnectMin/Max), logs in,
// moves to the cluster leader when the roster names another, rejoins every group it was asked to
// be a member of and runs the call again until its context ends: so a send is at least once.
// Refused credentials are api.ErrUnauthorized at once. The heartbeat pings every
// Options.HeartbeatInterval, busy or idle.
//
// Files: session.go (Engine: Start, Close, Do and the reconnect loop, dial and TLS, leader,
// heartbeat, OnState), retry.go (Retry: the backoff, attempts and last failure of the one
// reconnect loop, which protocol detection uses too), link.go (Link: one connection's deadlines, interruption and breaking),
// protocol.go (Protocol and Conn: what a protocol supplies), errors.go (losses, classification,
// error wording), groups.go (groups to rejoin, identifiers), client.go (api.Client), admin.go
// (api.Admin), send.go (messages to send, encoded once), decode.go (poll replies into api.Batch
// without per-message allocations, for both protocols' iterators).
package engine
