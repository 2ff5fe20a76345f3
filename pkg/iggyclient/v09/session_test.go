package v09_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/v09"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// createAll answers EnsureTopic as for an empty server: no stream, no topic, both created.
func createAll(r request) []byte {
	if b := basics(r); b != nil {
		return b
	}
	switch r.header.Operation {
	case wire09.OpNonReplicated:
		return ok(r, nil) // GetStream, GetTopic: not found
	case wire09.OpCreateStream:
		return committed(r, wire09.AppendStream(nil, wire09.Stream{Name: []byte("s")}))
	case wire09.OpCreateTopic:
		return committed(r, nil)
	}
	return status(r, iggywire.StatusInvalidCommand)
}

// Requests are numbered as §4.3 says: Register 0/0; reads peek at the counter; metadata requests
// consume it; every request after login carries the session; the client id is non-zero and the
// same on one connection.
func TestRequestNumbering(t *testing.T) {
	node := startFake(t, createAll)
	c := dialFake(t, node.addr)
	if err := c.EnsureTopic(testContext(t), "s", "t", 2); err != nil {
		t.Fatal(err)
	}
	type numbered struct {
		op      wire09.Operation
		code    wire09.Command
		request uint64
		session uint64
	}
	want := []numbered{
		{wire09.OpRegister, 0, 0, 0},
		{wire09.OpNonReplicated, wire09.CmdGetClusterMetadata, 1, session},
		{wire09.OpNonReplicated, wire09.CmdGetStream, 1, session},
		{wire09.OpCreateStream, 0, 1, session},
		{wire09.OpNonReplicated, wire09.CmdGetTopic, 2, session},
		{wire09.OpCreateTopic, 0, 2, session},
	}
	reqs := node.requests()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, r := range reqs {
		got := numbered{r.header.Operation, r.header.Code, r.header.Request, r.header.Session}
		if got != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got, want[i])
		}
		if r.header.Client.IsZero() || r.header.Client != reqs[0].header.Client {
			t.Errorf("request %d: client id %s, want the login's non-zero %s", i, r.header.Client, reqs[0].header.Client)
		}
		if err := wire09.ValidateRequest(r.raw); err != nil {
			t.Errorf("request %d fails the server's checks: %v", i, err)
		}
	}
	login, err := wire09.DecodeLogin(reqs[0].body)
	if err != nil || string(login.Username) != "iggy" || string(login.SDKName) != "iggy-connectors-go" || login.ProtocolVersion != wire09.ProtocolVersion {
		t.Fatalf("login body %+v, %v", login, err)
	}
	var topic wire09.CreateTopic
	if topic, err = wire09.DecodeCreateTopic(reqs[5].body); err != nil || topic.PartitionsCount != 2 || len(topic.Options) != 0 {
		t.Fatalf("create topic %+v, %v; want 2 partitions and no options", topic, err)
	}
}

// A token wins over username and password and travels in the PAT login shape.
func TestLoginByToken(t *testing.T) {
	node := startFake(t, basics)
	c, err := engine.DialClient(testContext(t), options(node.addr, func(o *api.Options) { o.Token = "pat" }), v09.NewProtocol)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	login, err := wire09.DecodeLogin(node.requests()[0].body)
	if err != nil || !login.IsToken() || string(login.Token) != "pat" {
		t.Fatalf("login %+v, %v; want the token", login, err)
	}
}

// A refused login is an eviction: bad credentials and tokens are ErrUnauthorized, an incompatible
// protocol names the server's window; none of them is retried until the deadline.
func TestLoginEvictions(t *testing.T) {
	for _, tt := range []struct {
		reason   wire09.EvictionReason
		wantErr  error
		wantText string
	}{
		{wire09.EvictInvalidCredentials, api.ErrUnauthorized, "invalid credentials"},
		{wire09.EvictInvalidToken, api.ErrUnauthorized, "invalid personal access token"},
		{wire09.EvictUserInactive, api.ErrUnauthorized, "user inactive"},
		{wire09.EvictIncompatibleProtocol, iggywire.StatusIncompatibleProtocolVersion, "server accepts protocol 12288..12288"},
		{wire09.EvictMalformedLogin, iggywire.StatusInvalidFormat, "malformed login"},
	} {
		t.Run(tt.reason.String(), func(t *testing.T) {
			node := startFake(t, func(r request) []byte {
				return wire09.AppendEviction(nil, &wire09.EvictionHeader{Client: r.header.Client, Reason: tt.reason,
					VersionMax: 12288, VersionMin: 12288})
			})
			ctx := testContext(t)
			_, err := engine.DialClient(ctx, options(node.addr), v09.NewProtocol)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("error %v, want %v mentioning %q", err, tt.wantErr, tt.wantText)
			}
			if ctx.Err() != nil || len(node.requests()) != 1 {
				t.Fatalf("the login was retried: %d requests", len(node.requests()))
			}
		})
	}
}

