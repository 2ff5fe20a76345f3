package engine

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// PollIterator is a protocol's walk over the messages of a poll reply (wire08.PollIterator,
// wire09.PollIterator).
type PollIterator interface {
	Prefix() iggywire.PollPrefix
	Next(m *iggywire.PolledMessage) bool
	Err() error
}

// DecodePoll turns the messages it yields into a batch whose messages are appended to msgs and
// whose parsed user headers are appended to headers; payloads and header bytes alias the reply.
// m is the caller's scratch message. Nothing is allocated once msgs and headers have grown to the
// reply's size (it and m live in the connection, so an interface holding it costs nothing). A
// message whose user headers do not parse keeps none (upstream passes it on),
// with a debug line. A reply whose layout is wrong is the iterator's error.
func DecodePoll(it PollIterator, m *iggywire.PolledMessage, msgs []api.InMessage, headers []api.HeaderEntry, log func(string, ...any)) (api.Batch, []api.InMessage, []api.HeaderEntry, error) {
	p := it.Prefix()
	b := api.Batch{PartitionID: p.PartitionID, CurrentOffset: p.CurrentOffset}
	start := len(msgs)
	for it.Next(m) {
		msgs = append(msgs, api.InMessage{})
		out := &msgs[len(msgs)-1]
		out.ID, out.Offset, out.Checksum, out.Timestamp, out.OriginTimestamp = m.ID, m.Offset, m.Checksum, m.Timestamp, m.OriginTimestamp
		out.Payload = m.Payload[:len(m.Payload):len(m.Payload)]
		if len(m.Headers) == 0 {
			continue
		}
		from := len(headers)
		parsed, err := api.ParseUserHeaders(headers, m.Headers)
		if err != nil {
			log("dropping unparsable user headers", "offset", m.Offset, "error", err)
			continue
		}
		// An append that moved headers leaves earlier messages on the old array, which nobody
		// writes again: their entries stay valid.
		headers = parsed
		out.Headers = headers[from:len(headers):len(headers)]
	}
	*m = iggywire.PolledMessage{} // no reference to the reply is kept
	if err := it.Err(); err != nil {
		return api.Batch{}, msgs[:start], headers, err
	}
	if len(msgs) > start {
		b.Messages = msgs[start:len(msgs):len(msgs)]
	}
	return b, msgs, headers, nil
}

// Owned is the poll reply a batch may keep: the reply itself when the caller hands its buffers
// back (PollRequest.Reuse), else a copy, since the connection reuses its read buffer.
func Owned(reply []byte, buf *api.PollBuffers) []byte {
	if buf != nil {
		return reply
	}
	return append([]byte(nil), reply...)
}

// IntoBatch decodes the messages it yields: into buf's memory when given (nothing allocated per
// message), else into memory the batch owns. A reply that does not decode breaks the link.
func IntoBatch(l *Link, it PollIterator, m *iggywire.PolledMessage, buf *api.PollBuffers, log func(string, ...any)) (api.Batch, error) {
	var msgs []api.InMessage
	var headers []api.HeaderEntry
	if buf != nil {
		msgs, headers = buf.Msgs[:0], buf.Headers[:0]
	}
	b, msgs, headers, err := DecodePoll(it, m, msgs, headers, log)
	if buf != nil {
		buf.Msgs, buf.Headers = msgs, headers
	}
	if err != nil {
		return api.Batch{}, l.Malformed("poll reply: %v", err)
	}
	return b, nil
}

// Partitions reads a topic reply (the topic record, then its partitions' records) with the
// protocol's decoders: found is false for an empty reply, and a reply that does not decode breaks
// the link.
func Partitions[T, P any](l *Link, reply []byte, topic func([]byte) (T, []byte, error), partition func([]byte) (P, []byte, error),
	info func(P) api.PartitionInfo) (parts []api.PartitionInfo, found bool, err error) {
	if len(reply) == 0 {
		return nil, false, nil
	}
	_, rest, err := topic(reply)
	for err == nil && len(rest) > 0 {
		var p P
		if p, rest, err = partition(rest); err == nil {
			parts = append(parts, info(p))
		}
	}
	if err != nil {
		return nil, false, l.Malformed("topic reply: %v", err)
	}
	return parts, true, nil
}
