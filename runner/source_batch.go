package runner

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// sourceBatch turns one batch a source plugin produced into the messages sent to each stream
// entry: decode with the schema the plugin declared, transforms once, encode for each entry's
// schema (docs/pipeline.md §2.4). Its buffers are reused from batch to batch.
//
// Pass-through: with no transforms, when every stream entry's encoder writes back what the
// decoder read (passThroughPairs), a payload that codec.PassThrough accepts is sent as the plugin
// produced it, skipping decode and encode; a stream encoding json from its text
// (codec.JSONTextEncoder: proto, avro) encodes it from the payload's bytes into a buffer the
// batch reuses (the clients copy payloads into their request before Send returns), falling back
// to decode and encode for a payload the text encoder cannot prove; one avro stream entry
// (codec.JSONEncoder) checks the payloads itself, sparing the canonical check. Iggy receives the
// same bytes either way (FuzzSourceBatchPassThrough compares the two paths).
type sourceBatch struct {
	transforms  []transform.Transform
	streams     []sourceStream
	passThrough bool // no transforms: try the pass-through for schemas that allow it

	decoded  []codec.Message
	position []int                     // decoded[k] is message position[k] of the batch
	kinds    []decodedKind             // pass-through: what the check made of each message
	spans    []hdrSpan                 // pass-through: where encodedText put each message in encoded
	payloads []codec.Payload           // pass-through: the decoded payloads of refused messages
	headers  []iggyclient.HeaderEntry  // every message's headers for every stream, back to back
	outs     [][]iggyclient.OutMessage // per stream entry

	encoded      []byte        // payloads the text encoders wrote, back to back
	encodedSpans []encodedSpan // where each of them went
}

// encodedSpan says that outs[stream][msg]'s payload is encoded[from:to].
type encodedSpan struct{ stream, msg, from, to int }

// sourceBatchResult is what prepare found. A batch with errors must be rejected unsent.
type sourceBatchResult struct {
	decodeErrs, errs, filtered int
	firstErr                   error // the first message's failure, named in the rejection warning
	decode, prepare            time.Duration
}

// passThroughPairs are the (plugin schema, stream encoder schema) pairs whose encoder gives back
// the bytes codec.PassThrough accepted: json parsed and written compactly by the json or text
// encoder (both write AppendJSON), raw bytes as they are, text as its UTF-8 bytes.
var passThroughPairs = map[[2]postcard.Schema]bool{
	{postcard.SchemaJSON, postcard.SchemaJSON}: true,
	{postcard.SchemaJSON, postcard.SchemaText}: true,
	{postcard.SchemaRaw, postcard.SchemaRaw}:   true,
	{postcard.SchemaText, postcard.SchemaText}: true,
}

func newSourceBatch(transforms []transform.Transform, streams []sourceStream) *sourceBatch {
	return &sourceBatch{transforms: transforms, streams: streams, passThrough: len(transforms) == 0,
		outs: make([][]iggyclient.OutMessage, len(streams))}
}

// passesThrough reports whether payloads of this plugin schema may skip decode and encode: every
// stream entry either writes back what the check accepted, or (for json) encodes canonical JSON
// from its text (codec.JSONTextEncoder: proto's Any of a StringValue, an Avro datum).
func (b *sourceBatch) passesThrough(schema postcard.Schema) bool {
	if !b.passThrough {
		return false
	}
	for _, s := range b.streams {
		if !passThroughPairs[[2]postcard.Schema{schema, s.Encoder.Schema()}] && textEncoder(schema, s) == nil {
			return false
		}
	}
	return true
}

// textEncoder is the stream entry's encoder when it encodes json payloads from their canonical
// text rather than writing that text back as it is; nil otherwise.
func textEncoder(schema postcard.Schema, s sourceStream) codec.JSONTextEncoder {
	if schema != postcard.SchemaJSON || passThroughPairs[[2]postcard.Schema{schema, s.Encoder.Schema()}] {
		return nil
	}
	t, _ := s.Encoder.(codec.JSONTextEncoder)
	return t
}

