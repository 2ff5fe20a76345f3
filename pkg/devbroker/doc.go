// Package devbroker is an in-memory server speaking the Iggy 0.8 and 0.9 TCP
// binary protocols, for tests and the local demo only: everything is kept in
// memory and lost when it stops. Production uses a real Apache Iggy server.
//
// Over 0.8 it answers the commands the official Go SDK v0.8.0 sends for the
// connectors runtime (login with password or personal access token, cluster
// metadata, streams, topics, partitions added and deleted, send and poll,
// consumer offsets, consumer groups) with the real server's layouts, status
// codes and quirks, as
// described in docs/iggy-protocol-0.8.md. Over 0.9 it does what
// docs/iggy-protocol-0.9.md §13 asks of a test broker (sessions, request
// numbers, metadata dedup, evictions, checksummed batch records, Sync and
// generations), with pkg/wire09 for the bytes.
//
// Both protocols share the port and the store: the first bytes of a
// connection choose (a 0.9 request starts with a zero checksum), or
// Config.Protocol forces one. A send is stored in its sender's format (state.go)
// and converted when the other protocol polls it (convert.go).
//
// Tests start it in-process:
//
//	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0"})
//	if err := srv.Start(ctx); err != nil { ... }
//	defer srv.Stop()
//	// dial srv.Addr() with the SDK; srv.Restart(true) drops every connection
//	// and listens again on the same address; srv.Messages("stream", "topic")
//	// shows what a topic holds.
//
// Consumer groups rebalance as Iggy 0.8 does (groups.go): a join hands partitions over
// cooperatively, once the donor committed what it polled there (or after the 30 s rebalancing
// timeout); a leave or a closed connection deals every partition anew. Like a real server with its
// default settings ([heartbeat] enabled = false), it never drops a connection that stays open
// but silent: such a member keeps its partitions until its socket closes.
//
// By default every message is kept, as on a real server with default settings.
// Config.RetainBytesPerPartition caps each partition and reuses the dropped
// batches' memory, for long benchmarks.
//
// pkg/testkit wraps this as StartBroker. The binary cmd/iggy-dev-server runs
// it configured by environment variables (ConfigFromEnv).
//
// Layers: a connection reads its protocol's frames (conn08.go, conn09.go) and looks each request
// up in its protocol's table of handlers, all of one signature (handler, conn.go): decode with
// pkg/wire08 or pkg/wire09, call the store, encode the answer. The store alone resolves entities,
// validates and applies every rule both protocols share (store_topics.go, store_groups.go,
// store_messages.go); a handler only says the outcome in its protocol's terms.
//
// Files: server.go (lifecycle), conn.go (a connection: the session, the protocol choice, reading
// a payload, the handler type), conn08.go (0.8 framing and its handler table), handlers08.go
// (0.8 session, cluster, clients, streams, topics, partitions), handlers08_messages.go (0.8 send,
// poll, offsets), handlers08_groups.go (0.8 consumer groups), conn09.go (0.9 framing, session
// gate, request numbers, dedup, evictions and its handler tables), handlers09.go,
// handlers09_messages.go and handlers09_groups.go (the same for 0.9), state.go (the data model
// and its lookups), store_topics.go (streams, topics, partitions and their snapshots),
// store_groups.go (consumer-group operations, memberships of a connection), store_messages.go
// (send, poll and offset rules, storing 0.8 messages, retention), groups.go (how partitions are
// dealt to members), convert.go (0.9 records: storing and converting between the formats),
// env.go (the binary's environment), inspect.go (in-process helpers for tests). Status codes are
// pkg/iggywire's, one table for both protocols.
package devbroker
