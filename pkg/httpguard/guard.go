package httpguard

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/apikey"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Guard is the access policy of one HTTP server, built from its [http] section by New.
type Guard struct {
	key           []byte
	address       string
	exposed       bool // reachable beyond loopback (Exposed)
	unix          bool // a Unix socket: no browser reaches it, so no Origin or Host rule applies
	allowUnauth   bool
	metricsPath   string
	metricsPublic bool
	hosts         hostNames
	anyOrigin     bool
	origins       []string
	console       bool // [http.ui] enabled: the console's page and assets are open (they hold no data)
}

// ConsolePath is where the supervisor serves its console (the page and its assets below it).
const ConsolePath = "/ui/"

// New builds the policy of a server configured by h (its address, api_key, cors, metrics and the
// access keys). A bad http.allowed_hosts entry is an error naming the key.
func New(h config.HTTP) (*Guard, error) {
	hosts, err := newHostNames(h.AllowedHosts, h.Address)
	if err != nil {
		return nil, err
	}
	metricsPath := h.Metrics.Endpoint
	if metricsPath == "" {
		metricsPath = "/metrics"
	}
	g := &Guard{
		key:           []byte(h.APIKey),
		address:       h.Address,
		exposed:       Exposed(h.Address),
		unix:          strings.HasPrefix(h.Address, "unix:"),
		allowUnauth:   h.AllowUnauthenticated,
		metricsPath:   metricsPath,
		metricsPublic: h.Metrics.Public,
		hosts:         hosts,
		console:       h.UI.Enabled,
	}
	if h.CORS.Enabled {
		for i, o := range h.CORS.AllowedOrigins {
			if o == "*" && i == 0 {
				g.anyOrigin = true
			}
			g.origins = append(g.origins, o)
		}
	}
	if g.anyOrigin && g.exposed && len(g.key) == 0 {
		// Any web page could then drive the API from the browser of anyone who reaches it,
		// whatever http.allow_unauthenticated says about clients that are no browser.
		return nil, fmt.Errorf("http.cors.allowed_origins = [\"*\"] with http.cors.enabled = true is refused on %s, beyond loopback, "+
			"without http.api_key: any web page its users open could pause, stop or reconfigure connectors from their browser; "+
			"set http.api_key (IGGY_CONNECTORS_HTTP_API_KEY), list the origins that may call it in http.cors.allowed_origins, "+
			"or listen on loopback", h.Address)
	}
	return g, nil
}

// StartupWarnings are what to log at start about this policy, none when it is safe: a listener
// beyond loopback without a key (refused or opted out), and [http.cors] letting any origin in.
func (g *Guard) StartupWarnings() []string {
	var out []string
	if len(g.key) == 0 && g.exposed {
		if g.allowUnauth {
			out = append(out, "http.allow_unauthenticated is true: anyone who reaches "+g.address+
				" can pause, stop, restart and rewind connectors and read their configs; set http.api_key instead")
		} else {
			out = append(out, "listening beyond loopback without an API key: control, config and offset routes answer 401 until "+howToSetKey)
		}
	}
	if g.anyOrigin {
		out = append(out, `http.cors.allowed_origins = ["*"] with http.cors.enabled = true: the Origin check is off, so any web page `+
			"a user of this API opens may call every route the user's browser can reach (pause, stop, config changes); "+
			"list the origins that may call it instead")
	}
	return out
}

const howToSetKey = "http.api_key (IGGY_CONNECTORS_HTTP_API_KEY) is set; clients send it in the api-key header or " +
	"as Authorization: Bearer <key>. To serve them without a key, set http.allow_unauthenticated = true " +
	"(IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED=true)"

// Wrap puts the policy in front of next. In order: /, /health and /ready pass; a state-changing
// request from a foreign browser origin is refused (403; the server's own origin, the console's,
// is not foreign); the console's page and assets pass without the key (without a configured key
// only for a Host that names this server, as below); the metrics route passes when public;
// with a key, a request without it gets upstream's 401 (empty body); without a key, a Host that does
// not name this server is refused (421), and on an exposed listener only reads that reveal no
// config pass unless the operator opted out (401 with a message).
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path == "/" || path == "/health" || path == "/ready" {
			next.ServeHTTP(w, r)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.unix && changesState(r.Method) && !g.originAllowed(origin) && !sameOrigin(origin, r.Host) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("a browser page from origin %q may not %s %s: "+
				"list the origin in http.cors.allowed_origins with http.cors.enabled = true", origin, r.Method, path))
			return
		}
		if g.console && isConsolePage(r) {
			if len(g.key) == 0 && !g.unix && !g.hosts.allows(r.Host) {
				refuse(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q does not name this server: "+
					"add it to http.allowed_hosts (IGGY_CONNECTORS_HTTP_ALLOWED_HOSTS), or use its IP address or localhost", r.Host))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if g.metricsPublic && path == g.metricsPath {
			next.ServeHTTP(w, r)
			return
		}
		if len(g.key) > 0 {
			if !apikey.Authenticated(r, g.key) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if !g.unix && !g.hosts.allows(r.Host) {
			refuse(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q does not name this server: "+
				"add it to http.allowed_hosts (IGGY_CONNECTORS_HTTP_ALLOWED_HOSTS), or use its IP address or localhost", r.Host))
			return
		}
		if g.exposed && !g.allowUnauth && !g.revealsNoConfig(r) {
			refuse(w, http.StatusUnauthorized, "this server listens on "+g.address+" beyond loopback without an API key, "+
				"so "+r.Method+" "+path+" is refused until "+howToSetKey)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isConsolePage reports whether r reads the console's page or one of its assets: static files
// that hold no data (every figure the page shows comes from the API routes, behind the key).
func isConsolePage(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path == strings.TrimSuffix(ConsolePath, "/") || strings.HasPrefix(r.URL.Path, ConsolePath)
}

// sameOrigin reports whether a browser's Origin is this server as the request addressed it (the
// console's own page): its host and port are the request's Host. A page on another origin cannot
// send that Origin unless a DNS name rebound to this server, and then the Host is that name, which
// the Host rule below refuses without a key (with a key the request needs the key anyway).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host) || strings.EqualFold(u.Host, defaultPortless(u.Scheme, host))
}

// defaultPortless drops the scheme's default port from a Host value, as browsers drop it from an
// Origin.
func defaultPortless(scheme, host string) string {
	if scheme == "http" {
		return strings.TrimSuffix(host, ":80")
	}
	return strings.TrimSuffix(host, ":443")
}

// changesState reports whether a request of method may change something: every method but the
// reads (OPTIONS being a CORS preflight or a 405).
func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// originAllowed reports whether [http.cors] lets a page of origin call this server.
func (g *Guard) originAllowed(origin string) bool {
	return g.anyOrigin || slices.Contains(g.origins, origin)
}

// revealsNoConfig reports whether r only reads the overview: counters, metrics and the connector
// lists, none of which carries a config, an offset or a secret.
func (g *Guard) revealsNoConfig(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/stats", "/sinks", "/sources", g.metricsPath:
		return true
	}
	return false
}

func refuse(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, message)
}
