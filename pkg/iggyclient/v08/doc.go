// Package v08 is the Iggy 0.8 protocol for the client engine (package engine): the login, ping
// and roster of a 0.8 session and its commands, each a request of pkg/wire08 on the engine's
// connection. The engine owns dialling, TLS, deadlines, reconnects, groups and the api.Client
// surface; this package is what 0.8 says on the wire. The official Go SDK v0.8.0 is not linked:
// it stays the reference the tests cross-check these bytes and the dev broker against.
//
// A 0.8 server serves a connection's requests strictly in order, so requests written together
// are answered in that order. Poll uses it: PollRequest.StoreFirst puts a StoreConsumerOffset in
// front of the poll in one write and both replies are read, so a sink that stores each consumed
// batch's offset and polls at once saves a round trip, and the poll (strategy "next") already
// sees the stored offset. Consumer-group membership belongs to the connection: the poll goes on
// the connection that joined. The server picks the member's partition (round robin); a poll
// naming a partition another member owns gets an empty answer, which is how OwnsPartition (the
// lease of standby sources) reads ownership: one message from the first offset, not committed.
//
// Every reply is read into a reused buffer, bounded by what its request can be answered with (a
// poll: the prefix and count messages of the largest size a 0.8 server stores; anything else
// 16 MiB), and growing only as bytes arrive. A poll with PollRequest.Reuse is decoded into the
// caller's memory with no allocation per message; a send is encoded once into one buffer.
//
// A poll may name its partition and start (PollRequest.At: strategy offset, or next on that
// partition), as a sink that fetches ahead does; the server answers a member that does not own
// it with no partition at all (Batch.NotOwned). Which partitions are this member's comes from
// GetConsumerGroup, whose members are numbered rather than named by client: the connection
// learns which member it is from the partitions the server serves it (assign.go).
//
// Files: client.go (Dial, DialAdmin, the protocol's identity), conn.go (one connection: building
// a request, sending, reading a bounded reply), session.go (login with password or token, ping,
// the cluster roster), commands.go (streams, topics, groups, offsets), poll.go (poll with
// StoreFirst and At, partition polls, ownership, send), assign.go (the member's partitions and
// whether a hand-over is under way).
package v08
