package devbroker

import (
	"errors"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
)

// 0.8 handlers of sends, polls and consumer offsets.

// send08 stores one SendMessages request in the partition its partitioning picks and answers
// with an empty OK. The real server checks the login before it reads the payload.
func (c *connection) send08(payload []byte) ([]byte, iggywire.Status) {
	if !c.sess.authenticated {
		return nil, iggywire.StatusUnauthenticated
	}
	req, err := wire08.DecodeSendMessages(payload, c.ends)
	c.ends = req.Ends[:0]
	if err != nil {
		return nil, statusOf(err)
	}
	_, _, err = c.data.send(req.TopicRef, req.Partitioning, func(p *partition, now uint64) uint64 {
		return p.append(req.Messages, req.Ends, now)
	})
	return answer08(err, nil)
}

// poll08 answers the 16-byte prefix (partition, its current offset, the count) and the stored
// messages. A group member polling a partition it does not own, or owning none, gets the prefix
// (0, 0, 0) alone, as the real server answers it.
func (c *connection) poll08(payload []byte) ([]byte, iggywire.Status) {
	req, err := wire08.DecodePollMessages(payload)
	if st := c.decoded08(err); st != iggywire.StatusOK {
		return nil, st
	}
	out := append(c.polled[:0], make([]byte, iggywire.PollPrefixSize)...)
	r, out, err := c.data.poll(pollQuery{ConsumerOffsetRef: req.ConsumerOffsetRef, client: c.sess.clientID,
		strategy: req.Strategy, count: req.Count, autoCommit: req.AutoCommit, handedOver: true, read: (*partition).readLocked}, out)
	c.polled = out
	switch {
	case errors.Is(err, iggywire.StatusNotResolvedConsumer):
		return out[:iggywire.PollPrefixSize], iggywire.StatusOK // zeroed above
	case err != nil:
		return nil, statusOf(err)
	}
	iggywire.AppendPollPrefix(out[:0], iggywire.PollPrefix{PartitionID: r.partitionID, CurrentOffset: r.current, MessagesCount: uint32(r.to - r.from)})
	return out, iggywire.StatusOK
}

// offsetRequest08 decodes one of the three consumer-offset requests.
func offsetRequest08(code wire08.Command) func([]byte) (wire08.OffsetRequest, error) {
	return func(payload []byte) (wire08.OffsetRequest, error) {
		return wire08.DecodeConsumerOffsetRequest(code, payload)
	}
}

// getOffset08 answers the stored offset, or an empty OK when nothing is stored or anything does
// not resolve (the server swallows those errors). Reading needs no membership.
func (c *connection) getOffset08(payload []byte) ([]byte, iggywire.Status) {
	return request08(c, payload, offsetRequest08(wire08.CmdGetConsumerOffset), func(req wire08.OffsetRequest) ([]byte, iggywire.Status) {
		partitionID, current, stored, found, err := c.data.storedOffset(req.ConsumerOffsetRef)
		if err != nil || !found {
			return nil, iggywire.StatusOK
		}
		c.out = wire08.AppendConsumerOffset(c.out[:0], wire08.ConsumerOffset{PartitionID: partitionID, CurrentOffset: current, StoredOffset: stored})
		return c.out, iggywire.StatusOK
	})
}
