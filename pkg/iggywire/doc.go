// Package iggywire is what the two Iggy wire protocols (0.8: pkg/wire08, 0.9: pkg/wire09) share
// byte for byte, so each is written once: the error codes with their names (one table for both
// protocols), the kinds of user headers and options, the primitive fields of requests
// (identifier, consumer, partitioning, optional partition, polling strategy), the body reader
// both codecs decode with, and XXH32.
//
// It is pure encoding and decoding. Encoders append to a caller's buffer and return it; decoded
// byte slices alias the input. A decode failure is an *Error carrying the Status a server answers
// with; which status a short body or a bad enum byte gets is the codec's choice (Reader), since
// 0.8 answers InvalidCommand where 0.9 answers InvalidFormat.
//
// Files and their jobs:
//
//	status.go      Status: every error code either protocol uses, its name; *Error
//	kinds.go       the kinds of user-header and option values, and their sizes
//	primitives.go  identifier, consumer, partitioning, optional partition, polling strategy
//	reader.go      Reader: a body decoded front to back, the first failure sticking
//	xxh32.go       XXH32 (seed 0): message-key partitioning, named consumers' offset keys
package iggywire
