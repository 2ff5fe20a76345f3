// Package api defines the interface every Iggy protocol implementation provides to the
// connector pumps (Client) and to operator tools (Admin), with the types, options, limits and
// sentinel errors they share. Package iggyclient names them again for callers and chooses the
// implementation; v08 and v09 implement them.
//
// Files: api.go (Client and its types), admin.go (Admin), options.go (Options: defaults,
// validation, TLS, protocol names), pollbuffers.go (memory reused across polls), headers.go
// (user headers, the same TLV in 0.8 and 0.9), lifetime.go (a client's life until Close: how calls
// stop and wait, the same in every implementation), identifier.go (stream and topic strings: id
// or name).
package api