// An eviction in the middle of a session (a stale client, a lost session) is logged with its
// reason; the client logs in again with a fresh client id and the call succeeds.
func TestEvictionDuringACallReconnects(t *testing.T) {
	for _, reason := range []wire09.EvictionReason{wire09.EvictStaleClient, wire09.EvictNoSession, wire09.EvictSessionTooLow} {
		t.Run(reason.String(), func(t *testing.T) {
			var evicted atomic.Bool
			node := startFake(t, func(r request) []byte {
				if b := basics(r); b != nil {
					return b
				}
				if r.code() == wire09.CmdGetTopic && !evicted.Swap(true) {
					return evict(r, reason)
				}
				return topicReply(r, 3)
			})
			var logs bytes.Buffer
			c := dialFake(t, node.addr, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			info, err := c.TopicInfo(testContext(t), "s", "t")
			if err != nil || info.Partitions != 3 {
				t.Fatalf("TopicInfo = %+v, %v", info, err)
			}
			if !strings.Contains(logs.String(), "reason="+strings.ReplaceAll(reason.String(), " ", "")) &&
				!strings.Contains(logs.String(), `reason="`+reason.String()+`"`) {
				t.Errorf("the eviction's reason %q is not logged:\n%s", reason, logs.String())
			}
			logins := node.requests()
			var ids []wire09.U128
			for _, r := range logins {
				if r.header.Operation == wire09.OpRegister {
					ids = append(ids, r.header.Client)
				}
			}
			if len(ids) != 2 || ids[0] == ids[1] {
				t.Fatalf("logins with client ids %v, want two different ones", ids)
			}
		})
	}
}

// An eviction for a reason the client does not know is an error, never a relogin loop.
func TestUnknownEvictionIsAnError(t *testing.T) {
	node := startFake(t, func(r request) []byte {
		if b := basics(r); b != nil {
			return b
		}
		return evict(r, 99)
	})
	c := dialFake(t, node.addr)
	_, err := c.TopicInfo(testContext(t), "s", "t")
	if !errors.Is(err, iggywire.StatusInvalidCommand) {
		t.Fatalf("error %v, want the invalid command the reason maps to", err)
	}
	if n := node.count(func(r request) bool { return r.header.Operation == wire09.OpRegister }); n != 1 {
		t.Fatalf("%d logins, want 1", n)
	}
}

// Transient answers are replayed with the identical bytes (§6.4): 57 until it clears, 58 on the
// same node for 2 s and then from a fresh connection.
func TestTransientAnswersAreReplayed(t *testing.T) {
	for _, tt := range []struct {
		name      string
		code      iggywire.Status
		transient int // answers before success
		asStatus  bool
	}{
		{"57 in the result section", iggywire.StatusTransientNotCommitted, 3, false},
		{"57 as a header status", iggywire.StatusTransientNotCommitted, 2, true},
		{"58 briefly", iggywire.StatusTransientNotAccepted, 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var answered atomic.Int32
			node := startFake(t, func(r request) []byte {
				if b := basics(r); b != nil {
					return b
				}
				switch r.header.Operation {
				case wire09.OpNonReplicated:
					return ok(r, nil)
				case wire09.OpCreateStream:
					if int(answered.Add(1)) <= tt.transient {
						if tt.asStatus {
							return status(r, tt.code)
						}
						return rejected(r, tt.code)
					}
					return committed(r, nil)
				}
				return committed(r, nil)
			})
			c := dialFake(t, node.addr)
			if err := c.EnsureTopic(testContext(t), "s", "t", 1); err != nil {
				t.Fatal(err)
			}
			var creates []request
			for _, r := range node.requests() {
				if r.header.Operation == wire09.OpCreateStream {
					creates = append(creates, r)
				}
			}
			if len(creates) != tt.transient+1 {
				t.Fatalf("%d create requests, want %d", len(creates), tt.transient+1)
			}
			for i, r := range creates[1:] {
				if !bytes.Equal(r.raw, creates[0].raw) || r.conn != creates[0].conn {
					t.Fatalf("replay %d differs from the first send (or came on another connection)", i+1)
				}
			}
		})
	}
}

