// Package devbroker is an in-memory server speaking the Iggy 0.8 TCP binary
// protocol, for tests and the local demo only: everything is kept in memory
// and lost when it stops. Production uses a real Apache Iggy server.
//
// It answers the commands the official Go SDK v0.8.0 sends for the connectors
// runtime (login with password or personal access token, cluster metadata,
// streams, topics, partitions, send and poll, consumer offsets, consumer
// groups) with the real server's layouts, status codes and quirks, as
// described in spec/iggy-protocol.md.
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
// Files: server.go (lifecycle), conn.go (framing), handlers*.go (commands),
// state.go and groups.go (the data model), messages.go (message layout),
// wire.go (primitive decoding), inspect.go (in-process helpers for tests).
package devbroker
