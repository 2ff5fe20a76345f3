package supervisor

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
)

// serveAPI binds the REST API and serves it in the background.
func (s *Supervisor) serveAPI() error {
	h := s.runtime.HTTP
	handler, err := s.Handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", h.Address)
	if err != nil {
		return fmt.Errorf("http.address %q: %w", h.Address, err)
	}
	s.api = httplimit.NewServer(handler, h.Limits, slog.NewLogLogger(s.log.Handler(), slog.LevelDebug))
	ln = httplimit.Listener(s.api, ln, h.Limits)
	if h.TLS.Enabled {
		cert, err := tls.LoadX509KeyPair(h.TLS.CertFile, h.TLS.KeyFile)
		if err != nil {
			ln.Close()
			return fmt.Errorf("http.tls (cert_file %q, key_file %q): %w", h.TLS.CertFile, h.TLS.KeyFile, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
			NextProtos: []string{"h2", "http/1.1"}})
	}
	for _, warning := range s.guard.StartupWarnings() {
		s.log.Warn("REST API: "+warning, "address", h.Address)
	}
	s.listener = ln
	s.apiDone = make(chan error, 1)
	go func() {
		err := s.api.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.apiDone <- err
	}()
	s.log.Info("REST API listening", "address", ln.Addr().String(), "tls", h.TLS.Enabled)
	if url := s.consoleURL(ln.Addr().String()); url != "" {
		s.log.Info("console: open "+url+" in a browser", "url", url)
	}
	return nil
}

// withBudget lets h take budget longer than http.write_timeout before its answer must be written:
// for routes that legitimately wait on runners or on the config provider.
func (s *Supervisor) withBudget(budget time.Duration, h http.HandlerFunc) http.HandlerFunc {
	writeTimeout := s.runtime.HTTP.Limits.WriteTimeout
	return func(w http.ResponseWriter, r *http.Request) {
		httplimit.ExtendWrite(w, writeTimeout, budget)
		h(w, r)
	}
}

// maxSlowBudget caps slowBudget when the provider's retry settings are extreme.
const maxSlowBudget = time.Hour

// slowBudget is the longest a config or restart route may legitimately take: every attempt of the
// HTTP config provider with its retry pauses, then draining the old runner and starting the new.
func (s *Supervisor) slowBudget() time.Duration {
	budget := s.env.DrainTimeout + s.env.StartTimeout
	c := s.runtime.Connectors
	if c.ConfigType != config.ProviderHTTP {
		return budget
	}
	attempts := uint32(1)
	if c.Retry.Enabled {
		attempts += min(c.Retry.MaxAttempts, 100)
	}
	pause := c.Retry.InitialBackoff
	for i := uint32(0); i < attempts && budget < maxSlowBudget; i++ {
		budget += c.Timeout
		if i > 0 {
			budget += min(pause, c.Retry.MaxBackoff)
			pause *= time.Duration(max(c.Retry.BackoffMultiplier, 1))
		}
	}
	return min(budget, maxSlowBudget)
}

// Handler is the whole REST API with upstream's layers: CORS (outermost, when enabled), then the
// access policy (pkg/httpguard: the API key as upstream checks it, plus the secure defaults), then
// the request rules of pkg/httplimit (the probe reserve, http.max_body_bytes, bodies never waited
// for unless read, http.min_body_rate), then the routes with empty-bodied 404 and 405 answers.
func (s *Supervisor) Handler() (http.Handler, error) {
	h := s.runtime.HTTP
	routes := s.routes
	if s.fleet != nil {
		routes = s.fleetRoutes
	}
	mux, err := routes()
	if err != nil {
		return nil, err
	}
	var handler http.Handler = frameworkAnswers(mux.ServeMux)
	handler = httplimit.Requests(handler, httplimit.Policy{Limits: h.Limits, Log: s.log})
	handler = s.guard.Wrap(handler)
	if h.CORS.Enabled {
		c, err := newCORS(h.CORS)
		if err != nil {
			return nil, err
		}
		handler = c.wrap(handler)
	}
	return handler, nil
}

// frameworkAnswers makes the mux's own 404 and 405 answers look like axum's: no body, no content
// type, and an Allow list without spaces. Paths are matched as sent, as axum matches them: Go's
// mux would redirect an unclean path (`//sinks`, `/sinks/./x`) to its cleaned form instead.
func frameworkAnswers(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		escaped := r.URL.EscapedPath()
		if strings.Contains(escaped, "//") {
			// An empty segment matches no route of axum's (its parameters are never empty).
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if raw, ok := escapeDotSegments(escaped); ok {
			// "." and ".." are plain segments to axum (a key of "." is just an unknown key);
			// escaped, the mux matches them as such instead of cleaning them away.
			r = r.Clone(r.Context())
			r.URL.RawPath = raw
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(&bodyless{ResponseWriter: w}, r)
	})
}

