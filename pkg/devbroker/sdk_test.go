package devbroker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// These tests drive the broker only through the official Go SDK v0.8.0.

func id[T uint32 | string](t *testing.T, v T) iggcon.Identifier {
	t.Helper()
	ident, err := iggcon.NewIdentifier(v)
	if err != nil {
		t.Fatalf("identifier %v: %v", v, err)
	}
	return ident
}

func ptr[T any](v T) *T { return &v }

// setupTopic creates stream "demo" with topic "events" of the given partitions through the SDK.
func setupTopic(t *testing.T, cli iggcon.Client, partitions uint32) (stream, topic iggcon.Identifier) {
	t.Helper()
	if _, err := cli.CreateStream("demo"); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	stream = id(t, "demo")
	if _, err := cli.CreateTopic(stream, "events", partitions, iggcon.CompressionAlgorithmNone, 0, 0, nil); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	return stream, id(t, "events")
}

// headerMessages builds n messages "msg-i", each with a string header seq=i.
func headerMessages(t *testing.T, first, n int) []iggcon.IggyMessage {
	t.Helper()
	var out []iggcon.IggyMessage
	for i := first; i < first+n; i++ {
		key, err := iggcon.NewHeaderKeyString("seq")
		if err != nil {
			t.Fatal(err)
		}
		value := iggcon.HeaderValue{Kind: iggcon.String, Value: fmt.Appendf(nil, "%d", i)}
		msg, err := iggcon.NewIggyMessage(fmt.Appendf(nil, "msg-%d", i),
			iggcon.WithUserHeaders([]iggcon.HeaderEntry{{Key: key, Value: value}}))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, msg)
	}
	return out
}

// payloads lists the payloads of polled messages, and checks each carries its seq header.
func payloads(t *testing.T, polled *iggcon.PolledMessage) []string {
	t.Helper()
	var out []string
	for _, m := range polled.Messages {
		out = append(out, string(m.Payload))
		headers, err := iggcon.DeserializeHeaders(m.UserHeaders)
		if err != nil || len(headers) != 1 || fmt.Sprintf("msg-%s", headers[0].Value.Value) != string(m.Payload) {
			t.Errorf("message %q at offset %d has headers %+v (err %v), want seq matching the payload",
				m.Payload, m.Header.Offset, headers, err)
		}
	}
	return out
}

func wantPayloads(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("msg-%d", i))
	}
	return out
}

