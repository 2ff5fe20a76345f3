package devbroker

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The worked hex examples of docs/iggy-protocol-0.8.md §8, byte for byte over raw TCP.

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// rawClient speaks frames by hand, for tests that must see exact bytes.
type rawClient struct {
	t    testing.TB
	conn net.Conn
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &rawClient{t: t, conn: conn}
}

func (r *rawClient) write(b []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// reply reads one response frame: status, then the payload when OK.
func (r *rawClient) reply() (uint32, []byte) {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var head [8]byte
	if _, err := io.ReadFull(r.conn, head[:]); err != nil {
		r.t.Fatalf("read reply header: %v", err)
	}
	status := binary.LittleEndian.Uint32(head[:4])
	payload := make([]byte, binary.LittleEndian.Uint32(head[4:]))
	if _, err := io.ReadFull(r.conn, payload); err != nil {
		r.t.Fatalf("read reply payload: %v", err)
	}
	return status, payload
}

// exchange writes a request and checks the whole reply frame.
func (r *rawClient) exchange(request, wantReply []byte) {
	r.t.Helper()
	r.write(request)
	status, payload := r.reply()
	got := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, status), uint32(len(payload)))
	got = append(got, payload...)
	if !bytes.Equal(got, wantReply) {
		r.t.Fatalf("reply to % x\n got % x\nwant % x", request, got, wantReply)
	}
}

const loginIggyIggy = "1b000000 26000000 0469676779 0469676779 05000000 302e382e30 00000000"

func startPinned(t *testing.T, micros uint64) *Server {
	t.Helper()
	srv := New(Config{Address: "127.0.0.1:0"})
	srv.currentData().clock = func() uint64 { return micros }
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func TestSpecVectorsLoginAndCluster(t *testing.T) {
	srv := startPinned(t, 1_700_000_000_000_000)
	c := dialRaw(t, srv.Addr())

	c.exchange(unhex(t, "1b000000 26000000 0469676779 0477726f6e 05000000 302e382e30 00000000"),
		unhex(t, "2a000000 00000000")) // wrong password: 42, no payload
	c.exchange(unhex(t, loginIggyIggy), unhex(t, "00000000 04000000 00000000"))

	_, port, _ := net.SplitHostPort(srv.Addr())
	var portLE [2]byte
	var n uint16
	for _, ch := range port {
		n = n*10 + uint16(ch-'0')
	}
	binary.LittleEndian.PutUint16(portLE[:], n)
	c.exchange(unhex(t, "04000000 0c000000"), unhex(t,
		"00000000 37000000 0b000000 73696e676c652d6e6f6465 01000000 09000000 696767792d6e6f6465"+
			"09000000 3132372e302e302e31"+hex.EncodeToString(portLE[:])+"901f b80b 9c1f 0000"))
}

func TestSpecVectorsStreams(t *testing.T) {
	srv := startPinned(t, 1_700_000_000_000_000)
	c := dialRaw(t, srv.Addr())
	c.exchange(unhex(t, loginIggyIggy), unhex(t, "00000000 04000000 00000000"))

	c.exchange(unhex(t, "09000000 ca000000 0464656d6f"), unhex(t,
		"00000000 25000000 00000000 00401e18240a0600 00000000 0000000000000000 0000000000000000 0464656d6f"))
	c.exchange(unhex(t, "0a000000 c8000000 0204 6e6f7065"), unhex(t, "00000000 00000000")) // GetStream "nope": empty OK
	c.exchange(unhex(t, "0a000000 cb000000 0204 6e6f7065"), unhex(t, "f1030000 00000000")) // DeleteStream "nope": 1009
	c.exchange(unhex(t, "0a000000 c8000000 0104 07000000"), unhex(t, "00000000 00000000")) // GetStream 7: empty OK
	c.exchange(unhex(t, "09000000 ca000000 0464656d6f"), unhex(t, "f4030000 00000000"))    // name in use: 1012
}

func TestSpecVectorsSendAndPoll(t *testing.T) {
	srv := startPinned(t, 1_700_000_000_123_456)
	if _, err := srv.CreateStream("demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateTopic("demo", "events", 1); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, srv.Addr())
	c.exchange(unhex(t, loginIggyIggy), unhex(t, "00000000 04000000 00000000"))

	// §8.4 with PartitionId(0), no headers, and the id of §8.5 instead of zero,
	// so the stored message must come back exactly as §8.5 shows it.
	send := unhex(t, "73000000 65000000 16000000 010400000000 010400000000 0204 00000000 01000000"+
		"00000000 45000000 0000000000000000"+
		"0000000000000000 6f1c2a3b4c5d4e7f8a9bacbdcedfe0f1 0000000000000000 0000000000000000"+
		"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f")
	c.exchange(send, unhex(t, "00000000 00000000"))

	poll := unhex(t, "2a000000 64000000 01 0104 01000000 010400000000 010400000000 01 00000000 05 0000000000000000 0a000000 01")
	c.exchange(poll, unhex(t, "00000000 55000000 00000000 0000000000000000 01000000"+
		"f9c40db80c4ba572 6f1c2a3b4c5d4e7f8a9bacbdcedfe0f1 0000000000000000 402220 18240a0600"+
		"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f"))
	// Auto-commit stored offset 0, so the next "next" poll is empty: current offset 0, no messages.
	c.exchange(poll, unhex(t, "00000000 10000000 00000000 0000000000000000 00000000"))

	// §8.6 StoreConsumerOffset(consumer 1, offset 7) on a partition whose last offset is 0: 4100.
	c.exchange(unhex(t, "24000000 79000000 01 0104 01000000 010400000000 010400000000 01 00000000 0700000000000000"),
		unhex(t, "04100000 00000000"))
}