// escapeDotSegments percent-encodes the "." and ".." segments of an escaped path; ok is false
// when it has none.
func escapeDotSegments(escaped string) (string, bool) {
	segments := strings.Split(escaped, "/")
	changed := false
	for i, seg := range segments {
		if seg == "." || seg == ".." {
			segments[i] = strings.ReplaceAll(seg, ".", "%2E")
			changed = true
		}
	}
	return strings.Join(segments, "/"), changed
}

// bodyless drops the body of a fallback answer and tidies its headers.
type bodyless struct {
	http.ResponseWriter
	wrote bool
}

func (b *bodyless) WriteHeader(code int) {
	if b.wrote {
		return
	}
	b.wrote = true
	hdr := b.Header()
	hdr.Del("Content-Type")
	hdr.Del("X-Content-Type-Options")
	if allow := hdr.Get("Allow"); allow != "" {
		hdr.Set("Allow", strings.ReplaceAll(allow, ", ", ","))
	}
	if code == http.StatusMovedPermanently || code == http.StatusTemporaryRedirect || code == http.StatusPermanentRedirect {
		// Go's mux redirects unclean paths; axum has no such redirect: the path is simply unknown.
		hdr.Del("Location")
		code = http.StatusNotFound
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *bodyless) Write(p []byte) (int, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	return len(p), nil
}

// cors implements tower-http's CorsLayer as upstream configures it (docs/http-api.md §1.5).
type cors struct {
	anyOrigin      bool
	origins        []string
	methods        string
	headers        string
	expose         string
	credentials    bool
	privateNetwork bool
}

var corsMethods = []string{"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "PATCH", "TRACE"}

func newCORS(c config.CORS) (*cors, error) {
	out := &cors{credentials: c.AllowCredentials, privateNetwork: c.AllowPrivateNetwork}
	var methods []string
	for _, m := range c.AllowedMethods {
		if m == "" {
			continue
		}
		up := strings.ToUpper(m)
		if !slices.Contains(corsMethods, up) {
			return nil, fmt.Errorf("http.cors.allowed_methods: unknown HTTP method %q", m)
		}
		methods = append(methods, up)
	}
	out.methods = strings.Join(methods, ",")
	for i, o := range c.AllowedOrigins {
		if o == "*" {
			if i != 0 {
				return nil, fmt.Errorf("http.cors.allowed_origins: %q is only allowed as the first and only entry", o)
			}
			out.anyOrigin = true
			break
		}
		if strings.ContainsAny(o, "\r\n\x00") {
			return nil, fmt.Errorf("http.cors.allowed_origins: %q is not a valid header value", o)
		}
		out.origins = append(out.origins, o)
	}
	if out.anyOrigin && out.credentials {
		return nil, errors.New("http.cors: allow_credentials = true cannot be combined with allowed_origins = [\"*\"]")
	}
	out.headers = joinNonEmpty(c.AllowedHeaders, strings.ToLower)
	out.expose = joinNonEmpty(c.ExposedHeaders, func(s string) string { return s })
	return out, nil
}

func joinNonEmpty(list []string, norm func(string) string) string {
	var out []string
	for _, v := range list {
		if v != "" {
			out = append(out, norm(v))
		}
	}
	return strings.Join(out, ",")
}

func (c *cors) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		c.common(hdr, r)
		if r.Method == http.MethodOptions {
			if c.methods != "" {
				hdr.Set("Access-Control-Allow-Methods", c.methods)
			}
			if c.headers != "" {
				hdr.Set("Access-Control-Allow-Headers", c.headers)
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		if c.expose != "" {
			hdr.Set("Access-Control-Expose-Headers", c.expose)
		}
		next.ServeHTTP(w, r)
	})
}

// common sets the headers of both preflight and normal answers.
func (c *cors) common(hdr http.Header, r *http.Request) {
	if c.anyOrigin {
		hdr.Set("Access-Control-Allow-Origin", "*")
	} else {
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(c.origins, origin) {
			hdr.Set("Access-Control-Allow-Origin", origin)
		}
		hdr.Add("Vary", "origin")
	}
	if c.credentials {
		hdr.Set("Access-Control-Allow-Credentials", "true")
	}
	if c.privateNetwork && r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		hdr.Set("Access-Control-Allow-Private-Network", "true")
	}
}
