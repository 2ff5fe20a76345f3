package httplimit

import (
	"context"
	"net/http"
	"time"
)

// ProbeReserve is how many connections Listener lets in beyond http.max_connections when none can
// be closed to make room (every connection busy). A probe on one is served at once (Requests) and
// the connection closes after its answer. Any other request waits there up to newConnGrace for
// room within the cap, then is answered 503 with Retry-After. The request head must come within
// newConnGrace, and with the reserve full, a new connection closes the oldest of the reserve that
// serves no probe. A liveness or readiness probe therefore never waits behind the connections
// that fill the cap, nor behind those that fill the reserve.
const ProbeReserve = 16

// IsProbe reports whether r is a probe a server answers on any connection: GET or HEAD of /,
// /health or /ready, routes that are cheap, need no key and take no body.
func IsProbe(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/", "/health", "/ready":
		return true
	}
	return false
}

// connKey is the request-context key of the trackedConn a request came on.
type connKey struct{}

// connOf is the tracked connection r came on, nil when the server's listener is not Listener's.
func connOf(r *http.Request) *trackedConn {
	tc, _ := r.Context().Value(connKey{}).(*trackedConn)
	return tc
}

// overCap reports whether r came on a connection of the probe reserve.
func overCap(r *http.Request) bool {
	tc := connOf(r)
	return tc != nil && tc.reserve.Load()
}

// probing marks r's connection of the probe reserve as serving a probe, so it is not closed to
// make way for another.
func probing(r *http.Request) {
	if tc := connOf(r); tc != nil {
		tc.probing.Store(true)
	}
}

// admitBeyondProbe lets a request that is no probe, come on a connection of the probe reserve,
// wait up to newConnGrace for room within the cap as a new connection would (Listener); false
// when none came.
func admitBeyondProbe(r *http.Request) bool {
	tc := connOf(r)
	return tc == nil || !tc.reserve.Load() || tc.owner.promote(tc)
}

// requestDeadline is the read deadline the server set for the whole of r (http.read_timeout
// from the start of its head), so the body floor never extends it: read from the connection when
// Listener tracks it (HTTP/1), else read_timeout from now.
func requestDeadline(r *http.Request, readTimeout time.Duration) time.Time {
	if tc := connOf(r); tc != nil && r.ProtoMajor == 1 {
		return tc.lastReadDeadline()
	}
	if readTimeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(readTimeout)
}

// withConn is Listener's http.Server.ConnContext: requests know their connection.
func withConn(ctx context.Context, c *trackedConn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}