func TestStreamsAndTopicsLifecycle(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)

	if _, err := cli.GetStream(id(t, "demo")); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("GetStream of a missing stream: err = %v, want StreamIdNotFound", err)
	}
	created, err := cli.CreateStream("demo")
	if err != nil || created.Id != 0 || created.Name != "demo" {
		t.Fatalf("CreateStream = %+v, %v; want id 0 named demo", created, err)
	}
	if _, err := cli.CreateStream("demo"); !errors.Is(err, ierror.ErrStreamNameAlreadyExists) {
		t.Fatalf("CreateStream twice: err = %v, want StreamNameAlreadyExists", err)
	}
	topic, err := cli.CreateTopic(id(t, uint32(0)), "events", 3, iggcon.CompressionAlgorithmNone, 0, 0, nil)
	if err != nil || topic.Id != 0 || len(topic.Partitions) != 3 || topic.Partitions[2].Id != 2 ||
		topic.MessageExpiry != iggcon.Duration(^uint64(0)) || topic.MaxTopicSize != ^uint64(0) || topic.ReplicationFactor != 1 {
		t.Fatalf("CreateTopic = %+v, %v; want id 0, partitions 0..2, defaults resolved", topic, err)
	}
	if _, err := cli.CreateTopic(id(t, "demo"), "events", 1, iggcon.CompressionAlgorithmNone, 0, 0, nil); !errors.Is(err, ierror.ErrTopicNameAlreadyExists) {
		t.Fatalf("CreateTopic twice: err = %v, want TopicNameAlreadyExists", err)
	}
	if _, err := cli.CreateTopic(id(t, "demo"), "bad", 1, 0, 0, 0, nil); !errors.Is(err, ierror.ErrInvalidCommand) {
		t.Fatalf("CreateTopic with compression 0: err = %v, want InvalidCommand", err)
	}
	if _, err := cli.CreateTopic(id(t, "nope"), "events", 1, iggcon.CompressionAlgorithmNone, 0, 0, nil); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("CreateTopic in a missing stream: err = %v, want StreamIdNotFound", err)
	}
	if err := cli.CreatePartitions(id(t, "demo"), id(t, "events"), 2); err != nil {
		t.Fatalf("CreatePartitions: %v", err)
	}

	details, err := cli.GetStream(id(t, uint32(0)))
	if err != nil || details.Name != "demo" || details.TopicsCount != 1 || len(details.Topics) != 1 || details.Topics[0].PartitionsCount != 5 {
		t.Fatalf("GetStream = %+v, %v; want demo with one topic of 5 partitions", details, err)
	}
	got, err := cli.GetTopic(id(t, "demo"), id(t, uint32(0)))
	if err != nil || got.Name != "events" || len(got.Partitions) != 5 || got.Partitions[4].Id != 4 {
		t.Fatalf("GetTopic = %+v, %v; want events with partitions 0..4", got, err)
	}
	if _, err := cli.GetTopic(id(t, "demo"), id(t, "nope")); !errors.Is(err, ierror.ErrTopicIdNotFound) {
		t.Fatalf("GetTopic of a missing topic: err = %v, want TopicIdNotFound", err)
	}
	if _, err := cli.CreateStream("other"); err != nil {
		t.Fatal(err)
	}
	streams, err := cli.GetStreams()
	if err != nil || len(streams) != 2 || streams[0].Name != "demo" || streams[1].Name != "other" {
		t.Fatalf("GetStreams = %+v, %v; want demo and other", streams, err)
	}
	topics, err := cli.GetTopics(id(t, "demo"))
	if err != nil || len(topics) != 1 {
		t.Fatalf("GetTopics = %+v, %v; want one topic", topics, err)
	}

	if err := cli.DeleteTopic(id(t, "demo"), id(t, "events")); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if err := cli.DeleteTopic(id(t, "demo"), id(t, "events")); !errors.Is(err, ierror.ErrTopicIdNotFound) {
		t.Fatalf("DeleteTopic twice: err = %v, want TopicIdNotFound", err)
	}
	if err := cli.DeleteStream(id(t, "demo")); err != nil {
		t.Fatalf("DeleteStream: %v", err)
	}
	if err := cli.DeleteStream(id(t, "demo")); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("DeleteStream twice: err = %v, want StreamIdNotFound", err)
	}
	// The freed id 0 is reused by the next stream.
	again, err := cli.CreateStream("again")
	if err != nil || again.Id != 0 {
		t.Fatalf("CreateStream after delete = %+v, %v; want the freed id 0", again, err)
	}
}

