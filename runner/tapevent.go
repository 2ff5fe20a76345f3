package runner

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// A message at a point of the pipeline, as a pkg/tap.Sample. The live tap (tap.go, with its own
// copy of the bytes) and the dry run (dryrun.go) both build their samples here and render them
// with tap.Sample.Event, so a tap's delivered and sent events and a dry run of the same messages
// and config are equal byte for byte.

// deliveredSample is a record as the sink plugin receives it (tap.PointDelivered), from a
// sinkBatch: its place (the topic entry and the polled partition), its fields after transforms,
// its headers as the plugin gets them (postcard order) and its payload in schema's encoding
// (sinkBatch.schemas: a proto or avro decoder gives json). It aliases the batch's memory.
func deliveredSample(t *sinkTopic, partition uint32, rec *postcard.RawMessage, schema postcard.Schema) tap.Sample {
	return tap.Sample{Point: tap.PointDelivered, Stream: t.Stream, Topic: t.Topic, Partition: partition,
		Offset: rec.Offset, ID: rec.ID, Timestamp: rec.Timestamp, Schema: schema, Payload: rec.Payload,
		HeaderBytes: rec.Headers}
}

// sentSample is a message as it goes to one stream entry of a source (tap.PointSent): its payload
// in the entry's encoding and its headers in the order they are sent. The partition and offset are
// Iggy's to choose (0 here), and so is the timestamp; an id of 0 is given one by the client. It
// aliases the message's memory.
func sentSample(s *sourceStream, out *iggyclient.OutMessage) tap.Sample {
	smp := tap.Sample{Point: tap.PointSent, Stream: s.Stream, Topic: s.Topic, ID: idFromBytes(out.ID),
		Schema: s.Encoder.Schema(), Payload: out.Payload}
	if len(out.Headers) > 0 {
		smp.Headers = headersToPostcard(out.Headers)
	}
	return smp
}

// masker is what the tap masks in JSON payloads: [http] secret_keys, nothing with
// reveal_secrets (nil, so no payload is parsed for it).
func (s Settings) masker() tap.Masker {
	keys := s.Runtime.HTTP.Secrets()
	if len(keys) == 0 {
		return nil
	}
	return keys
}
