package runner

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// httpSettings is the runner's endpoint configuration (the runtime file's [http] section).
type httpSettings struct {
	Enabled         bool
	Address         string // host:port, or unix:/path/to.sock
	APIKey          string
	TLSEnabled      bool
	TLSCertFile     string
	TLSKeyFile      string
	MetricsEndpoint string // always served: a runner is scraped on its own
	Limits          config.HTTPLimits
	// Access is the whole [http] section the access policy reads (pkg/httpguard).
	Access config.HTTP
}

// endpoint serves /, /health, /stats, /config, the metrics path, POST /pause, POST /resume,
// GET /tap and GET /logs for this one connector.
type endpoint struct {
	srv      *http.Server
	ln       net.Listener
	addr     string
	unixPath string
}

// listen binds the endpoint (before the connector starts, so a bad address fails fast).
func listen(cfg httpSettings) (net.Listener, string, error) {
	if path, ok := strings.CutPrefix(cfg.Address, "unix:"); ok {
		if path == "" {
			return nil, "", fmt.Errorf("http address %q: empty unix socket path", cfg.Address)
		}
		// A socket left by a killed runner would make bind fail; only a socket file is removed.
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(path)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", fmt.Errorf("http address %q: %w", cfg.Address, err)
		}
		return ln, path, nil
	}
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, "", fmt.Errorf("http address %q: %w", cfg.Address, err)
	}
	return ln, "", nil
}

func startEndpoint(cfg httpSettings, r *Runner, gatherer prometheus.Gatherer, log *slog.Logger) (*endpoint, error) {
	access := cfg.Access
	access.Address, access.APIKey, access.Metrics.Endpoint = cfg.Address, cfg.APIKey, cfg.MetricsEndpoint
	guard, err := httpguard.New(access)
	if err != nil {
		return nil, err
	}
	ln, unixPath, err := listen(cfg)
	if err != nil {
		return nil, err
	}
	srv := httplimit.NewServer(nil, cfg.Limits, slog.NewLogLogger(log.Handler(), slog.LevelDebug))
	ln = httplimit.Listener(srv, ln, cfg.Limits)
	if cfg.TLSEnabled {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("http tls (cert %q, key %q): %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	for _, warning := range guard.StartupWarnings() {
		log.Warn("http endpoint: "+warning, "address", cfg.Address)
	}
	metricsPath := cfg.MetricsEndpoint
	if metricsPath == "" {
		metricsPath = "/metrics"
	}
	if !strings.HasPrefix(metricsPath, "/") || metricsPath == "/" || metricsPath == "/health" || metricsPath == "/stats" || metricsPath == readyPath || metricsPath == configPath ||
		metricsPath == tapPath || metricsPath == logsPath {
		ln.Close()
		return nil, fmt.Errorf("http metrics endpoint %q: must start with / and not clash with /, /health, /ready, /stats, /config, /tap or /logs", metricsPath)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Connector Runtime API"))
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, r.Health())
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, r.Stats())
	})
	mux.Handle("GET "+metricsPath, metrics.Handler(gatherer, log))
	mux.HandleFunc("GET "+readyPath, func(w http.ResponseWriter, _ *http.Request) { serveReady(w, r) })
	secrets := cfg.Access.Secrets()
	mux.HandleFunc("GET "+configPath, func(w http.ResponseWriter, _ *http.Request) { r.handleConfig(w, secrets) })
	mux.HandleFunc("POST /pause", r.handlePause)
	mux.HandleFunc("POST /resume", r.handleResume)
	r.runtimeChangeRoutes(mux)                    // GET/PUT /log_level, /rate_limit (ratelimit.go)
	mux.HandleFunc("GET "+tapPath, r.handleTap)   // tap.go
	mux.HandleFunc("GET "+logsPath, r.handleLogs) // logs.go

	// As upstream: / and /health are open, and /ready with them: probes carry no key. Only PUT
	// /log_level and /rate_limit read a body; any other is answered without it (413 at once when
	// declared too large).
	srv.Handler = guard.Wrap(httplimit.Requests(mux, httplimit.Policy{Limits: cfg.Limits, Log: log}))
	e := &endpoint{
		srv:      srv,
		ln:       ln,
		addr:     ln.Addr().String(),
		unixPath: unixPath,
	}
	go func() {
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http endpoint stopped", "error", err)
		}
	}()
	log.Info("http endpoint listening", "address", cfg.Address, "bound", e.addr)
	return e, nil
}

// readyPath is the readiness route: 200 only while the connector is active and running.
const readyPath = "/ready"

// serveReady answers GET (and HEAD) /ready: 200 with the health body when Ready, else 503 with it,
// so a probe's log shows why.
func serveReady(w http.ResponseWriter, r *Runner) {
	body, _ := json.Marshal(r.Health())
	w.Header().Set("Content-Type", "application/json")
	if !r.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(body)
}

func (e *endpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	if e.unixPath != "" {
		_ = os.Remove(e.unixPath)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