func TestSendAndPollEveryStrategy(t *testing.T) {
	// The server's clock is stepped between the two batches, so the second one is stamped later.
	var now atomic.Uint64
	now.Store(1_700_000_000_000_000)
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0"})
	devbroker.SetClock(srv, now.Load)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 1)
	partition := ptr(uint32(0))
	consumer := iggcon.NewSingleConsumer(id(t, uint32(1)))

	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), headerMessages(t, 0, 5)); err != nil {
		t.Fatalf("send first batch: %v", err)
	}
	now.Add(2000)
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), headerMessages(t, 5, 5)); err != nil {
		t.Fatalf("send second batch: %v", err)
	}
	stored, err := srv.Messages("demo", "events")
	if err != nil || len(stored) != 10 {
		t.Fatalf("Messages = %d messages, %v; want 10", len(stored), err)
	}
	secondBatchTime := stored[5].Timestamp

	tests := []struct {
		name     string
		strategy iggcon.PollingStrategy
		count    uint32
		want     []string
	}{
		{"first", iggcon.FirstPollingStrategy(), 3, wantPayloads(0, 3)},
		{"offset", iggcon.OffsetPollingStrategy(4), 3, wantPayloads(4, 7)},
		{"offset past the end", iggcon.OffsetPollingStrategy(10), 3, nil},
		{"timestamp", iggcon.TimestampPollingStrategy(secondBatchTime), 100, wantPayloads(5, 10)},
		{"last", iggcon.LastPollingStrategy(), 4, wantPayloads(6, 10)},
		{"next without a stored offset", iggcon.NextPollingStrategy(), 2, wantPayloads(0, 2)},
		{"count zero", iggcon.FirstPollingStrategy(), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			polled, err := cli.PollMessages(stream, topic, consumer, tc.strategy, tc.count, false, partition)
			if err != nil {
				t.Fatalf("poll: %v", err)
			}
			if got := payloads(t, polled); !slices.Equal(got, tc.want) {
				t.Errorf("payloads = %q, want %q", got, tc.want)
			}
			if polled.CurrentOffset != 9 || polled.PartitionId != 0 {
				t.Errorf("partition %d current offset %d, want partition 0 at 9", polled.PartitionId, polled.CurrentOffset)
			}
		})
	}

	// Offsets, timestamps and ids are the server's (docs/iggy-protocol-0.8.md §6).
	polled, err := cli.PollMessages(stream, topic, consumer, iggcon.FirstPollingStrategy(), 10, false, partition)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[iggcon.MessageID]bool{}
	for i, m := range polled.Messages {
		if m.Header.Offset != uint64(i) || m.Header.Timestamp == 0 || m.Header.Checksum == 0 || m.Header.Id[6]>>4 != 4 || seen[m.Header.Id] {
			t.Errorf("message %d header %+v: want offset %d, a timestamp, a checksum and a fresh UUID v4", i, m.Header, i)
		}
		seen[m.Header.Id] = true
	}
}

func TestPartitioningPicksPartitions(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 3)

	for range 4 { // balanced: one partition per request, round robin
		if err := cli.SendMessages(stream, topic, iggcon.None(), headerMessages(t, 0, 2)); err != nil {
			t.Fatalf("balanced send: %v", err)
		}
	}
	byKey, err := iggcon.EntityIdString("user-42")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.SendMessages(stream, topic, byKey, headerMessages(t, 0, 1)); err != nil {
		t.Fatalf("keyed send: %v", err)
	}
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(7), headerMessages(t, 0, 1)); !errors.Is(err, ierror.ErrPartitionNotFound) {
		t.Fatalf("send to partition 7 of 3: err = %v, want PartitionNotFound", err)
	}
	perPartition := testkit.PartitionCounts(t, srv, "demo", "events")
	// Requests went to 0, 1, 2, 0 (two messages each); XXH32("user-42") % 3 = 2.
	want := map[uint32]int{0: 4, 1: 2, 2: 3}
	for p, n := range want {
		if perPartition[p] != n {
			t.Errorf("partition %d holds %d messages, want %d (all: %v)", p, perPartition[p], n, perPartition)
		}
	}
}

func TestStoredOffsetsAreResumed(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 1)
	consumer := iggcon.NewSingleConsumer(id(t, "reader"))
	partition := ptr(uint32(0))

	if offset, err := cli.GetConsumerOffset(consumer, stream, topic, partition); err != nil || offset != nil {
		t.Fatalf("GetConsumerOffset before any store = %+v, %v; want nil, nil", offset, err)
	}
	if err := cli.StoreConsumerOffset(consumer, stream, topic, 0, partition); !errors.Is(err, ierror.ErrInvalidOffset) {
		t.Fatalf("store on an empty partition: err = %v, want InvalidOffset", err)
	}
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), headerMessages(t, 0, 8)); err != nil {
		t.Fatal(err)
	}
	if err := cli.StoreConsumerOffset(consumer, stream, topic, 4, partition); err != nil {
		t.Fatalf("store offset 4: %v", err)
	}
	if err := cli.StoreConsumerOffset(consumer, stream, topic, 8, partition); !errors.Is(err, ierror.ErrInvalidOffset) {
		t.Fatalf("store beyond the last offset: err = %v, want InvalidOffset", err)
	}

	// A second connection (as after a restart of the consumer) resumes after offset 4.
	other := testkit.LoggedInClient(t, srv)
	offset, err := other.GetConsumerOffset(consumer, stream, topic, nil)
	if err != nil || offset == nil || offset.StoredOffset != 4 || offset.CurrentOffset != 7 || offset.PartitionId != 0 {
		t.Fatalf("GetConsumerOffset = %+v, %v; want stored 4, current 7 on partition 0", offset, err)
	}
	polled, err := other.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), 2, false, partition)
	if err != nil {
		t.Fatal(err)
	}
	if got := payloads(t, polled); !slices.Equal(got, wantPayloads(5, 7)) {
		t.Errorf("next after stored offset 4 = %q, want msg-5, msg-6", got)
	}
	if err := other.DeleteConsumerOffset(consumer, stream, topic, partition); err != nil {
		t.Fatalf("DeleteConsumerOffset: %v", err)
	}
	if offset, err := other.GetConsumerOffset(consumer, stream, topic, partition); err != nil || offset != nil {
		t.Fatalf("GetConsumerOffset after delete = %+v, %v; want nil, nil", offset, err)
	}
}

