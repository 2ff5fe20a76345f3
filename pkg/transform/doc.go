// Package transform implements the connector transforms of docs/pipeline.md §4:
// the field transforms (add_fields, delete_fields, filter_fields,
// update_fields, unwrap_envelope) and the format conversions (proto_convert,
// flat_buffer_convert, avro_convert; the *_convert.go files, on top of the
// codecs in pkg/codec). Build turns a connector's decoded [transforms] table into
// a list that runs in config-file order (docs/architecture.md, decision 2); Run applies it to one
// message and tells a dropped message (keep=false) apart from a failed one
// (an error), so callers count them separately (docs/architecture.md, decision 3). A transform that
// panics on a message fails that message (pkg/panicerr), like any other error.
//
// TextTransform (text.go) is the optional second form of a transform that
// edits canonical JSON text directly with the same result as Apply on the
// decoded value; add_fields has it, so a sink can skip the JSON round trip.
//
// The field transforms touch only the top-level keys of a JSON object
// payload; any other payload (text, raw, JSON arrays and scalars) passes
// through unchanged.
//
// The convert transforms require every key upstream requires. Unlike
// upstream, a schema file that is missing or does not parse fails Build
// (upstream logs it and then fails or mangles every message), proto_convert
// encodes real protobuf binary by the schema and reports JSON that does not
// fit it as an error, and proto -> json also reads what the proto stream
// decoder produces ({"type_url", "value"}), unwrapping StringValue,
// BytesValue and messages of the configured type.
//
// Differences from upstream, by design: numeric filters (greater_than,
// less_than, between, and equals on numbers) compare integers and floats by
// exact value, where upstream's greater_than never matches an integer and
// equals never matches an integer against a float; regex patterns use Go's
// RE2 syntax, whose \d, \w, \s and \b are ASCII-only where Rust's regex is
// Unicode-aware.
package transform
