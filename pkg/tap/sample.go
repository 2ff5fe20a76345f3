package tap

import (
	"bytes"
	"encoding/json"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Sample is one message as the pipeline handed it to a tap: its own copy of the bytes, not yet
// rendered. Rendering (Event, EventJSON) happens in the subscriber's goroutine, so the pipeline
// only copies.
type Sample struct {
	Point         string
	Stream, Topic string
	Partition     uint32
	Offset        uint64
	ID            postcard.Uint128
	Timestamp     uint64 // µs since the Unix epoch; 0 when not yet stamped
	Schema        postcard.Schema
	Payload       []byte
	// Headers are the user headers; when nil, HeaderBytes may hold them as an encoded postcard
	// header map (what a sink plugin receives), decoded when rendered.
	Headers     postcard.HeaderMap
	HeaderBytes []byte
	Err         string // why a message was dead-lettered
}

// bytes is what the sample holds of a buffer's byte budget.
func (s *Sample) bytes() int64 { return int64(len(s.Payload) + len(s.HeaderBytes)) }

// Event renders the sample as the tap's message event (secret fields of a JSON payload masked
// by secrets). Header bytes that do not decode render as no headers and name the problem in Error.
func (s *Sample) Event(secrets Masker) Event {
	e := Event{Point: s.Point, Stream: s.Stream, Topic: s.Topic, Partition: s.Partition, Offset: s.Offset,
		ID: ID(s.ID), Timestamp: s.Timestamp, Error: s.Err}
	hs := s.Headers
	if hs == nil && len(s.HeaderBytes) > 0 {
		var err error
		if hs, err = postcard.DecodeHeaderMap(s.HeaderBytes); err != nil && e.Error == "" {
			e.Error = "headers: " + err.Error()
		}
	}
	e.SetHeaders(hs)
	e.SetPayload(s.Schema, s.Payload, secrets)
	return e
}

// Own returns a copy of s holding its own copies of the bytes, for a sample that outlives the
// pipeline's buffers.
func (s Sample) Own() *Sample {
	s.Payload = bytes.Clone(s.Payload)
	s.HeaderBytes = bytes.Clone(s.HeaderBytes)
	s.Headers = CopyHeaders(s.Headers)
	return &s
}

// EventJSON is the JSON of s.Event(secrets) as Marshal writes it: one SSE data line.
func (s *Sample) EventJSON(secrets Masker) []byte {
	e := s.Event(secrets)
	b, err := Marshal(&e)
	if err != nil { // every member is valid JSON by construction
		b, _ = Marshal(&Event{Point: e.Point, Stream: e.Stream, Topic: e.Topic, Partition: e.Partition, Offset: e.Offset,
			ID: e.ID, Headers: []Header{}, Schema: e.Schema, Size: e.Size, Payload: json.RawMessage("null"), Error: err.Error()})
	}
	return b
}

// CopyHeaders is a deep copy of hs (nil for none), for a sample that outlives the pipeline's buffers.
func CopyHeaders(hs postcard.HeaderMap) postcard.HeaderMap {
	if len(hs) == 0 {
		return nil
	}
	size := 0
	for _, h := range hs {
		size += len(h.Key.Value) + len(h.Value.Value)
	}
	buf := make([]byte, 0, size)
	out := make(postcard.HeaderMap, len(hs))
	for i, h := range hs {
		out[i] = h
		buf = append(buf, h.Key.Value...)
		out[i].Key.Value = buf[len(buf)-len(h.Key.Value) : len(buf) : len(buf)]
		buf = append(buf, h.Value.Value...)
		out[i].Value.Value = buf[len(buf)-len(h.Value.Value) : len(buf) : len(buf)]
	}
	return out
}
