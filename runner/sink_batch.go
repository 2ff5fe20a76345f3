package runner

import (
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// sinkBatch turns polled messages into the records handed to the sink plugin: decode, transforms,
// encode (pipeline.md §1.4). Its buffers are reused from batch to batch, so a steady stream costs
// no allocation per message on the pass-through path.
//
// Pass-through: with no transforms, a payload that codec.PassThrough proves the decoder and the
// encoder would give back unchanged is handed on as it is, skipping both. The plugin receives the
// same bytes either way (FuzzSinkBatchPassThrough compares the two paths).
type sinkBatch struct {
	decoder     codec.Decoder
	transforms  []transform.Transform
	passThrough bool // no transforms: try codec.PassThrough on each payload

	records  []postcard.RawMessage
	hdrBuf   []byte // every record's postcard header map, back to back
	hdrSpans []hdrSpan
	hdrMap   postcard.HeaderMap // scratch for one message's headers
	fields   []messageFields    // backing store of each message's optional fields
	msgs     []codec.Message    // what transforms see, one per message
	kinds    []decodedKind      // what the decode pass made of each message
}

type decodedKind uint8

const (
	decodedPayload decodedKind = iota // msgs[i] holds the decoded message
	passedThrough                     // handed on as polled
	failedToDecode                    // dropped
)

type hdrSpan struct{ from, to int }

// messageFields holds the values a codec.Message points at, so a batch needs no allocation per
// message for them.
type messageFields struct {
	id                           postcard.Uint128
	offset, sum, ts, originStamp uint64
}

func newSinkBatch(decoder codec.Decoder, transforms []transform.Transform, capacity uint32) *sinkBatch {
	return &sinkBatch{
		decoder: decoder, transforms: transforms, passThrough: len(transforms) == 0,
		records: make([]postcard.RawMessage, 0, capacity),
	}
}

// dropFunc reports a message the batch leaves out because a stage failed on it.
type dropFunc func(stage string, offset uint64, err error)

// prepare fills b.records from the polled messages, in their order, and returns the time spent
// decoding (the pass-through check counts as decoding) and how many messages transforms filtered
// out. Messages a stage fails on go to drop and are left out. The clock is read once per batch.
func (b *sinkBatch) prepare(msgs []iggyclient.InMessage, drop dropFunc) (decodeDur time.Duration, filtered int) {
	b.records, b.hdrBuf, b.hdrSpans = b.records[:0], b.hdrBuf[:0], b.hdrSpans[:0]
	if cap(b.fields) < len(msgs) {
		b.fields = make([]messageFields, len(msgs))
		b.msgs = make([]codec.Message, len(msgs))
		b.kinds = make([]decodedKind, len(msgs))
	}
	fields, decoded, kinds := b.fields[:len(msgs)], b.msgs[:len(msgs)], b.kinds[:len(msgs)]

	// Decode every message first, timed as one stage.
	start := time.Now()
	schema := b.decoder.Schema()
	for i := range msgs {
		in := &msgs[i]
		if b.passThrough && codec.PassThrough(schema, in.Payload) {
			kinds[i] = passedThrough
			continue
		}
		payload, err := b.decoder.Decode(in.Payload)
		if err != nil {
			drop("decode", in.Offset, err)
			kinds[i] = failedToDecode
			continue
		}
		kinds[i] = decodedPayload
		decoded[i] = inMessageToCodec(in, payload, &fields[i])
	}
	decodeDur = time.Since(start)

	for i := range msgs {
		in := &msgs[i]
		switch kinds[i] {
		case failedToDecode:
			continue
		case passedThrough:
			b.appendPassedThrough(in)
			continue
		}
		msg := &decoded[i]
		keep, err := transform.Run(b.transforms, msg)
		if err != nil {
			drop("transform", in.Offset, err) // decision 3: a transform failure counts once, as an error
			continue
		}
		if !keep {
			filtered++
			continue
		}
		if msg.ID == nil || msg.Offset == nil || msg.Checksum == nil || msg.Timestamp == nil || msg.OriginTimestamp == nil {
			drop("transform", in.Offset, errMissingMessageField)
			continue
		}
		ffiPayload, err := codec.PayloadToFFI(msg.Payload)
		if err != nil {
			drop("encode", in.Offset, err)
			continue
		}
		b.appendTransformed(msg, ffiPayload)
	}
	clear(decoded) // drop references to payloads until the next batch overwrites them
	// Header bytes were appended into one growing buffer; slice them only now that it stopped moving.
	for i := range b.records {
		if s := b.hdrSpans[i]; s.to > s.from {
			b.records[i].Headers = b.hdrBuf[s.from:s.to]
		}
	}
	return decodeDur, filtered
}

// appendPassedThrough appends a message handed on unchanged: its fields, headers and payload as
// polled (the payload aliases the poll reply, which the batch owns).
func (b *sinkBatch) appendPassedThrough(in *iggyclient.InMessage) {
	from := len(b.hdrBuf)
	if len(in.Headers) > 0 {
		b.hdrMap = appendHeadersToPostcard(b.hdrMap[:0], in.Headers)
		b.hdrBuf = postcard.AppendHeaderMap(b.hdrBuf, b.hdrMap)
	}
	b.hdrSpans = append(b.hdrSpans, hdrSpan{from, len(b.hdrBuf)})
	b.records = append(b.records, postcard.RawMessage{
		ID: idFromBytes(in.ID), Offset: in.Offset, Checksum: in.Checksum,
		Timestamp: in.Timestamp, OriginTimestamp: in.OriginTimestamp,
		Payload: in.Payload,
	})
}

// appendTransformed appends a message as transforms left it.
func (b *sinkBatch) appendTransformed(msg *codec.Message, payload []byte) {
	from := len(b.hdrBuf)
	if msg.HasHeaders && len(msg.Headers) > 0 {
		b.hdrBuf = postcard.AppendHeaderMap(b.hdrBuf, msg.Headers)
	}
	b.hdrSpans = append(b.hdrSpans, hdrSpan{from, len(b.hdrBuf)})
	b.records = append(b.records, postcard.RawMessage{
		ID: *msg.ID, Offset: *msg.Offset, Checksum: *msg.Checksum,
		Timestamp: *msg.Timestamp, OriginTimestamp: *msg.OriginTimestamp,
		Payload: payload,
	})
}
