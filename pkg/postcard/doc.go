// Package postcard encodes and decodes the postcard 1.x byte layouts that
// cross the connector plugin C ABI (docs/plugin-abi.md §2): topic and message
// metadata, raw messages for sinks, produced messages from sources, header
// maps and connector state. Plugins built upstream with iggy_connector_sdk
// read and write these bytes, so they must match postcard 1.1.3 exactly.
//
// Encoders (Append*) append to a caller's buffer, emit minimal varints and
// write header maps in BTreeMap order; with enough capacity they do not
// allocate. Decoders (Decode*) read one value from the start of the input,
// ignore trailing bytes, accept what postcard accepts (non-minimal varints,
// unpadded base64) and reject the rest with an error wrapping ErrMalformed
// that names the field and byte offset. They never panic and size every
// allocation by the input's length, so plugin bytes cannot exhaust memory.
// Decoded byte slices alias the input.
package postcard
