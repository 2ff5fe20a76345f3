// Package devbroker is an in-memory server speaking the Iggy 0.8 and 0.9 TCP
// binary protocols, for tests and the local demo only: everything is kept in
// memory and lost when it stops. Production uses a real Apache Iggy server.
//
// Over 0.8 it answers the commands the official Go SDK v0.8.0 sends for the
// connectors runtime (login with password or personal access token, cluster
// metadata, streams, topics, partitions, send and poll, consumer offsets,
// consumer groups) with the real server's layouts, status codes and quirks, as
// described in spec/iggy-protocol.md. Over 0.9 it does what
// spec/iggy-protocol-0.9.md §13 asks of a test broker (sessions, request
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
// Files: server.go (lifecycle), conn.go (0.8 framing and the protocol
// choice), handlers.go, handlers_messages.go and handlers_groups.go (0.8
// commands), conn09.go (0.9 framing, session gate, request numbers, dedup,
// evictions), handlers09.go, handlers09_messages.go and handlers09_groups.go
// (0.9 operations), state.go and groups.go (the data model), messages.go
// (0.8 message layout), convert.go (0.9 records: storing and converting
// between the formats), wire.go (0.8 primitive decoding), env.go (the binary's environment), inspect.go (in-process
// helpers for tests). Status codes are pkg/iggywire's, one table for both protocols.
package devbroker
