// Package httplimit bounds what one client can hold of an HTTP server: read, write and idle
// timeouts, a request body limit and caps on concurrent connections, in all and per client address,
// that close idle keep-alive connections first (so probes always get through), from the runtime
// file's [http] keys (config.HTTPLimits). Both the supervisor's REST API and a runner's endpoint use it.
//
// Files: server.go (the http.Server timeouts and the per-handler write budget), body.go (the body
// limit and its 413 answer), listener.go (the connection caps).
package httplimit