func TestAutoCommitMovesNext(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 1)
	consumer := iggcon.NewSingleConsumer(id(t, uint32(3)))
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), headerMessages(t, 0, 7)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		polled, err := cli.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), 3, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, payloads(t, polled)...)
	}
	if !slices.Equal(got, wantPayloads(0, 7)) {
		t.Errorf("auto-committed next polls returned %q, want each of msg-0..msg-6 once", got)
	}
	offset, err := cli.GetConsumerOffset(consumer, stream, topic, nil)
	if err != nil || offset == nil || offset.StoredOffset != 6 {
		t.Errorf("stored offset = %+v, %v; want 6", offset, err)
	}
}

func TestConsumerGroupMembersSplitPartitions(t *testing.T) {
	srv := testkit.StartBroker(t)
	admin := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, admin, 2)
	for p := range uint32(2) {
		if err := admin.SendMessages(stream, topic, iggcon.PartitionId(p), headerMessages(t, int(p)*10, 3)); err != nil {
			t.Fatal(err)
		}
	}
	created, err := admin.CreateConsumerGroup(stream, topic, "workers")
	if err != nil || created.Name != "workers" || created.PartitionsCount != 2 {
		t.Fatalf("CreateConsumerGroup = %+v, %v", created, err)
	}
	group := id(t, "workers")
	if _, err := admin.CreateConsumerGroup(stream, topic, "workers"); !errors.Is(err, ierror.ErrConsumerGroupNameAlreadyExists) {
		t.Fatalf("CreateConsumerGroup twice: err = %v, want ConsumerGroupNameAlreadyExists", err)
	}
	consumer := iggcon.NewGroupConsumer(group)

	first := testkit.LoggedInClient(t, srv)
	second := testkit.LoggedInClient(t, srv)
	if _, err := first.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), 10, true, nil); !errors.Is(err, ierror.ErrConsumerGroupMemberNotFound) {
		t.Fatalf("poll before joining: err = %v, want ConsumerGroupMemberNotFound", err)
	}
	for _, cli := range []iggcon.Client{first, second} {
		if err := cli.JoinConsumerGroup(stream, topic, group); err != nil {
			t.Fatalf("join: %v", err)
		}
	}
	details, err := admin.GetConsumerGroup(stream, topic, group)
	if err != nil || len(details.Members) != 2 || details.Members[0].PartitionsCount != 1 || details.Members[1].PartitionsCount != 1 {
		t.Fatalf("GetConsumerGroup = %+v, %v; want two members with one partition each", details, err)
	}

	pollAll := func(cli iggcon.Client) (partitions []uint32, got []string) {
		for range 3 {
			polled, err := cli.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), 10, true, nil)
			if err != nil {
				t.Fatalf("group poll: %v", err)
			}
			if len(polled.Messages) > 0 {
				partitions = append(partitions, polled.PartitionId)
			}
			got = append(got, payloads(t, polled)...)
		}
		return partitions, got
	}
	firstParts, firstGot := pollAll(first)
	secondParts, secondGot := pollAll(second)
	if len(firstParts) != 1 || len(secondParts) != 1 || firstParts[0] == secondParts[0] {
		t.Fatalf("members read partitions %v and %v, want one distinct partition each", firstParts, secondParts)
	}
	all := append(firstGot, secondGot...)
	slices.Sort(all)
	want := append(wantPayloads(0, 3), wantPayloads(10, 13)...)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("the group read %q, want every message once: %q", all, want)
	}

	// When the second member leaves, the first owns both partitions.
	if err := second.LeaveConsumerGroup(stream, topic, group); err != nil {
		t.Fatalf("leave: %v", err)
	}
	if err := second.LeaveConsumerGroup(stream, topic, group); !errors.Is(err, ierror.ErrConsumerGroupMemberNotFound) {
		t.Fatalf("leave twice: err = %v, want ConsumerGroupMemberNotFound", err)
	}
	details, err = admin.GetConsumerGroup(stream, topic, group)
	if err != nil || len(details.Members) != 1 || !slices.Equal(details.Members[0].Partitions, []uint32{0, 1}) {
		t.Fatalf("after leave GetConsumerGroup = %+v, %v; want one member owning 0 and 1", details, err)
	}

	// A closed connection stops being a member.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed member to be removed", func() bool {
		details, err := admin.GetConsumerGroup(stream, topic, group)
		return err == nil && len(details.Members) == 0
	})
	if err := admin.DeleteConsumerGroup(stream, topic, group); err != nil {
		t.Fatalf("DeleteConsumerGroup: %v", err)
	}
	if _, err := admin.GetConsumerGroup(stream, topic, group); !errors.Is(err, ierror.ErrConsumerGroupIdNotFound) {
		t.Fatalf("GetConsumerGroup after delete: err = %v, want ConsumerGroupIdNotFound", err)
	}
}

