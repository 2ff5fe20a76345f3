// Package codec converts message payloads between bytes and the connector
// payload model, per stream schema (docs/pipeline.md §3): decoders for the sink
// path (Iggy bytes → Payload), encoders for the source path (Payload → Iggy
// bytes), and the payload bytes exchanged with plugins (PayloadToFFI,
// PayloadFromFFI), for all six schemas:
//
//	json, raw, text  codec.go
//	proto            proto.go: google.protobuf.Any with StringValue/BytesValue
//	                 wrappers on streams; ProtoSchema for .proto message types
//	                 (proto_maps.go checks map entries protobuf-go panics on)
//	flat_buffer      flatbuffer.go: schemaless buffers (root string, byte
//	                 vector, or vector of key/value strings for objects)
//	avro             avro.go: one bare datum of the avro_schema_json or
//	                 avro_schema_path schema; AvroSchema for the transforms;
//	                 avro_plan.go compiles the schema for the direct paths,
//	                 avro_text.go (datum → JSON text, the sink) and
//	                 avro_fromtext.go (canonical JSON text → datum, the source)
//
// ProtoSchema and AvroSchema are also what the *_convert transforms use.
//
// Payload bytes are untrusted: the decoders and encoders NewDecoder and
// NewEncoder return (guard.go), PayloadFromFFI, AppendPayloadToFFI and the
// schemas' DecodeJSON and EncodeJSON return a panic as an error wrapping
// panicerr.ErrPanic, so one bad message cannot stop the connector.
//
// PassThrough and CanonicalJSON (json_canonical.go) tell a sink when payload
// bytes are already exactly what decoding and encoding would give, so it can
// hand them on without either; a JSONTextDecoder (the proto and avro stream
// decoders) writes its payload's JSON text without building the value model,
// and a JSONTextEncoder (the proto and avro stream encoders) encodes canonical
// JSON text without parsing it (a JSONEncoder, avro's, checks the text itself),
// both byte for byte what the value model would give (avro_direct_test.go and
// its fuzz targets compare them);
// CanonicalObjectWithout serves transforms that edit canonical JSON text.
//
// # JSON value model
//
// A JSON payload (Payload.JSON) holds one of:
//
//	nil          null
//	bool         true, false
//	string       a string (always valid UTF-8)
//	int64        a negative integer (computed timestamps are int64 too, as upstream's I64)
//	uint64       a non-negative integer
//	float64      a number written with a fraction or an exponent
//	[]any        an array
//	*OrderedMap  an object, keeping key insertion order
//
// This mirrors upstream's parser, which keeps I64, U64 and F64 apart (filters
// and the proto encoders depend on it). Objects always preserve insertion
// order (upstream does only up to 32 keys); replacing a key keeps its
// position. Encoding writes compact JSON byte-compatible with upstream: no
// HTML escaping, integral floats keep ".0". See ParseJSON and AppendJSON for
// the exact rules; JSONFromGo converts values decoded from TOML or JSON
// config into this model.
//
// Parsed strings never alias the input. Byte payloads (raw, flat_buffer,
// avro) do alias the bytes they were decoded from; callers that reuse the
// input buffer must copy first. Decoders and encoders are safe for
// concurrent use.
package codec
