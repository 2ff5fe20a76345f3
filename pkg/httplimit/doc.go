// Package httplimit bounds what one client can hold of an HTTP server: read, write and idle
// timeouts, a request body limit and a floor on how slowly a body may arrive, caps on concurrent
// connections, in all and per client address, that close idle keep-alive connections first, and a
// reserve of connections beyond the cap on which probes (/, /health, /ready) are answered at once,
// so a liveness or readiness probe never waits behind other requests. From the runtime file's
// [http] keys (config.HTTPLimits). Both the supervisor's REST API and a runner's endpoint use it.
//
// Files: server.go (the http.Server timeouts and the per-handler write budget), body.go (Requests:
// the body limit and its 413 answer, bodies never waited for unless the handler reads them, the
// http.min_body_rate floor and its 408 answer), listener.go (the connection caps and the probe
// reserve's admission), probes.go (which requests are probes, and what a request knows of its
// connection).
package httplimit
