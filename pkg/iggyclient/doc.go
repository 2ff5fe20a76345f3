// Package iggyclient is the one small interface the connector pumps use to talk to an Iggy
// server, and the choice of the protocol it is spoken in.
//
// The interface (Client) covers exactly what a sink or source needs: poll a consumer group,
// store a group offset, send messages, look a topic up, create a missing stream and topic (with
// a retention, for state topics), make sure a consumer group exists and is joined, read one
// partition as a standalone consumer (a source's newest state), tell whether the server
// assigned a partition to this connection's group membership (the lease of standby sources),
// and what this member's partitions are, so that a sink can poll a named partition from a named
// offset a batch ahead of its plugin (Assignment, PollRequest.At, PollRequest.OnStored).
// Admin is the offset administration of operator tools. Both, with their types and sentinel
// errors, are defined in the subpackage api and named here again, so callers import only this
// package.
//
// One engine (subpackage engine) implements them for both protocols: the connection and
// session (dial, TLS, login, heartbeat, a deadline on every request from the call's context and
// Options.RequestTimeout, replies bounded by what was asked for, one reconnect loop with backoff,
// groups rejoined) and the api surface. Each protocol is a sibling subpackage supplying its
// framing and commands:
//   - v08: Iggy 0.8.x, on pkg/wire08 (the official Go SDK v0.8.0 is the tests' reference);
//   - v09: Iggy 0.9.x (256-byte VSR headers, sessions, checksummed batches), on pkg/wire09,
//     since no 0.9 Go SDK is served.
//
// Subpackage memclient is a third implementation, over an in-memory log, for fast unit tests of
// the code that drives a Client.
//
// Options.Protocol ([iggy] protocol) picks one; with "auto", the default, Dial asks the server
// first (detect.go: a 0.9 Ping, then a 0.8 Ping, within DetectTimeout) and logs the protocol
// it chose. The pumps never see which protocol is spoken.
//
// Options.OnState hears the connection go (a request timed out, the server went away) and come
// back: the runner shows a stall in last_error and /ready from it.
//
// Files: iggyclient.go (the names of api), dial.go (Dial, DialAdmin and the implementations),
// detect.go (protocol detection).
//
// Stream and topic strings that parse as a u32 are numeric ids, anything else is a name
// (docs/pipeline.md §1.1). Consumer group strings are always names.
package iggyclient
