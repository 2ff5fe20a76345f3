package runner

import (
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// The pkg/tap.Event of a message at a point of the pipeline. The live tap and the dry run
// (dryrun.go) render through these, so a tap's delivered and sent events and a dry run of the
// same messages and config are equal byte for byte.

// deliveredEvent is a record as the sink plugin receives it (tap.PointDelivered), from a
// sinkBatch: its place (the topic entry and the polled partition), its fields after transforms,
// its headers as the plugin gets them (postcard order) and its payload in schema's encoding
// (sinkBatch.schemas: a proto or avro decoder gives json).
func deliveredEvent(t *sinkTopic, partition uint32, rec *postcard.RawMessage, schema postcard.Schema, secrets tap.Masker) tap.Event {
	e := tap.Event{
		Point: tap.PointDelivered, Stream: t.Stream, Topic: t.Topic, Partition: partition,
		Offset: rec.Offset, ID: tap.ID(rec.ID), Timestamp: rec.Timestamp,
	}
	var hs postcard.HeaderMap
	if len(rec.Headers) > 0 {
		// The batch encoded these bytes itself: they decode.
		hs, _ = postcard.DecodeHeaderMap(rec.Headers)
	}
	e.SetHeaders(hs)
	e.SetPayload(schema, rec.Payload, secrets)
	return e
}

// sentEvent is a message as it goes to one stream entry of a source (tap.PointSent): its payload
// in the entry's encoding and its headers in the order they are sent. The partition and offset are
// Iggy's to choose (0 here), and so is the timestamp; an id of 0 is given one by the client.
func sentEvent(s *sourceStream, out *iggyclient.OutMessage, secrets tap.Masker) tap.Event {
	e := tap.Event{Point: tap.PointSent, Stream: s.Stream, Topic: s.Topic, ID: tap.IDBytes(out.ID)}
	var hs postcard.HeaderMap
	if len(out.Headers) > 0 {
		hs = appendHeadersToPostcard(make(postcard.HeaderMap, 0, len(out.Headers)), out.Headers)
	}
	e.SetHeaders(hs)
	e.SetPayload(s.Encoder.Schema(), out.Payload, secrets)
	return e
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
