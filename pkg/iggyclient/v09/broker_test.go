package v09_test

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/v09"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// recordingProxy forwards connections to the broker and records the header of every request
// frame the client sends.
type recordingProxy struct {
	addr    string
	mu      sync.Mutex
	headers []wire09.RequestHeader
}

func startRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				return
			}
			wg.Go(func() { _, _ = io.Copy(client, server); client.Close() })
			wg.Go(func() {
				defer server.Close()
				var buf []byte
				for {
					frame, err := wire09.ReadFrame(client, buf)
					if err != nil {
						return
					}
					h, _ := wire09.DecodeRequestHeader(frame)
					p.mu.Lock()
					p.headers = append(p.headers, h)
					p.mu.Unlock()
					if _, err := server.Write(frame); err != nil {
						return
					}
					buf = frame
				}
			})
		}
	})
	return p
}

// Against the dev broker (which deduplicates metadata requests by their number, as the server
// does, so a reused number would bring back an earlier reply): every call of a pump's life
// succeeds, and the frames are numbered exactly as §4.3 says.
func TestRequestNumberingAgainstTheBroker(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithProtocol(devbroker.Protocol09))
	proxy := startRecordingProxy(t, srv.Addr())
	ctx := testContext(t)
	c, err := engine.DialClient(ctx, options(proxy.addr), v09.NewProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, topic := range []string{"a", "b"} {
		if err := c.EnsureTopic(ctx, "numbered", topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.EnsureConsumerGroup(ctx, "numbered", "a", "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "numbered", "a", api.Partitioning{Kind: api.PartitionByID, PartitionID: 1}, []api.OutMessage{{Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Poll(ctx, api.PollRequest{Stream: "numbered", Topic: "a", Group: "g", Count: 10})
	if err != nil || len(b.Messages) != 1 || b.PartitionID != 1 {
		t.Fatalf("poll = %+v, %v; want the message on partition 1", b, err)
	}
	if err := c.StoreOffset(ctx, "numbered", "a", "g", 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureTopic(ctx, "numbered", "c", 1); err != nil {
		t.Fatal(err)
	}
	if id := b.Messages[0].ID; id[6]>>4 != 4 || id[8]>>6 != 2 {
		t.Errorf("the zero id became %x, want a version 4 UUID", id)
	}

	proxy.mu.Lock()
	headers := append([]wire09.RequestHeader(nil), proxy.headers...)
	proxy.mu.Unlock()
	if len(headers) < 15 || headers[0].Operation != wire09.OpRegister || headers[0].Request != 0 || headers[0].Session != 0 {
		t.Fatalf("%d requests, the first %+v; want a login first", len(headers), headers[0])
	}
	counter, ops := uint64(1), map[wire09.Operation]int{}
	for i, h := range headers[1:] {
		ops[h.Operation]++
		if h.Request != counter || h.Session == 0 || h.Client != headers[0].Client {
			t.Fatalf("request %d (operation %d, code %d): number %d session %d client %s, want number %d on the login's session and client",
				i+1, h.Operation, h.Code, h.Request, h.Session, h.Client, counter)
		}
		if h.Operation.MetadataPlane() {
			counter++
		}
	}
	for _, op := range []wire09.Operation{wire09.OpCreateStream, wire09.OpCreateTopic, wire09.OpCreateConsumerGroup,
		wire09.OpJoinConsumerGroup, wire09.OpSendMessages, wire09.OpStoreConsumerOffset, wire09.OpNonReplicated} {
		if ops[op] == 0 {
			t.Errorf("no request with operation %d was seen", op)
		}
	}
}
