// Package transform implements the connector field transforms of
// pipeline.md §4 (add_fields, delete_fields, filter_fields, update_fields,
// unwrap_envelope). Build turns a connector's decoded [transforms] table into
// a list that runs in config-file order (decision 2); Run applies it to one
// message and tells a dropped message (keep=false) apart from a failed one
// (an error), so callers count them separately (decision 3).
//
// The field transforms touch only the top-level keys of a JSON object
// payload; any other payload (text, raw, JSON arrays and scalars) passes
// through unchanged. The *_convert transforms are recognised but refused by
// Build with ErrNotSupported until their codecs exist.
//
// Differences from upstream, by design: numeric filters (greater_than,
// less_than, between, and equals on numbers) compare integers and floats by
// exact value, where upstream's greater_than never matches an integer and
// equals never matches an integer against a float; regex patterns use Go's
// RE2 syntax, whose \d, \w, \s and \b are ASCII-only where Rust's regex is
// Unicode-aware.
package transform
