package runner

import (
	"runtime"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// sinkBatch turns polled messages into the records handed to the sink plugin: decode, transforms,
// encode (docs/pipeline.md §1.4). Its buffers are reused from batch to batch, so a steady stream costs
// no allocation per message on the pass-through path.
//
// Pass-through: with no transforms, a payload that codec.PassThrough proves the decoder and the
// encoder would give back unchanged is handed on as it is, skipping both; a decoder that writes
// JSON text directly (codec.JSONTextDecoder: proto, avro) does so, skipping the value model.
// Text transforms: on a json stream, or one whose decoder writes JSON text, whose transforms are
// all transform.TextTransforms, they edit the payload text directly when they can prove the
// result equal, skipping the JSON round trip. The plugin receives the same bytes either way
// (FuzzSinkBatchPassThrough compares the paths).
type sinkBatch struct {
	decoder     codec.Decoder
	transforms  []transform.Transform
	passThrough bool                      // no transforms: try codec.PassThrough on each payload
	textDecoder codec.JSONTextDecoder     // the decoder writes JSON text directly (proto, avro)
	text        []transform.TextTransform // json stream, every transform has a text form: try them first
	textScratch [2][]byte                 // intermediate texts of a chain of text transforms

	records      []postcard.RawMessage
	schemas      []postcard.Schema // per record: the encoding of its payload (json after a proto or avro decoder)
	hdrBuf       []byte            // every record's postcard header map, back to back
	hdrSpans     []hdrSpan
	payloadBuf   []byte // payloads the batch wrote (encoded or edited), back to back
	payloadSpans []payloadSpan
	hdrMap       postcard.HeaderMap // scratch for one message's headers
	fields       []messageFields    // backing store of each message's optional fields
	msgs         []codec.Message    // what transforms see, one per message
	kinds        []decodedKind      // what the decode pass made of each message
	textSpans    []hdrSpan          // per message: its text's range (decodedText: payloadBuf; textCandidate with a textDecoder: decodedBuf)
	decodedBuf   []byte             // texts from the textDecoder that the text transforms still edit
	passes       []bool             // per message: codec.PassThrough's answer (checkPassThrough)
	checking     sync.WaitGroup     // the goroutine checking a batch's second half
}

type decodedKind uint8

const (
	decodedPayload decodedKind = iota // msgs[i] holds the decoded message
	passedThrough                     // handed on as polled
	failedToDecode                    // dropped
	textCandidate                     // not decoded yet: the text transforms try it first
	decodedText                       // decoded straight to its JSON text in payloadBuf (textSpans)
	encodedText                       // source: encoded straight from its JSON text (sourceBatch.spans)
)

type hdrSpan struct{ from, to int }

// payloadSpan says that record rec's payload is payloadBuf[from:to].
type payloadSpan struct{ rec, from, to int }

// messageFields holds the values a codec.Message points at, so a batch needs no allocation per
// message for them.
type messageFields struct {
	id                           postcard.Uint128
	offset, sum, ts, originStamp uint64
}

func newSinkBatch(decoder codec.Decoder, transforms []transform.Transform, capacity uint32) *sinkBatch {
	b := &sinkBatch{
		decoder: decoder, transforms: transforms, passThrough: len(transforms) == 0,
		records: make([]postcard.RawMessage, 0, capacity),
		// Not nil: AppendPayloadToFFI treats a nil dst as "allocate or alias".
		payloadBuf: make([]byte, 0, 1024),
	}
	td, isTextDecoder := decoder.(codec.JSONTextDecoder)
	if isTextDecoder {
		b.textDecoder = td
	}
	if decoder.Schema() == postcard.SchemaJSON || isTextDecoder {
		b.text = transform.TextTransforms(transforms)
	}
	return b
}

// dropFunc reports a message the batch leaves out because a stage failed on it.
type dropFunc func(stage string, offset uint64, err error)

// prepare fills b.records (and b.schemas) from the polled messages, in their order, and returns
// the time spent decoding (the pass-through check counts as decoding) and how many messages
// transforms filtered out. Messages a stage fails on go to drop and are left out. The clock is read once per batch.
func (b *sinkBatch) prepare(msgs []iggyclient.InMessage, drop dropFunc) (decodeDur time.Duration, filtered int) {
	b.records, b.schemas, b.hdrBuf, b.hdrSpans = b.records[:0], b.schemas[:0], b.hdrBuf[:0], b.hdrSpans[:0]
	b.payloadBuf, b.payloadSpans, b.decodedBuf = b.payloadBuf[:0], b.payloadSpans[:0], b.decodedBuf[:0]
	if cap(b.fields) < len(msgs) {
		b.fields = make([]messageFields, len(msgs))
		b.msgs = make([]codec.Message, len(msgs))
		b.kinds = make([]decodedKind, len(msgs))
		b.textSpans = make([]hdrSpan, len(msgs))
	}
	fields, decoded, kinds := b.fields[:len(msgs)], b.msgs[:len(msgs)], b.kinds[:len(msgs)]

	// Decode every message first, timed as one stage.
	start := time.Now()
	schema := b.decoder.Schema()
	var passes []bool
	if b.passThrough && len(msgs) >= splitCheckMin && runtime.GOMAXPROCS(0) > 1 { // one core: no one to share with
		passes = b.checkPassThrough(schema, msgs)
	}
	for i := range msgs {
		in := &msgs[i]
		switch {
		case passes != nil && passes[i], passes == nil && b.passThrough && codec.PassThrough(schema, in.Payload):
			kinds[i] = passedThrough
		case b.text != nil && b.textDecoder == nil:
			kinds[i] = textCandidate // a json stream: the payload is the text
		case b.text != nil && b.decodeText(&b.decodedBuf, i, in.Payload):
			kinds[i] = textCandidate
		case len(b.transforms) == 0 && b.decodeText(&b.payloadBuf, i, in.Payload):
			kinds[i] = decodedText
		default:
			kinds[i] = b.decode(in, &decoded[i], &fields[i], drop)
		}
	}
	decodeDur = time.Since(start)

	for i := range msgs {
		in := &msgs[i]
		switch kinds[i] {
		case failedToDecode:
			continue
		case passedThrough:
			b.appendPassedThrough(in, in.Payload, schema)
			continue
		case decodedText:
			s := b.textSpans[i]
			b.payloadSpans = append(b.payloadSpans, payloadSpan{len(b.records), s.from, s.to})
			b.appendPassedThrough(in, nil, postcard.SchemaJSON)
			continue
		case textCandidate:
			src := in.Payload
			if b.textDecoder != nil {
				src = b.decodedBuf[b.textSpans[i].from:b.textSpans[i].to]
			}
			if b.applyText(in, src) {
				continue
			}
			// The decoded path, for what the text forms cannot prove (counted as preparing).
			if b.decode(in, &decoded[i], &fields[i], drop) == failedToDecode {
				continue
			}
		}
		msg := &decoded[i]
		keep, err := transform.Run(b.transforms, msg)
		if err != nil {
			drop("transform", in.Offset, err) // docs/architecture.md, decision 3: a transform failure counts once, as an error
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
		if k := msg.Payload.Kind; k == postcard.SchemaRaw || k == postcard.SchemaFlatBuffer || k == postcard.SchemaAvro {
			b.appendTransformed(msg, msg.Payload.Bytes) // handed on as they are, not copied
			continue
		}
		from := len(b.payloadBuf)
		encoded, err := codec.AppendPayloadToFFI(b.payloadBuf, msg.Payload)
		if err != nil {
			drop("encode", in.Offset, err)
			continue
		}
		b.payloadBuf = encoded
		b.payloadSpans = append(b.payloadSpans, payloadSpan{len(b.records), from, len(b.payloadBuf)})
		b.appendTransformed(msg, nil)
	}
	clear(decoded) // drop references to payloads until the next batch overwrites them
	// Header and payload bytes were appended into growing buffers; slice them only now that they
	// stopped moving.
	for i := range b.records {
		if s := b.hdrSpans[i]; s.to > s.from {
			b.records[i].Headers = b.hdrBuf[s.from:s.to]
		}
	}
	for _, s := range b.payloadSpans {
		b.records[s.rec].Payload = b.payloadBuf[s.from:s.to:s.to]
	}
	return decodeDur, filtered
}

// splitCheckMin is the smallest batch whose pass-through check is split over two goroutines.
const splitCheckMin = 128

// checkPassThrough answers codec.PassThrough for every message, the second half on a goroutine
// of its own. The check (for json, CanonicalJSON) is most of a pass-through sink's own work per
// message, and while the plugin waits for it the runner's I/O goroutine mostly waits on Iggy, so
// the other core is there to take half (docs/benchmarks.md §1.7). The answers are the same
// either way: the check is a pure function of each payload.
func (b *sinkBatch) checkPassThrough(schema postcard.Schema, msgs []iggyclient.InMessage) []bool {
	if cap(b.passes) < len(msgs) {
		b.passes = make([]bool, len(msgs))
	}
	passes := b.passes[:len(msgs)]
	half := len(msgs) / 2
	b.checking.Add(1)
	go func() {
		defer b.checking.Done()
		for i := half; i < len(msgs); i++ {
			passes[i] = codec.PassThrough(schema, msgs[i].Payload)
		}
	}()
	for i := range half {
		passes[i] = codec.PassThrough(schema, msgs[i].Payload)
	}
	b.checking.Wait()
	return passes
}

// decodeText decodes message i's payload straight to JSON text at the end of *buf (payloadBuf
// for the plugin, or decodedBuf for the text transforms) and notes its range in textSpans.
func (b *sinkBatch) decodeText(buf *[]byte, i int, payload []byte) bool {
	if b.textDecoder == nil {
		return false
	}
	from := len(*buf)
	out, ok := b.textDecoder.AppendJSONText(*buf, payload)
	if ok {
		*buf = out
		b.textSpans[i] = hdrSpan{from, len(out)}
	}
	return ok
}

// decode decodes one message into msg, or drops it.
func (b *sinkBatch) decode(in *iggyclient.InMessage, msg *codec.Message, f *messageFields, drop dropFunc) decodedKind {
	payload, err := b.decoder.Decode(in.Payload)
	if err != nil {
		drop("decode", in.Offset, err)
		return failedToDecode
	}
	*msg = inMessageToCodec(in, payload, f)
	return decodedPayload
}

// applyText runs the chain of text transforms over the payload's JSON text and appends the record;
// false when one of them cannot prove its edit (nothing was appended then).
func (b *sinkBatch) applyText(in *iggyclient.InMessage, text []byte) bool {
	for j, t := range b.text {
		if j == len(b.text)-1 {
			from := len(b.payloadBuf)
			out, ok := t.ApplyJSONText(b.payloadBuf, text)
			if !ok {
				return false
			}
			b.payloadBuf = out
			b.payloadSpans = append(b.payloadSpans, payloadSpan{len(b.records), from, len(out)})
			b.appendPassedThrough(in, nil, postcard.SchemaJSON)
			return true
		}
		scratch := &b.textScratch[j%2]
		out, ok := t.ApplyJSONText((*scratch)[:0], text)
		if !ok {
			return false
		}
		*scratch, text = out, out
	}
	return false // no text transforms: not a text candidate
}

// appendPassedThrough appends a message with its fields and headers as polled and the given
// payload in schema's encoding (a polled payload aliases the poll reply, which the batch owns; nil
// when a payloadSpan fills it in later).
func (b *sinkBatch) appendPassedThrough(in *iggyclient.InMessage, payload []byte, schema postcard.Schema) {
	from := len(b.hdrBuf)
	if len(in.Headers) > 0 {
		b.hdrMap = appendHeadersToPostcard(b.hdrMap[:0], in.Headers)
		b.hdrBuf = postcard.AppendHeaderMap(b.hdrBuf, b.hdrMap)
	}
	b.hdrSpans = append(b.hdrSpans, hdrSpan{from, len(b.hdrBuf)})
	b.schemas = append(b.schemas, schema)
	b.records = append(b.records, postcard.RawMessage{
		ID: idFromBytes(in.ID), Offset: in.Offset, Checksum: in.Checksum,
		Timestamp: in.Timestamp, OriginTimestamp: in.OriginTimestamp,
		Payload: payload,
	})
}

// appendTransformed appends a message as transforms left it.
func (b *sinkBatch) appendTransformed(msg *codec.Message, payload []byte) {
	from := len(b.hdrBuf)
	if msg.HasHeaders && len(msg.Headers) > 0 {
		b.hdrBuf = postcard.AppendHeaderMap(b.hdrBuf, msg.Headers)
	}
	b.hdrSpans = append(b.hdrSpans, hdrSpan{from, len(b.hdrBuf)})
	b.schemas = append(b.schemas, msg.Payload.Kind)
	b.records = append(b.records, postcard.RawMessage{
		ID: *msg.ID, Offset: *msg.Offset, Checksum: *msg.Checksum,
		Timestamp: *msg.Timestamp, OriginTimestamp: *msg.OriginTimestamp,
		Payload: payload,
	})
}