// A node that keeps answering 58 for 2 s is left: the client reconnects and sends the request
// again, numbered on the new session.
func TestNotAcceptedForTooLongMovesOn(t *testing.T) {
	node := startFake(t, func(r request) []byte {
		if b := basics(r); b != nil {
			return b
		}
		switch {
		case r.header.Operation == wire09.OpNonReplicated:
			return ok(r, nil)
		case r.header.Operation == wire09.OpCreateStream && r.conn == 1:
			return rejected(r, iggywire.StatusTransientNotAccepted)
		}
		return committed(r, nil)
	})
	c := dialFake(t, node.addr)
	if err := c.EnsureTopic(testContext(t), "s", "t", 1); err != nil {
		t.Fatal(err)
	}
	if n := node.count(func(r request) bool { return r.header.Operation == wire09.OpCreateStream && r.conn == 2 }); n != 1 {
		t.Fatalf("%d creates on the second connection, want 1", n)
	}
}

// After login the client reads the roster; in a cluster it moves to the healthy leader and
// talks to it only.
func TestMovesToTheClusterLeader(t *testing.T) {
	leader := startFake(t, func(r request) []byte {
		if b := basics(r); b != nil {
			return b
		}
		return topicReply(r, 4)
	})
	host, port := splitHostPort(t, leader.addr)
	roster := func(r request) []byte {
		return ok(r, wire09.AppendClusterMetadata(nil, wire09.ClusterMetadata{Name: []byte("c"), Nodes: []wire09.ClusterNode{
			{Name: []byte("a"), IP: []byte("127.0.0.1"), TCPPort: 1, Role: wire09.RoleFollower},
			{Name: []byte("b"), IP: []byte(host), TCPPort: port, Role: wire09.RoleLeader},
		}}))
	}
	follower := startFake(t, func(r request) []byte {
		if r.code() == wire09.CmdGetClusterMetadata {
			return roster(r)
		}
		if b := basics(r); b != nil {
			return b
		}
		return status(r, iggywire.StatusTransientNotAccepted)
	})
	c := dialFake(t, follower.addr)
	info, err := c.TopicInfo(testContext(t), "s", "t")
	if err != nil || info.Partitions != 4 {
		t.Fatalf("TopicInfo = %+v, %v; want the leader's answer", info, err)
	}
	if n := follower.count(func(r request) bool { return r.code() == wire09.CmdGetTopic }); n != 0 {
		t.Fatalf("the follower got %d topic reads", n)
	}
}

// The server's refusal of a batch (a checksum it does not accept) is an error naming the code,
// classified as an invalid message, and not retried.
func TestChecksumRefusalIsAnError(t *testing.T) {
	for _, code := range []iggywire.Status{iggywire.StatusInvalidMessageChecksum, iggywire.StatusInvalidBatchChecksum} {
		node := startFake(t, func(r request) []byte {
			if b := basics(r); b != nil {
				return b
			}
			return status(r, code)
		})
		c, err := engine.DialClient(testContext(t), options(node.addr), v09.NewProtocol)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Send(testContext(t), "s", "t", api.Partitioning{}, []api.OutMessage{{Payload: []byte("x")}})
		c.Close()
		if !errors.Is(err, api.ErrInvalidMessage) || !errors.Is(err, code) {
			t.Fatalf("error %v, want ErrInvalidMessage carrying %d", err, code)
		}
		if n := node.count(func(r request) bool { return r.header.Operation == wire09.OpSendMessages }); n != 1 {
			t.Fatalf("%d sends, want 1", n)
		}
	}
}

