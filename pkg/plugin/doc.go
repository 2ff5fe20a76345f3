// Package plugin hosts connector plugins: shared libraries with the C ABI of
// upstream's iggy_connector_sdk, loaded with purego (no cgo).
//
// It dlopens each library (at a path pkg/pluginpath resolved and allowed)
// once, checks every required symbol up front, and wraps
// the library in a typed handle: Sink (open, consume, close, version) or Source
// (open with optional state, the v2 poll loop with its send callback and
// ACK/NACK answers, or the older ABI without acknowledgements).
//
// Both host callbacks exist once per process and are shared by every library:
// the log callback forwards plugin log lines to the logger set with SetLogger
// (a line below every level the logger enables is dropped before anything is
// copied; at most SetLogLimit lines a second, loglimit.go; the rest dropped and
// counted), and the send callback routes a source's batches to the deliver function its
// Start registered, by instance id. Instance ids must therefore be unique in
// the process and never reused: take them from NextInstanceID.
//
// A call into a plugin cannot be cancelled. The *Context variants stop waiting
// when their context ends and leave the call running on its own goroutine; the
// instance id must then be treated as lost (never called again).
//
// The C example plugins and the ABI header for C authors live in cplugins/. Like
// upstream's SDK, their helper (plugin_util.h) filters log lines in the plugin by
// RUST_LOG as the process environment holds it at the library's first open.
package plugin