func TestLogin(t *testing.T) {
	withExpiredToken := testkit.BrokerOption(func(cfg *devbroker.Config) {
		cfg.PersonalAccessTokens = append(cfg.PersonalAccessTokens, devbroker.PersonalAccessToken{Token: "old-token", ExpiresAt: time.Now().Add(-time.Minute)})
	})
	srv := testkit.StartBroker(t, testkit.WithToken("secret-token"), withExpiredToken, testkit.WithStream("demo", map[string]uint32{"events": 1}))

	t.Run("personal access token", func(t *testing.T) {
		cli := testkit.NewClient(t, srv.Addr())
		identity, err := cli.LoginWithPersonalAccessToken("secret-token")
		if err != nil || identity.UserId != 0 {
			t.Fatalf("PAT login = %+v, %v; want root user 0", identity, err)
		}
		if _, err := cli.GetStream(id(t, "demo")); err != nil {
			t.Fatalf("GetStream after PAT login: %v", err)
		}
	})
	t.Run("unknown token", func(t *testing.T) {
		cli := testkit.NewClient(t, srv.Addr())
		if _, err := cli.LoginWithPersonalAccessToken("wrong"); !errors.Is(err, ierror.ErrResourceNotFound) {
			t.Fatalf("login with an unknown token: err = %v, want ResourceNotFound", err)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		cli := testkit.NewClient(t, srv.Addr())
		if _, err := cli.LoginWithPersonalAccessToken("old-token"); !errors.Is(err, ierror.ErrPersonalAccessTokenExpired) {
			t.Fatalf("login with an expired token: err = %v, want PersonalAccessTokenExpired", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		cli := testkit.NewClient(t, srv.Addr())
		if _, err := cli.LoginUser("iggy", "wrong"); !errors.Is(err, ierror.ErrInvalidCredentials) {
			t.Fatalf("login with a wrong password: err = %v, want InvalidCredentials", err)
		}
		if _, err := cli.GetStreams(); !errors.Is(err, ierror.ErrUnauthenticated) {
			t.Fatalf("GetStreams after a failed login: err = %v, want Unauthenticated", err)
		}
	})
	t.Run("logout", func(t *testing.T) {
		cli := testkit.LoggedInClient(t, srv)
		if err := cli.LogoutUser(); err != nil {
			t.Fatalf("logout: %v", err)
		}
		err := cli.SendMessages(id(t, "demo"), id(t, "events"), iggcon.None(), headerMessages(t, 0, 1))
		if !errors.Is(err, ierror.ErrUnauthenticated) {
			t.Fatalf("send after logout: err = %v, want Unauthenticated", err)
		}
		if err := cli.Ping(); err != nil {
			t.Fatalf("ping after logout (the connection must stay in sync): %v", err)
		}
	})
}

func TestRestartAndDroppedConnections(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 1)
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), headerMessages(t, 0, 3)); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()

	if err := srv.Restart(true); err != nil {
		t.Fatalf("restart keeping data: %v", err)
	}
	if srv.Addr() != addr {
		t.Fatalf("restart moved the broker from %s to %s", addr, srv.Addr())
	}
	if _, err := cli.GetStreams(); err == nil {
		t.Fatal("the old connection still works after a restart; want an error")
	}
	reconnected := testkit.LoggedInClient(t, srv)
	polled, err := reconnected.PollMessages(stream, topic, iggcon.DefaultConsumer(), iggcon.FirstPollingStrategy(), 10, false, nil)
	if err != nil || len(polled.Messages) != 3 {
		t.Fatalf("poll after restart with data = %d messages, %v; want 3", len(polled.Messages), err)
	}

	if err := srv.Restart(false); err != nil {
		t.Fatalf("restart without data: %v", err)
	}
	fresh := testkit.LoggedInClient(t, srv)
	if _, err := fresh.GetStream(stream); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("GetStream after a restart without data: err = %v, want StreamIdNotFound", err)
	}
	if _, err := srv.Messages("demo", "events"); !errors.Is(err, devbroker.ErrStreamNotFound) {
		t.Fatalf("Messages after a restart without data: err = %v, want ErrStreamNotFound", err)
	}
}