// prepare fills b.outs from pm. Each failure goes to debug (already naming the message) and
// counts; the clock is read three times per batch.
func (b *sourceBatch) prepare(pm *postcard.ProducedMessages, debug func(msg string, err error)) sourceBatchResult {
	var res sourceBatchResult
	note := func(counter *int, err error) {
		*counter++
		res.firstErr = cmp.Or(res.firstErr, err)
	}
	msgs := pm.Messages
	for si := range b.outs {
		clear(b.outs[si]) // drop the previous batch's payloads
		b.outs[si] = b.outs[si][:0]
	}
	b.headers = b.headers[:0]
	b.encoded, b.encodedSpans = b.encoded[:0], b.encodedSpans[:0]
	if n := headerCount(msgs) * len(b.streams); cap(b.headers) < n {
		b.headers = make([]iggyclient.HeaderEntry, 0, n) // room for all: the batch appends without moving it
	}
	start := time.Now()
	if b.passesThrough(pm.Schema) {
		b.prepareAsProduced(pm.Schema, msgs, debug, note, &res)
		res.decode = time.Since(start)
		return res
	}

	// Decode with the schema the plugin declared, as the SDK's Schema::try_into_payload does
	// (docs/pipeline.md §3.4): not the sink decoders (avro and flat_buffer stay bytes, proto falls back).
	decoded, position := b.decoded[:0], b.position[:0]
	for i := range msgs {
		pl, err := codec.PayloadFromFFI(pm.Schema, msgs[i].Payload)
		if err != nil {
			err = fmt.Errorf("message %d: decode as %s: %w", i, pm.Schema, err)
			note(&res.decodeErrs, err)
			debug("produced message cannot be decoded", err)
			continue
		}
		decoded = append(decoded, producedToCodec(&msgs[i], pl))
		position = append(position, i)
	}
	t1 := time.Now()
	res.decode = t1.Sub(start)

	// Transforms once, then encode for each stream entry's schema.
	kept := decoded[:0]
	for i := range decoded {
		keep, err := transform.Run(b.transforms, &decoded[i])
		if err != nil {
			note(&res.errs, fmt.Errorf("message %d: %w", position[i], err))
			debug("produced message failed a transform", res.firstErr)
			continue
		}
		if !keep {
			res.filtered++
			continue
		}
		kept = append(kept, decoded[i])
		position[len(kept)-1] = position[i] // in place: len(kept)-1 <= i
	}
	for si, s := range b.streams {
		outs := b.outs[si]
		for i := range kept {
			m := &kept[i]
			payload, err := encodePayload(s.Encoder, m.Payload)
			if err == nil {
				var out iggyclient.OutMessage
				if out, err = b.outMessage(m.ID, m.HasHeaders, m.Headers, payload); err == nil {
					outs = append(outs, out)
					continue
				}
			}
			err = fmt.Errorf("message %d: stream %q topic %q: %w", position[i], s.Stream, s.Topic, err)
			note(&res.errs, err)
			debug("message build failed", err)
		}
		b.outs[si] = outs
	}
	clear(decoded) // drop references to payloads until the next batch overwrites them
	b.decoded, b.position = decoded, position
	res.prepare = time.Since(t1)
	return res
}

// directEncoder is the one stream entry's encoder when it encodes a json plugin's payloads
// checking them itself (codec.JSONEncoder: avro), so that the batch may skip the canonical check;
// nil otherwise.
func (b *sourceBatch) directEncoder(schema postcard.Schema) codec.JSONEncoder {
	if len(b.streams) != 1 || schema != postcard.SchemaJSON {
		return nil
	}
	j, _ := b.streams[0].Encoder.(codec.JSONEncoder)
	return j
}

