// Package httplimit bounds what one client can hold of an HTTP server: read, write and idle
// timeouts, a request body limit and a cap on concurrent connections, from the runtime file's
// [http] keys (config.HTTPLimits). Both the supervisor's REST API and a runner's endpoint use it.
//
// Files: server.go (the http.Server timeouts and the per-handler write budget), body.go (the body
// limit and its 413 answer), listener.go (the connection cap).
package httplimit