func TestClientDetails(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	meta, err := cli.GetClusterMetadata()
	if err != nil || len(meta.Nodes) != 1 || meta.Name != "single-node" {
		t.Fatalf("GetClusterMetadata = %+v, %v; want one node", meta, err)
	}
	details, err := cli.GetClient(1)
	if err != nil || details.ID != 1 || details.Transport != string(iggcon.Tcp) {
		t.Fatalf("GetClient(1) = %+v, %v; want the first connection over tcp", details, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, what, cond)
}

func TestRetentionDropsOldestBatches(t *testing.T) {
	// Each batch below is 10 messages of 164 bytes (1,640 bytes): a 4,000-byte
	// cap keeps the two newest batches.
	srv := testkit.StartBroker(t, testkit.WithRetention(4000))
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 1)
	payload := make([]byte, 100)
	for range 5 {
		var batch []iggcon.IggyMessage
		for range 10 {
			m, err := iggcon.NewIggyMessage(payload)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, m)
		}
		if err := cli.SendMessages(stream, topic, iggcon.PartitionId(0), batch); err != nil {
			t.Fatal(err)
		}
	}
	consumer := iggcon.NewSingleConsumer(id(t, uint32(1)))
	if err := cli.StoreConsumerOffset(consumer, stream, topic, 5, nil); err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []iggcon.PollingStrategy{iggcon.FirstPollingStrategy(), iggcon.OffsetPollingStrategy(3), iggcon.NextPollingStrategy()} {
		polled, err := cli.PollMessages(stream, topic, consumer, strategy, 100, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(polled.Messages) != 20 || polled.Messages[0].Header.Offset != 30 || polled.CurrentOffset != 49 {
			t.Errorf("poll %+v: %d messages, current %d; want 20 from offset 30, current 49",
				strategy, len(polled.Messages), polled.CurrentOffset)
		}
	}
	details, err := cli.GetTopic(stream, topic)
	if err != nil || details.Partitions[0].MessagesCount != 20 || details.Partitions[0].SizeBytes != 3280 {
		t.Fatalf("GetTopic = %+v, %v; want 20 retained messages of 3,280 bytes", details, err)
	}
}