// Replies that break the protocol (a wrong request echo, a wrong operation, a truncated frame,
// garbage, a send without confirmations, a poll body that does not add up) drop the connection;
// the client reconnects and the retried call succeeds. Nothing panics.
func TestBrokenRepliesDropTheConnection(t *testing.T) {
	for _, tt := range []struct {
		name   string
		break_ func(r request) []byte
	}{
		{"wrong request echo", func(r request) []byte {
			r.header.Request += 5
			return ok(r, nil)
		}},
		{"wrong operation", func(r request) []byte {
			r.header.Operation = wire09.OpCreateTopic
			return ok(r, nil)
		}},
		{"truncated, then hang up", func(r request) []byte { return ok(r, make([]byte, 40))[:270] }},
		{"garbage", func(r request) []byte { return bytes.Repeat([]byte{0xff}, 300) }},
		{"frame type 3", func(r request) []byte {
			f := ok(r, nil)
			f[60] = 3
			return f
		}},
		{"poll prefix counts more than it holds", func(r request) []byte {
			return ok(r, iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{MessagesCount: 2}))
		}},
		{"short poll body", func(r request) []byte { return ok(r, []byte{1, 2, 3}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			node := startFake(t, func(r request) []byte {
				if b := basics(r); b != nil {
					return b
				}
				if r.conn == 1 {
					return tt.break_(r)
				}
				return ok(r, iggywire.AppendPollPrefix(nil, iggywire.PollPrefix{PartitionID: 1}))
			})
			c := dialFake(t, node.addr)
			b, err := c.PollPartition(testContext(t), api.PartitionPoll{Stream: "s", Topic: "t", Partition: 1, From: api.PollFirst, Count: 1})
			if err != nil || b.PartitionID != 1 {
				t.Fatalf("PollPartition = %+v, %v; want the second connection's empty poll", b, err)
			}
		})
	}
}

// A call honours its context while the server stays silent, and the next call works again on a
// fresh connection.
func TestSilentServerAndContext(t *testing.T) {
	var silent atomic.Bool
	silent.Store(true)
	node := startFake(t, func(r request) []byte {
		if b := basics(r); b != nil {
			return b
		}
		if silent.Load() {
			return nil
		}
		return topicReply(r, 1)
	})
	c := dialFake(t, node.addr)
	ctx, cancel := contextWithTimeout(200 * time.Millisecond)
	defer cancel()
	if _, err := c.TopicInfo(ctx, "s", "t"); !errors.Is(err, ctx.Err()) || ctx.Err() == nil {
		t.Fatalf("error %v, want the context's", err)
	}
	silent.Store(false)
	if _, err := c.TopicInfo(testContext(t), "s", "t"); err != nil {
		t.Fatal(err)
	}
}

// A leader that keeps moving is followed at most three times (§8); the client then stays where
// it is and works there.
func TestLeaderRedirectsAreBounded(t *testing.T) {
	const nodes = 5
	fakes := make([]*fakeNode, nodes)
	next := make([]atomic.Value, nodes) // each node names the next one as the leader
	for i := range fakes {
		fakes[i] = startFake(t, func(r request) []byte {
			if r.code() == wire09.CmdGetClusterMetadata {
				host, port := splitHostPort(t, next[i].Load().(string))
				return ok(r, wire09.AppendClusterMetadata(nil, wire09.ClusterMetadata{Name: []byte("c"), Nodes: []wire09.ClusterNode{
					{Name: []byte("me"), IP: []byte("127.0.0.1"), TCPPort: 9, Role: wire09.RoleFollower},
					{Name: []byte("next"), IP: []byte(host), TCPPort: port, Role: wire09.RoleLeader},
				}}))
			}
			if b := basics(r); b != nil {
				return b
			}
			return topicReply(r, uint32(i+1))
		})
	}
	for i := range fakes {
		next[i].Store(fakes[(i+1)%nodes].addr)
	}
	c := dialFake(t, fakes[0].addr)
	info, err := c.TopicInfo(testContext(t), "s", "t")
	if err != nil || info.Partitions != 4 {
		t.Fatalf("TopicInfo = %+v, %v; want the answer of the fourth node (three redirects)", info, err)
	}
	if n := fakes[4].count(func(request) bool { return true }); n != 0 {
		t.Fatalf("the fifth node got %d requests, want none", n)
	}
}
