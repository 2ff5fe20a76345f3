// Package httpguard is the access policy in front of both HTTP servers of the project, the
// supervisor's REST API and a runner's endpoint (docs/architecture.md, decision 20), so both answer alike:
//
//   - The API key (http.api_key) in the api-key header or as Authorization: Bearer, as pkg/apikey
//     checks it; /, /health and /ready are always open, and the metrics route too with
//     http.metrics.public.
//   - Without a key, a listener that can be reached from other machines (Exposed) refuses every
//     route but /, /health, /ready, /stats, /sinks, /sources and the metrics route with 401 and a
//     message naming the key to set, unless http.allow_unauthenticated opts out. The data routes
//     (a connector's config, offsets, the live tap and its logs: GET .../tap, .../logs, a runner's
//     /tap, /logs and /config) are among the refused: they show messages and secrets' neighbours,
//     so they need the key whenever the control routes do.
//   - Browsers: a state-changing request whose Origin http.cors does not allow is refused (403),
//     unless it is the server's own origin (the Origin's host and port are the request's Host: the
//     console's page), and without a key a Host that is not an IP address, a loopback name, the
//     listener's name or in http.allowed_hosts is refused (421), so DNS rebinding cannot read the
//     API either. http.cors.allowed_origins = ["*"] turns the Origin check off: it is warned about
//     at start, and refused (New fails) on a listener beyond loopback without a key.
//   - The console (ConsolePath, with [http.ui] enabled): its page and assets are open like /, since
//     they hold no data; without a configured key the Host rule applies to them too.
//
// Files: guard.go (the policy and its handler), hosts.go (listen addresses and Host names).
package httpguard