func TestMessagesShowsWhatATopicHolds(t *testing.T) {
	srv := testkit.StartBroker(t)
	cli := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, cli, 2)
	explicitID := iggcon.MessageID{0x6f, 0x1c, 0x2a, 0x3b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	key, err := iggcon.NewHeaderKeyString("k")
	if err != nil {
		t.Fatal(err)
	}
	headers := []iggcon.HeaderEntry{{Key: key, Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte("v")}}}
	withID, err := iggcon.NewIggyMessage([]byte("kept id"), iggcon.WithID(explicitID), iggcon.WithUserHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := iggcon.NewIggyMessage([]byte("fresh id"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.SendMessages(stream, topic, iggcon.PartitionId(1), []iggcon.IggyMessage{withID, plain}); err != nil {
		t.Fatal(err)
	}

	stored, err := srv.Messages("demo", "events")
	if err != nil || len(stored) != 2 {
		t.Fatalf("Messages = %+v, %v; want 2", stored, err)
	}
	first, second := stored[0], stored[1]
	if first.Partition != 1 || first.Offset != 0 || string(first.Payload) != "kept id" || first.ID != explicitID ||
		first.OriginTimestamp != withID.Header.OriginTimestamp || first.Checksum == 0 {
		t.Errorf("first stored message = %+v; want partition 1, offset 0, the sent id and origin timestamp", first)
	}
	// The docs/iggy-protocol-0.8.md §5.2 example: string key "k", string value "v".
	if want := []byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}; string(first.UserHeaders) != string(want) {
		t.Errorf("stored user headers % x, want % x", first.UserHeaders, want)
	}
	if second.Offset != 1 || second.ID == (iggcon.MessageID{}) || second.UserHeaders != nil || second.Timestamp != first.Timestamp {
		t.Errorf("second stored message = %+v; want offset 1, a generated id, no headers, the batch's timestamp", second)
	}
	if _, err := srv.Messages("demo", "nope"); !errors.Is(err, devbroker.ErrTopicNotFound) {
		t.Errorf("Messages of a missing topic: err = %v, want ErrTopicNotFound", err)
	}
}

func TestGroupOffsetsAndOwnership(t *testing.T) {
	srv := testkit.StartBroker(t)
	admin := testkit.LoggedInClient(t, srv)
	stream, topic := setupTopic(t, admin, 2)
	for p := range uint32(2) {
		if err := admin.SendMessages(stream, topic, iggcon.PartitionId(p), headerMessages(t, 0, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CreateConsumerGroup(stream, topic, "g"); err != nil {
		t.Fatal(err)
	}
	group := iggcon.NewGroupConsumer(id(t, "g"))
	first, second := testkit.LoggedInClient(t, srv), testkit.LoggedInClient(t, srv)
	for _, cli := range []iggcon.Client{first, second} {
		if err := cli.JoinConsumerGroup(stream, topic, id(t, "g")); err != nil {
			t.Fatal(err)
		}
	}
	// Cooperative join: the first member keeps partition 0, the second takes 1.
	if err := first.StoreConsumerOffset(group, stream, topic, 1, ptr(uint32(0))); err != nil {
		t.Fatalf("store on an owned partition: %v", err)
	}
	if err := first.StoreConsumerOffset(group, stream, topic, 1, ptr(uint32(1))); !errors.Is(err, ierror.ErrError) {
		t.Fatalf("store on a partition owned by the other member: err = %v, want status 3022 (ErrError in the SDK)", err)
	}
	polled, err := first.PollMessages(stream, topic, group, iggcon.FirstPollingStrategy(), 10, false, ptr(uint32(1)))
	if err != nil || len(polled.Messages) != 0 || polled.PartitionId != 0 || polled.CurrentOffset != 0 {
		t.Fatalf("poll of a partition the member does not own = %+v, %v; want OK with nothing", polled, err)
	}
	// The group's offset is shared: the second member's reader sees it, without membership.
	offset, err := admin.GetConsumerOffset(group, stream, topic, ptr(uint32(0)))
	if err != nil || offset == nil || offset.StoredOffset != 1 {
		t.Fatalf("group offset on partition 0 = %+v, %v; want 1", offset, err)
	}
	polled, err = first.PollMessages(stream, topic, group, iggcon.NextPollingStrategy(), 10, true, nil)
	if err != nil || len(polled.Messages) != 1 || polled.Messages[0].Header.Offset != 2 {
		t.Fatalf("next poll after group offset 1 = %+v, %v; want offset 2 only", polled, err)
	}
	if _, err := admin.PollMessages(stream, topic, iggcon.NewGroupConsumer(id(t, "nope")), iggcon.NextPollingStrategy(), 1, false, nil); !errors.Is(err, ierror.ErrConsumerGroupIdNotFound) {
		t.Fatalf("poll by a missing group: err = %v, want ConsumerGroupIdNotFound", err)
	}
}
