package v08

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"

	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

func mustIdentifier[T uint32 | string](t testing.TB, v T) iggcon.Identifier {
	t.Helper()
	id, err := iggcon.NewIdentifier(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The request bytes of iggy-protocol.md §8.4.
func TestAppendSendRequestVectors(t *testing.T) {
	stream, topic := mustIdentifier(t, uint32(0)), mustIdentifier(t, uint32(0))
	hello := []api.OutMessage{{Payload: []byte("hello"), Headers: []api.HeaderEntry{{KeyKind: api.KindString, Key: []byte("k"), Kind: api.KindString, Value: []byte("v")}}}}
	const origin = 1_700_000_000_000_000
	for _, c := range []struct {
		name string
		p    iggcon.Partitioning
		msgs []api.OutMessage
		want string
	}{
		{"balanced, one message with a header", iggcon.None(), hello,
			"7b000000 65000000 12000000 010400000000 010400000000 0100 01000000" +
				"00000000 51000000 0000000000000000" +
				"0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000" +
				"00401e18240a0600 0c000000 05000000 0000000000000000 68656c6c6f 02010000006b 020100000076"},
		{"partition 0, no headers", iggcon.PartitionId(0), []api.OutMessage{{Payload: []byte("hello")}},
			"73000000 65000000 16000000 010400000000 010400000000 020400000000 01000000" +
				"00000000 45000000 0000000000000000" +
				"0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000" +
				"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := hex.DecodeString(strings.ReplaceAll(c.want, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendSendRequest([]byte("kept"), stream, topic, c.p, c.msgs, origin)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:4], []byte("kept")) || !bytes.Equal(got[4:], want) {
				t.Fatalf("request\n%x\nwant\n%x", got[4:], want)
			}
		})
	}
}

// A bad message is refused before anything is written, as the SDK path refuses it, and the
// buffer is left as it was.
func TestAppendSendRequestRefusesWhatTheSDKPathRefuses(t *testing.T) {
	stream, topic := mustIdentifier(t, "s"), mustIdentifier(t, "t")
	for _, msgs := range [][]api.OutMessage{
		{{Payload: []byte("ok")}, {}},
		{{Payload: make([]byte, api.MaxPayloadSize+1)}},
		{{Payload: []byte("x"), Headers: []api.HeaderEntry{{Key: []byte("k"), Kind: api.KindInt64, Value: []byte{1}}}}},
		{{Payload: []byte("x"), Headers: []api.HeaderEntry{{Key: nil, Kind: api.KindString, Value: []byte("v")}}}},
	} {
		_, sdkErr := sdkMessages(nil, msgs, 1)
		got, err := appendSendRequest([]byte("kept"), stream, topic, iggcon.None(), msgs, 1)
		if err == nil || sdkErr == nil || err.Error() != sdkErr.Error() || !errors.Is(err, api.ErrInvalidMessage) {
			t.Fatalf("error %v, the SDK path's %v", err, sdkErr)
		}
		if string(got) != "kept" {
			t.Fatalf("buffer %q after a refusal, want it unchanged", got)
		}
	}
}

// recordingServer accepts one connection and answers every request with an empty OK, keeping
// the request bytes.
func recordingServer(t *testing.T) (addr string, requests <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	out := make(chan []byte, 64)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			var head [4]byte
			if _, err := io.ReadFull(conn, head[:]); err != nil {
				return
			}
			req := make([]byte, 4+binary.LittleEndian.Uint32(head[:]))
			copy(req, head[:])
			if _, err := io.ReadFull(conn, req[4:]); err != nil {
				return
			}
			out <- req
			if _, err := conn.Write(make([]byte, 8)); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String(), out
}

// recordingSDK is an SDK client connected to a recordingServer.
func recordingSDK(t *testing.T) (*tcp.IggyTcpClient, <-chan []byte) {
	t.Helper()
	addr, requests := recordingServer(t)
	sdk, err := tcp.NewIggyTcpClient(tcp.WithServerAddress(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Close() })
	return sdk, requests
}

// randomBatch is a batch with every shape the runner sends: ids zero or set, payloads of 1 byte
// to a few KiB, none to several headers of every wire kind.
func randomBatch(rng *rand.Rand) []api.OutMessage {
	msgs := make([]api.OutMessage, 1+rng.IntN(40))
	for i := range msgs {
		m := &msgs[i]
		if rng.IntN(2) == 0 {
			for j := range m.ID {
				m.ID[j] = byte(rng.UintN(256))
			}
		}
		m.Payload = make([]byte, 1+rng.IntN(3000))
		for j := range m.Payload {
			m.Payload[j] = byte(rng.UintN(256))
		}
		for range rng.IntN(4) {
			kind := api.KindRaw + uint8(rng.IntN(int(api.KindFloat64-api.KindRaw+1)))
			n := api.FixedHeaderSize(kind)
			if n == 0 {
				n = 1 + rng.IntN(40)
			}
			m.Headers = append(m.Headers, api.HeaderEntry{Key: []byte{'k', byte('a' + rng.IntN(26))}, Kind: kind, Value: bytes.Repeat([]byte{byte(rng.UintN(256))}, n)})
		}
	}
	return msgs
}

// sendDirect's request is byte for byte what the SDK's SendMessages writes for the same batch,
// for every identifier and partitioning kind.
func TestSendRequestMatchesTheSDKBytes(t *testing.T) {
	sdk, requests := recordingSDK(t)
	key, err := iggcon.EntityIdString("order-7")
	if err != nil {
		t.Fatal(err)
	}
	ids := []iggcon.Identifier{mustIdentifier(t, uint32(0)), mustIdentifier(t, uint32(4_000_000_000)), mustIdentifier(t, "a"), mustIdentifier(t, strings.Repeat("n", 255))}
	parts := []iggcon.Partitioning{iggcon.None(), iggcon.PartitionId(3), key}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 60 {
		stream, topic, p := ids[round%len(ids)], ids[(round/2)%len(ids)], parts[round%len(parts)]
		msgs := randomBatch(rng)
		now := rng.Uint64()
		batch, err := sdkMessages(nil, msgs, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := sdk.SendMessages(stream, topic, p, batch); err != nil {
			t.Fatal(err)
		}
		want := <-requests
		got, err := appendSendRequest(nil, stream, topic, p, msgs, now)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: request differs from the SDK's at byte %d of %d/%d", round, firstDifference(got, want), len(got), len(want))
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// sendDirect writes on the SDK's socket under its request lock; both are reached by reflection,
// so this fails if a newer SDK moves them (the client would then fall back to the SDK's send).
// A freshly made SDK client (compression unset) takes the direct path.
func TestSendDirectFindsTheSDKSocketAndLock(t *testing.T) {
	sdk, _ := recordingSDK(t)
	if _, _, ok := directConn(sdk); !ok {
		t.Fatal("the SDK's conn or mtx field is gone: sendDirect and pollInto cannot share its connection")
	}
	sdk.MessageCompression = iggcon.MESSAGE_COMPRESSION_S2
	if _, _, ok := directConn(sdk); ok {
		t.Fatal("sendDirect would send uncompressed payloads for an SDK set to compress them")
	}
}

func BenchmarkAppendSendRequest1000x100B(b *testing.B) {
	msgs := make([]api.OutMessage, 1000)
	for i := range msgs {
		msgs[i].Payload = bytes.Repeat([]byte{'x'}, 100)
	}
	stream, topic := mustIdentifier(b, "bench"), mustIdentifier(b, "source")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendSendRequest(buf[:0], stream, topic, iggcon.None(), msgs, 1); err != nil {
			b.Fatal(err)
		}
	}
}