// prepareAsProduced builds every stream's messages from the payloads as produced; a single stream
// entry whose encoder checks JSON itself (directEncoder) encodes each payload first, before any
// check. A payload the check refuses takes the slow path on its own: decode (which may fail,
// rejecting the batch) and encode. Failures are noted in the slow path's order: decode failures
// first, then each stream's.
func (b *sourceBatch) prepareAsProduced(schema postcard.Schema, msgs []postcard.ProducedMessage, debug func(string, error),
	note func(*int, error), res *sourceBatchResult) {
	if cap(b.kinds) < len(msgs) {
		b.kinds = make([]decodedKind, len(msgs))
		b.payloads = make([]codec.Payload, len(msgs))
		b.spans = make([]hdrSpan, len(msgs))
	}
	kinds, payloads, spans := b.kinds[:len(msgs)], b.payloads[:len(msgs)], b.spans[:len(msgs)]
	direct := b.directEncoder(schema)
	for i := range msgs {
		if direct != nil {
			from := len(b.encoded)
			if out, ok := direct.AppendEncodedJSON(b.encoded, msgs[i].Payload); ok {
				b.encoded, kinds[i], spans[i] = out, encodedText, hdrSpan{from, len(out)}
				continue
			}
		}
		if codec.PassThrough(schema, msgs[i].Payload) {
			kinds[i] = passedThrough
			continue
		}
		pl, err := codec.PayloadFromFFI(schema, msgs[i].Payload)
		if err != nil {
			err = fmt.Errorf("message %d: decode as %s: %w", i, schema, err)
			note(&res.decodeErrs, err)
			debug("produced message cannot be decoded", err)
			kinds[i] = failedToDecode
			continue
		}
		kinds[i], payloads[i] = decodedPayload, pl
	}
	for si, s := range b.streams {
		outs := b.outs[si]
		text := textEncoder(schema, s)
		for i := range msgs {
			pm := &msgs[i]
			payload, err := pm.Payload, error(nil)
			span := encodedSpan{stream: -1}
			switch kinds[i] {
			case failedToDecode:
				continue
			case encodedText:
				sp := spans[i]
				payload, span = b.encoded[sp.from:sp.to], encodedSpan{si, len(outs), sp.from, sp.to}
			case passedThrough:
				if text == nil {
					break
				}
				from := len(b.encoded)
				if out, ok := text.AppendEncodedJSONText(b.encoded, pm.Payload); ok {
					b.encoded, payload = out, out[from:] // re-sliced below, once the buffer stopped moving
					span = encodedSpan{si, len(outs), from, len(out)}
					break
				}
				payload, err = encodeProduced(schema, s.Encoder, pm.Payload)
			case decodedPayload:
				payload, err = encodePayload(s.Encoder, payloads[i])
			}
			if err == nil {
				var headers postcard.HeaderMap
				if pm.Headers != nil {
					headers = *pm.Headers
				}
				var out iggyclient.OutMessage
				if out, err = b.outMessage(pm.ID, pm.Headers != nil, headers, payload); err == nil {
					if span.stream >= 0 {
						b.encodedSpans = append(b.encodedSpans, span)
					}
					outs = append(outs, out)
					continue
				}
			}
			err = fmt.Errorf("message %d: stream %q topic %q: %w", i, s.Stream, s.Topic, err)
			note(&res.errs, err)
			debug("message build failed", err)
		}
		b.outs[si] = outs
	}
	for _, sp := range b.encodedSpans {
		b.outs[sp.stream][sp.msg].Payload = b.encoded[sp.from:sp.to:sp.to]
	}
	clear(payloads)
}

// encodeProduced is decode and encode for one produced payload whose direct encoding the text
// encoder could not prove: the slow path's bytes, or its error.
func encodeProduced(schema postcard.Schema, enc codec.Encoder, payload []byte) ([]byte, error) {
	pl, err := codec.PayloadFromFFI(schema, payload)
	if err != nil {
		return nil, fmt.Errorf("decode as %s: %w", schema, err)
	}
	return encodePayload(enc, pl)
}

// encodePayload encodes a decoded payload for one stream entry, naming the schema on failure.
func encodePayload(enc codec.Encoder, pl codec.Payload) ([]byte, error) {
	payload, err := enc.Encode(pl)
	if err != nil {
		return nil, fmt.Errorf("encode as %s: %w", enc.Schema(), err)
	}
	return payload, nil
}

// producedToCodec builds the message transforms see: the plugin's optional fields, no offset.
func producedToCodec(pm *postcard.ProducedMessage, pl codec.Payload) codec.Message {
	m := codec.Message{ID: pm.ID, Checksum: pm.Checksum, Timestamp: pm.Timestamp, OriginTimestamp: pm.OriginTimestamp, Payload: pl}
	if pm.Headers != nil {
		m.Headers = *pm.Headers
		m.HasHeaders = true
	}
	return m
}

// headerCount is the number of header entries of the batch.
func headerCount(msgs []postcard.ProducedMessage) int {
	n := 0
	for i := range msgs {
		if h := msgs[i].Headers; h != nil {
			n += len(*h)
		}
	}
	return n
}

// outMessage applies Iggy's limits to one message (docs/pipeline.md §2.4). The plugin's checksum and
// timestamps are dropped; the id (0 = let the client pick one) and headers pass through, the
// headers into b.headers.
func (b *sourceBatch) outMessage(id *postcard.Uint128, hasHeaders bool, headers postcard.HeaderMap, payload []byte) (iggyclient.OutMessage, error) {
	switch {
	case len(payload) == 0:
		return iggyclient.OutMessage{}, errors.New("empty payload")
	case len(payload) > maxPayloadBytes:
		return iggyclient.OutMessage{}, fmt.Errorf("payload of %d bytes exceeds %d", len(payload), maxPayloadBytes)
	}
	out := iggyclient.OutMessage{Payload: payload}
	if id != nil {
		out.ID = idToBytes(*id)
	}
	if hasHeaders && len(headers) > 0 {
		size := 0
		for _, h := range headers {
			size += 1 + 4 + len(h.Key.Value) + 1 + 4 + len(h.Value.Value)
		}
		if size > maxUserHeaderBytes {
			return iggyclient.OutMessage{}, fmt.Errorf("user headers of %d bytes exceed %d", size, maxUserHeaderBytes)
		}
		from := len(b.headers)
		b.headers = appendHeadersToIggy(b.headers, headers)
		out.Headers = b.headers[from:len(b.headers):len(b.headers)]
	}
	return out, nil
}
