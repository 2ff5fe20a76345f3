// Package testkit holds helpers shared by the tests of several packages: a
// running dev broker, logged-in official-SDK clients for it and topics filled
// through them (fill.go), the project's own client dialled to it (client.go),
// a raw Iggy 0.9 connection driven frame by frame (raw09.go), a TCP proxy that makes a server look
// hung or hostile (proxy.go),
// runner and supervisor processes on one process base (process.go: start, output, exit code,
// kill at cleanup; runner.go, supervisor.go), waits for a state (wait.go: Eventually, Within),
// the log buffer a test reads while a process or logger writes it (logbuffer.go), test plugins
// compiled from C, OTLP
// receivers, TLS certificates, a real Prometheus server (prometheus.go),
// metrics expositions of any format read back into families (exposition.go:
// ParseMetrics, ScrapeMetrics), stored fuzz corpora read as seeds
// (corpus.go), Server-Sent Events streams read event by event, one whose
// client stalls and a HEAD on a stream route (stream.go: taps, followed logs),
// an operator's directory for a supervisor (supervisordir.go), the format
// probe plugin (probe.go), and messages of every schema for comparing a
// running connector with a dry run (schemacases.go). Its subpackage browser starts a real headless Chromium and
// records what a page did (apart, so that only browser tests link chromedp).
package testkit

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

// BrokerOption adjusts the dev broker's configuration before it starts.
type BrokerOption func(*devbroker.Config)

// WithStream creates a stream with topics of the given partition counts at start,
// e.g. WithStream("demo", map[string]uint32{"orders": 3}). Topics are created
// in name order, so their ids (0, 1, ...) are the same on every run.
func WithStream(name string, topics map[string]uint32) BrokerOption {
	return func(cfg *devbroker.Config) {
		sc := devbroker.StreamConfig{Name: name}
		for _, topic := range slices.Sorted(maps.Keys(topics)) {
			sc.Topics = append(sc.Topics, devbroker.TopicConfig{Name: topic, Partitions: topics[topic]})
		}
		cfg.Streams = append(cfg.Streams, sc)
	}
}

// WithToken makes the broker accept a personal access token at login.
func WithToken(token string) BrokerOption {
	return func(cfg *devbroker.Config) {
		cfg.PersonalAccessTokens = append(cfg.PersonalAccessTokens, devbroker.PersonalAccessToken{Token: token})
	}
}

// WithCredentials replaces the root user's iggy/iggy.
func WithCredentials(username, password string) BrokerOption {
	return func(cfg *devbroker.Config) {
		cfg.RootUsername, cfg.RootPassword = username, password
	}
}

// WithRetention caps what each partition keeps (devbroker.Config.RetainBytesPerPartition),
// so long benchmarks run in constant memory.
func WithRetention(bytesPerPartition uint64) BrokerOption {
	return func(cfg *devbroker.Config) {
		cfg.RetainBytesPerPartition = bytesPerPartition
	}
}

// WithHeartbeat turns on the broker's heartbeat verification (devbroker.Config.HeartbeatInterval):
// a client silent for 1.2 intervals is dropped, as a real server with [heartbeat] enabled does.
func WithHeartbeat(interval time.Duration) BrokerOption {
	return func(cfg *devbroker.Config) { cfg.HeartbeatInterval = interval }
}

// WithProtocol makes the broker speak only protocol "0.8" or "0.9" (devbroker.Config.Protocol)
// instead of choosing per connection.
func WithProtocol(protocol string) BrokerOption {
	return func(cfg *devbroker.Config) { cfg.Protocol = protocol }
}

// StartBroker starts an in-memory Iggy server on a free loopback port and
// stops it when the test ends. Its Addr() is what clients dial.
func StartBroker(tb testing.TB, opts ...BrokerOption) *devbroker.Server {
	tb.Helper()
	cfg := devbroker.Config{Address: "127.0.0.1:0"}
	for _, opt := range opts {
		opt(&cfg)
	}
	srv := devbroker.New(cfg)
	if err := srv.Start(context.Background()); err != nil {
		tb.Fatalf("start dev broker: %v", err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}

// PartitionCounts is how many messages each partition of stream/topic holds in srv, by
// partition id.
func PartitionCounts(tb testing.TB, srv *devbroker.Server, stream, topic string) map[uint32]int {
	tb.Helper()
	msgs, err := srv.Messages(stream, topic)
	if err != nil {
		tb.Fatalf("messages of stream %q topic %q: %v", stream, topic, err)
	}
	counts := map[uint32]int{}
	for _, m := range msgs {
		counts[m.Partition]++
	}
	return counts
}

// NewClient returns an official-SDK client connected to addr, not logged in,
// closed when the test ends. The SDK dials until it succeeds, so the server
// must already be listening.
func NewClient(tb testing.TB, addr string) iggcon.Client {
	tb.Helper()
	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
	if err != nil {
		tb.Fatalf("connect SDK client to %s: %v", addr, err)
	}
	tb.Cleanup(func() { _ = cli.Close() })
	return cli
}

// LoggedInClient returns an official-SDK client connected to srv and logged in
// as the root user iggy/iggy (or the credentials given), closed when the test ends.
func LoggedInClient(tb testing.TB, srv *devbroker.Server, credentials ...string) iggcon.Client {
	tb.Helper()
	username, password := "iggy", "iggy"
	if len(credentials) == 2 {
		username, password = credentials[0], credentials[1]
	}
	cli := NewClient(tb, srv.Addr())
	if _, err := cli.LoginUser(username, password); err != nil {
		tb.Fatalf("log in to dev broker at %s as %q: %v", srv.Addr(), username, err)
	}
	return cli
}
