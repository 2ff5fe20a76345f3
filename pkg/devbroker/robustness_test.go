package devbroker

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// Malformed and hostile frames: the broker answers with an error status or
// closes that one connection, and every other connection carries on.

func frame(code wire08.Command, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))
	b = binary.LittleEndian.AppendUint32(b, uint32(code))
	return append(b, payload...)
}

var pingFrame = frame(wire08.CmdPing, nil)

// expectClosed checks the server closed the connection, after any pending replies.
func (r *rawClient) expectClosed() {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	for {
		_, err := r.conn.Read(buf)
		if errors.Is(err, io.EOF) {
			return
		}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			r.t.Fatal("the server kept the connection open")
		}
		if err != nil {
			return // reset by peer is a close too
		}
	}
}

func TestMalformedFramesGetAnErrorAndTheConnectionStaysInSync(t *testing.T) {
	srv := startPinned(t, 1)
	tests := []struct {
		name       string
		request    []byte
		wantStatus iggywire.Status
	}{
		{"unknown command", frame(9999, []byte("junk")), iggywire.StatusInvalidCommand},
		{"length below 4", []byte{2, 0, 0, 0, 1, 0, 0, 0}, iggywire.StatusInvalidCommand},
		{"truncated login", frame(wire08.CmdLoginUser, []byte{4, 'i', 'g'}), iggywire.StatusInvalidCommand},
		{"username too short", frame(wire08.CmdLoginUser, []byte{2, 'a', 'b', 4, 'p', 'a', 's', 's'}), iggywire.StatusInvalidUsername},
		{"command before login", frame(wire08.CmdGetStreams, nil), iggywire.StatusUnauthenticated},
		{"send before login, payload drained", frame(wire08.CmdSendMessages, make([]byte, 300)), iggywire.StatusUnauthenticated},
		{"numeric id of 3 bytes", frame(wire08.CmdGetStream, []byte{1, 3, 0, 0, 0}), iggywire.StatusInvalidFormat},
		{"empty string id", frame(wire08.CmdGetStream, []byte{2, 0}), iggywire.StatusInvalidFormat},
		{"unknown id kind", frame(wire08.CmdGetStream, []byte{9, 1, 'x'}), iggywire.StatusInvalidFormat},
		{"empty stream name", frame(wire08.CmdCreateStream, []byte{0}), iggywire.StatusInvalidFormat},
		{"name longer than the payload", frame(wire08.CmdCreateStream, []byte{200, 'a'}), iggywire.StatusInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			c.write(tc.request)
			if status, payload := c.reply(); iggywire.Status(status) != tc.wantStatus || len(payload) != 0 {
				t.Fatalf("reply = status %d with %d payload bytes, want status %d and none", status, len(payload), tc.wantStatus)
			}
			c.write(pingFrame) // the next frame is read from the right place
			if status, _ := c.reply(); status != 0 {
				t.Fatalf("ping after the bad frame = status %d, want 0", status)
			}
		})
	}
}

func TestMalformedCommandsAfterLogin(t *testing.T) {
	srv := startPinned(t, 1)
	if _, err := srv.CreateStream("demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateTopic("demo", "events", 1); err != nil {
		t.Fatal(err)
	}
	ids := []byte{1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0} // stream 0, topic 0
	tests := []struct {
		name       string
		request    []byte
		wantStatus iggywire.Status
	}{
		{"poll with consumer kind 7", frame(wire08.CmdPollMessages, append(append([]byte{7, 1, 4, 1, 0, 0, 0}, ids...), 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1)), iggywire.StatusInvalidCommand},
		{"poll with strategy 9", frame(wire08.CmdPollMessages, append(append([]byte{1, 1, 4, 1, 0, 0, 0}, ids...), 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1)), iggywire.StatusInvalidCommand},
		{"send with zero messages", frame(wire08.CmdSendMessages, append(append([]byte{18, 0, 0, 0}, ids...), 1, 0, 0, 0, 0, 0)), iggywire.StatusInvalidMessagesCount},
		{"send balanced with a key", frame(wire08.CmdSendMessages, append(append([]byte{19, 0, 0, 0}, ids...), 1, 1, 'k', 1, 0, 0, 0)), iggywire.StatusInvalidCommand},
		{"send claiming more messages than it holds", frame(wire08.CmdSendMessages, append(append([]byte{18, 0, 0, 0}, ids...), 1, 0, 255, 255, 255, 255)), iggywire.StatusInvalidIndexesByteSize},
		{"create topic with compression 0", frame(wire08.CmdCreateTopic, append([]byte{1, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0}, append(make([]byte, 17), 1, 't')...)), iggywire.StatusInvalidCommand},
		{"create 1001 partitions", frame(wire08.CmdCreatePartitions, append(append([]byte{}, ids...), 0xe9, 3, 0, 0)), iggywire.StatusTooManyPartitions},
		{"poll a missing partition", frame(wire08.CmdPollMessages, append(append([]byte{1, 1, 4, 1, 0, 0, 0}, ids...), 1, 5, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1)), iggywire.StatusPartitionNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			c.exchange(unhex(t, loginIggyIggy), unhex(t, "00000000 04000000 00000000"))
			c.write(tc.request)
			if status, payload := c.reply(); iggywire.Status(status) != tc.wantStatus || len(payload) != 0 {
				t.Fatalf("reply = status %d with %d payload bytes, want status %d and none", status, len(payload), tc.wantStatus)
			}
			c.write(pingFrame)
			if status, _ := c.reply(); status != 0 {
				t.Fatalf("ping after the bad command = status %d, want 0", status)
			}
		})
	}
}

func TestHostileConnectionsDoNotDisturbOthers(t *testing.T) {
	srv := startPinned(t, 1)
	bystander := dialRaw(t, srv.Addr())
	bystander.exchange(unhex(t, loginIggyIggy), unhex(t, "00000000 04000000 00000000"))

	t.Run("frame above the size limit is refused and the connection closed", func(t *testing.T) {
		c := dialRaw(t, srv.Addr())
		c.write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 11<<20), uint32(wire08.CmdGetStreams)))
		if status, _ := c.reply(); iggywire.Status(status) != iggywire.StatusInvalidCommand {
			t.Fatalf("status %d, want 3", status)
		}
		c.expectClosed()
	})
	t.Run("lying length then disconnect", func(t *testing.T) {
		c := dialRaw(t, srv.Addr())
		c.write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 900<<20), uint32(wire08.CmdSendMessages)))
		c.write(make([]byte, 10))
		_ = c.conn.Close()
	})
	t.Run("disconnect in the middle of a header", func(t *testing.T) {
		c := dialRaw(t, srv.Addr())
		c.write([]byte{9, 0})
		_ = c.conn.Close()
	})
	t.Run("disconnect without reading replies", func(t *testing.T) {
		c := dialRaw(t, srv.Addr())
		for range 100 {
			c.write(pingFrame)
		}
		_ = c.conn.Close()
	})

	bystander.write(frame(wire08.CmdGetStreams, nil))
	if status, _ := bystander.reply(); status != 0 {
		t.Fatalf("the other connection got status %d after its neighbours misbehaved, want 0", status)
	}
}

func TestStopSaysDisconnected(t *testing.T) {
	srv := startPinned(t, 1)
	c := dialRaw(t, srv.Addr())
	c.write(pingFrame)
	c.reply()
	srv.Stop()
	if status, _ := c.reply(); iggywire.Status(status) != iggywire.StatusDisconnected {
		t.Fatalf("idle connection got status %d at stop, want 8", status)
	}
	c.expectClosed()
}
