package devbroker

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

func TestPollReplyIsBoundedBetweenBatches(t *testing.T) {
	saved := maxPollBytes
	maxPollBytes = 200
	t.Cleanup(func() { maxPollBytes = saved })

	var out bytes.Buffer
	c := newFuzzConnection(t, nil, &out) // partition 0 holds one batch of two 69-byte messages
	c.data.retainBytes = 0
	p := c.data.streams[0].topics[0].partitions[0]
	p.retainBytes = 0
	msg := unhex(t, "0000000000000000 00000000000000000000000000000000 0000000000000000 0000000000000000"+
		"00401e18240a0600 00000000 05000000 0000000000000000 68656c6c6f")
	for range 2 {
		p.append(append(msg, msg...), []uint32{69, 138}, 20)
	}
	poll := unhex(t, "01 0104 01000000 010400000000 010400000000 01 00000000 03 0000000000000000 64000000 01")
	c.reply08(c.dispatch08(wire08.CmdPollMessages, poll))
	_ = c.w.Flush()
	reply := out.Bytes()
	// Two batches (276 bytes) pass the 200-byte bound; the third is left for the next poll.
	if length, count := binary.LittleEndian.Uint32(reply[4:]), binary.LittleEndian.Uint32(reply[20:]); length != 16+276 || count != 4 {
		t.Fatalf("reply length %d with %d messages, want %d with 4", length, count, 16+276)
	}
	if stored := p.offsets[offsetKey{kind: consumerSingle, id: 1}]; stored != 3 {
		t.Fatalf("auto-commit stored offset %d, want 3 (the last message returned)", stored)
	}
}
