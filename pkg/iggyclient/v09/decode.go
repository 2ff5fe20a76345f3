package v09

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// decodePoll turns a poll reply body into a batch whose messages are appended to msgs and whose
// parsed user headers are appended to headers; payloads and header bytes alias body. Nothing is
// allocated once msgs and headers have grown to the reply's size. A message whose user headers do
// not parse keeps none (upstream passes it on). A body whose layout is wrong is an error.
func decodePoll(body []byte, msgs []api.InMessage, headers []api.HeaderEntry, log func(string, ...any)) (api.Batch, []api.InMessage, []api.HeaderEntry, error) {
	it, err := wire09.NewPollIterator(body)
	if err != nil {
		return api.Batch{}, msgs, headers, err
	}
	p := it.Prefix()
	b := api.Batch{PartitionID: p.PartitionID, CurrentOffset: p.CurrentOffset}
	start := len(msgs)
	var m iggywire.PolledMessage
	for it.Next(&m) {
		out := api.InMessage{ID: m.ID, Offset: m.Offset, Checksum: m.Checksum, Timestamp: m.Timestamp,
			OriginTimestamp: m.OriginTimestamp, Payload: m.Payload[:len(m.Payload):len(m.Payload)]}
		if len(m.Headers) > 0 {
			from := len(headers)
			parsed, err := api.ParseUserHeaders(headers, m.Headers)
			if err != nil {
				log("dropping unparsable user headers", "offset", m.Offset, "error", err)
			} else {
				// An append that moved headers leaves earlier messages on the old array, which
				// nobody writes again: their entries stay valid.
				headers = parsed
				out.Headers = headers[from:len(headers):len(headers)]
			}
		}
		msgs = append(msgs, out)
	}
	if err := it.Err(); err != nil {
		return api.Batch{}, msgs[:start], headers, err
	}
	if len(msgs) > start {
		b.Messages = msgs[start:len(msgs):len(msgs)]
	}
	return b, msgs, headers, nil
}
