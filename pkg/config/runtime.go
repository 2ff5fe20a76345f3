package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Runtime is the runtime configuration file (docs/config.md §1): the REST API,
// the Iggy connection, the state directory, the connector config provider,
// telemetry and logging. The zero value is not useful; start from
// DefaultRuntime or LoadRuntime.
type Runtime struct {
	HTTP       HTTP
	Iggy       Iggy
	State      State
	Connectors Connectors
	Telemetry  Telemetry
	Logging    Logging
	Plugins    Plugins
	Fleet      Fleet // [fleet]: attach mode (fleet.go)
}

// HTTP is the [http] section: the REST API of the supervisor (and the
// per-connector endpoint of a runner).
type HTTP struct {
	Enabled bool
	Address string
	APIKey  string
	CORS    CORS
	Metrics HTTPMetrics
	TLS     HTTPTLS
	UI      HTTPUI // [http.ui] (Go extension): the console page of the supervisor

	// Secret masking of plugin_config values in API answers (Go-only keys).
	SecretKeys    []string // http.secret_keys: key-name substrings; empty masks nothing
	RevealSecrets bool     // http.reveal_secrets: answer with the real values

	// Limits bound what one client can hold (Go extension keys).
	Limits HTTPLimits

	// Access policy of pkg/httpguard (Go extension keys).
	AllowUnauthenticated bool     // http.allow_unauthenticated: serve control routes beyond loopback without a key
	AllowedHosts         []string // http.allowed_hosts: Host names accepted besides IPs, loopback and the listener's

	// See inside (Go extension keys; pkg/tap, docs/see-inside.md).
	Tap            bool          // http.tap: serve the live tap routes
	TapMaxDuration time.Duration // http.tap_max_duration: a tap stream ends after this long (0: no limit)
	LogRecords     uint32        // http.log_records: log records kept per connector
	LogBytes       uint32        // http.log_bytes: bytes of log records kept per connector
}

// Secrets is what the API masks: SecretKeys, or nothing when RevealSecrets is set.
func (h HTTP) Secrets() SecretKeys {
	if h.RevealSecrets {
		return nil
	}
	return SecretKeys(h.SecretKeys)
}

// HTTPLimits are the [http] keys that bound slow or greedy clients of the REST API and of a
// runner's endpoint. A zero value switches that bound off.
type HTTPLimits struct {
	ReadTimeout    time.Duration // whole request, headers and body
	WriteTimeout   time.Duration // from the end of the headers to the end of the answer
	IdleTimeout    time.Duration // a keep-alive connection waiting for its next request
	MaxBodyBytes   uint32        // largest request body; more is answered 413
	MaxConnections uint32        // connections served at once; idle ones are closed first to make room
	// MaxConnectionsPerClient caps the connections of one client IP address.
	MaxConnectionsPerClient uint32
	// MinBodyRate is the slowest a request body may arrive, in bytes a second, after its first
	// second; a slower body is cut (pkg/httplimit).
	MinBodyRate uint32
}

// CORS is [http.cors].
type CORS struct {
	Enabled             bool
	AllowedMethods      []string
	AllowedOrigins      []string
	AllowedHeaders      []string
	ExposedHeaders      []string
	AllowCredentials    bool
	AllowPrivateNetwork bool
}

// HTTPMetrics is [http.metrics].
type HTTPMetrics struct {
	Enabled  bool
	Endpoint string
	Public   bool // http.metrics.public (Go extension): scraped without the API key
}

// HTTPUI is [http.ui] (a Go extension): the operations console the supervisor serves under /ui/.
type HTTPUI struct {
	Enabled bool
}

// HTTPTLS is [http.tls].
type HTTPTLS struct {
	Enabled  bool
	CertFile string
	KeyFile  string
}

// Iggy is the [iggy] section: where the Iggy server is and how to log in.
type Iggy struct {
	Address  string
	Username string
	Password string
	// Token is a personal access token; "file:<path>" names a file holding
	// it (see ResolveToken). When set it replaces username and password.
	Token string
	TLS   IggyTLS
	// Protocol is the wire protocol: "auto" (detect at connect), "0.8" or "0.9" (a Go extension).
	Protocol string
	// RequestTimeout bounds one request's round trip (a Go extension): a server that does not
	// answer within it fails the request, and the client reconnects.
	RequestTimeout time.Duration
}

// DefaultIggyRequestTimeout is [iggy] request_timeout when unset: both upstream SDKs wait 30 s.
const DefaultIggyRequestTimeout = 30 * time.Second

// The values of [iggy] protocol.
const (
	IggyProtocolAuto = "auto"
	IggyProtocol08   = "0.8"
	IggyProtocol09   = "0.9"
)

// IggyTLS is [iggy.tls].
type IggyTLS struct {
	Enabled bool
	CAFile  string
	Domain  string // "" means unset
}

// State is [state]: where source connectors keep their state.
type State struct {
	Path string // the directory of state files (backend "file"; with "iggy" only read to migrate)
	// Backend is StateBackendFile (upstream: a file per source in Path) or StateBackendIggy (a
	// topic per source in Stream, so a runner needs no volume). A Go extension key.
	Backend string
	// Stream is the Iggy stream holding the state and lease topics of backend "iggy".
	Stream string
}

// State backends (state.backend).
const (
	StateBackendFile = "file"
	StateBackendIggy = "iggy"
)

// Connector config provider types (connectors.config_type).
const (
	ProviderLocal = "local"
	ProviderHTTP  = "http"
)

// Connectors is the [connectors] section. Upstream it is a tagged union; the
// fields of the inactive provider are simply unused.
type Connectors struct {
	ConfigType string // ProviderLocal or ProviderHTTP
	// Local provider.
	ConfigDir string
	// HTTP provider (docs/config.md §5.1).
	BaseURL        string
	Timeout        time.Duration
	RequestHeaders map[string]string // nil when none
	URLTemplates   map[string]string // nil when none
	Response       ResponsePaths
	Retry          Retry

	// ActivationProbe is how long PUT .../configs/active watches a newly activated version before
	// it keeps it (0: it only records the choice, as upstream); ActivationMaxErrorRate the share of
	// failed messages over that window that rolls it back (0: not checked). Go extension keys
	// (docs/runtime-changes.md).
	ActivationProbe        time.Duration
	ActivationMaxErrorRate float64
}

// ResponsePaths is [connectors.response]; "" means unset.
type ResponsePaths struct {
	DataPath  string
	ErrorPath string
}

// Retry is [connectors.retry]. MaxAttempts counts retries, not requests.
type Retry struct {
	Enabled           bool
	MaxAttempts       uint32
	InitialBackoff    time.Duration
	MaxBackoff        time.Duration
	BackoffMultiplier uint32
}

// Telemetry is [telemetry] (OpenTelemetry export).
type Telemetry struct {
	Enabled     bool
	ServiceName string
	Logs        OTLPExporter
	Traces      OTLPExporter
}

// OTLPExporter is [telemetry.logs] or [telemetry.traces].
type OTLPExporter struct {
	Transport string // "grpc" or "http"
	Endpoint  string
}

// Plugins is [plugins] (a Go extension): where plugin libraries may be loaded from.
type Plugins struct {
	// AllowedDirs lists the directories (searched at any depth) a plugin may be loaded from.
	// Empty means the default: see pluginpath.DefaultAllowedDirs.
	AllowedDirs []string
}

// Logging is [logging].
type Logging struct {
	Format string // "text" or "json"
}

// DefaultRuntime is the built-in defaults document of upstream
// (core/connectors/runtime/config.toml) plus the struct defaults that apply
// to keys it omits (logging format, HTTP provider settings).
func DefaultRuntime() Runtime {
	return Runtime{
		HTTP: HTTP{
			Enabled: true,
			Address: "127.0.0.1:8081",
			CORS: CORS{
				AllowedMethods: []string{"GET", "POST", "PUT", "DELETE"},
				AllowedOrigins: []string{"*"},
				AllowedHeaders: []string{"content-type"},
				ExposedHeaders: []string{""},
			},
			Metrics: HTTPMetrics{Endpoint: "/metrics"},
			UI:      HTTPUI{Enabled: true},
			TLS:     HTTPTLS{CertFile: "core/certs/iggy_cert.pem", KeyFile: "core/certs/iggy_key.pem"},
			Limits:  DefaultHTTPLimits(),

			SecretKeys:   slices.Clone(DefaultSecretKeys),
			AllowedHosts: []string{},

			Tap:            true,
			TapMaxDuration: DefaultTapMaxDuration,
			LogRecords:     DefaultLogRecords,
			LogBytes:       DefaultLogBytes,
		},
		Iggy: Iggy{
			Address:  "localhost:8090",
			Username: "iggy",
			Password: "iggy",
			TLS:      IggyTLS{CAFile: "core/certs/iggy_ca_cert.pem"},
			Protocol: IggyProtocolAuto,

			RequestTimeout: DefaultIggyRequestTimeout,
		},
		State: State{Path: "local_state", Backend: StateBackendFile, Stream: "connector_state"},
		Connectors: Connectors{
			ConfigType: ProviderLocal,
			Timeout:    10 * time.Second,
			Retry: Retry{
				Enabled:           true,
				MaxAttempts:       3,
				InitialBackoff:    time.Second,
				MaxBackoff:        30 * time.Second,
				BackoffMultiplier: 2,
			},
		},
		Telemetry: Telemetry{
			ServiceName: "iggy-connectors",
			Logs:        OTLPExporter{Transport: "grpc", Endpoint: "http://localhost:4317"},
			Traces:      OTLPExporter{Transport: "grpc", Endpoint: "http://localhost:4317"},
		},
		Logging: Logging{Format: "text"},
		Fleet:   Fleet{Refresh: DefaultFleetRefresh, Runners: []string{}, DNS: []string{}, Scheme: FleetSchemeHTTP},
	}
}

// Defaults of the see-inside keys of [http]: a tap stream's longest life, and the log records
// kept per connector (whichever bound is reached first).
const (
	DefaultTapMaxDuration = 10 * time.Minute
	DefaultLogRecords     = 1000
	DefaultLogBytes       = 1 << 20
)

// DefaultHTTPLimits are the bounds of an HTTP server when none are configured: generous for an
// operator's tools and Prometheus, tight enough that stalled clients are dropped within a minute.
// The write timeout is the budget of a quick answer; handlers that wait on runners or the config
// provider (restart, config versions) extend their own deadline by what they may legitimately take.
func DefaultHTTPLimits() HTTPLimits {
	return HTTPLimits{
		ReadTimeout:    30 * time.Second,
		WriteTimeout:   30 * time.Second,
		IdleTimeout:    60 * time.Second,
		MaxBodyBytes:   1 << 20,
		MaxConnections: 256,
		// A proxy or NAT puts many clients behind one address: a quarter of the cap, so a few
		// addresses can never fill it alone.
		MaxConnectionsPerClient: 64,
		// A body trickled to hold a connection is cut after about a second; 1 KiB/s is far below
		// any real client, even a 1 MiB config on a slow link (17 minutes).
		MinBodyRate: 1024,
	}
}

// Sentinel errors of runtime loading, for callers that branch.
var (
	// ErrInvalidRuntime wraps every rejected runtime file or variable.
	ErrInvalidRuntime = errors.New("invalid runtime configuration")
)

// LoadRuntime builds the runtime configuration from three layers: the
// defaults, the TOML file at path (skipped when path is ""), then the
// IGGY_CONNECTORS_* variables in env ("NAME=value" entries, later entries
// win). Unknown file keys and unknown variables are ignored (see
// UnknownRuntimeVars for the warnings). Every error names the file or
// variable and the key.
func LoadRuntime(path string, env []string) (Runtime, error) {
	if path == "" {
		return buildRuntime("", nil, env)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Runtime{}, fmt.Errorf("read runtime config: %w", err)
	}
	return buildRuntime("file "+path, data, env)
}

// ParseRuntime is LoadRuntime for a document already in memory; name is used
// in error messages only.
func ParseRuntime(name string, data []byte, env []string) (Runtime, error) {
	return buildRuntime(name, data, env)
}

func buildRuntime(name string, data []byte, env []string) (Runtime, error) {
	r := DefaultRuntime()
	if data != nil {
		if err := applyRuntimeTOML(&r, data); err != nil {
			return Runtime{}, fmt.Errorf("%w: %s: %w", ErrInvalidRuntime, name, err)
		}
	}
	vars := EnvMap(env)
	for _, f := range runtimeFields {
		value, ok := vars[f.envName()]
		if !ok || value == "" {
			continue
		}
		if err := f.setFromEnv(&r, value); err != nil {
			return Runtime{}, fmt.Errorf("%w: environment variable %s (key %s): %w", ErrInvalidRuntime, f.envName(), f.path, err)
		}
	}
	if err := r.Validate(); err != nil {
		return Runtime{}, err
	}
	return r, nil
}

func applyRuntimeTOML(r *Runtime, data []byte) error {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return fmt.Errorf("TOML syntax: %w", err)
	}
	for _, f := range runtimeFields {
		value, found, err := lookupPath(doc, f.path)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if err := f.setFromTOML(r, value); err != nil {
			return fmt.Errorf("key %s: %w", f.path, err)
		}
	}
	return nil
}

// lookupPath finds a dotted key in a decoded TOML document. A scalar where a
// table is expected is an error naming the key.
func lookupPath(doc map[string]any, path string) (any, bool, error) {
	parts := strings.Split(path, ".")
	var current any = doc
	for i, part := range parts {
		table, ok := current.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("key %s: expected a table, got %s", strings.Join(parts[:i], "."), describeValue(current))
		}
		current, ok = table[part]
		if !ok {
			return nil, false, nil
		}
	}
	return current, true, nil
}

// Validate checks the rules that span several keys, and those upstream
// enforces at startup, before anything is started.
func (r Runtime) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: key %s: %s", ErrInvalidRuntime, key, fmt.Sprintf(format, args...))
	}
	for _, k := range r.HTTP.SecretKeys {
		if strings.TrimSpace(k) == "" {
			return bad("http.secret_keys", "an empty entry would match every key; list key-name parts such as \"password\"")
		}
	}
	for _, m := range r.HTTP.CORS.AllowedMethods {
		if m == "" {
			continue
		}
		if !isHTTPMethod(strings.ToUpper(m)) {
			return bad("http.cors.allowed_methods", "unknown HTTP method %q", m)
		}
	}
	if r.Iggy.Token == "" && (r.Iggy.Username == "" || r.Iggy.Password == "") {
		return bad("iggy.username", "Missing Iggy credentials: set iggy.token, or both iggy.username and iggy.password")
	}
	if r.Iggy.TLS.Enabled && r.Iggy.TLS.CAFile == "" {
		return bad("iggy.tls.ca_file", "required when iggy.tls.enabled is true")
	}
	if r.Iggy.RequestTimeout <= 0 {
		return bad("iggy.request_timeout", "%s: a request needs time to be answered; use a duration above 0, such as \"30s\"", FormatDuration(r.Iggy.RequestTimeout))
	}
	if r.State.Backend == StateBackendIggy && (r.State.Stream == "" || len(r.State.Stream) > 255) {
		return bad("state.stream", "%q: the state backend %q needs a stream name of 1..255 bytes", r.State.Stream, StateBackendIggy)
	}
	if err := r.Fleet.validate(bad); err != nil {
		return err
	}
	if p := r.Connectors.ActivationProbe; p < 0 {
		return bad("connectors.activation_probe", "%s is negative (0 switches the probe off)", FormatDuration(p))
	}
	if e := r.Connectors.ActivationMaxErrorRate; !(e >= 0 && e <= 1) {
		return bad("connectors.activation_max_error_rate", "%v is not a share between 0 and 1 (0.05 is 5%% of the messages; 0 switches the check off)", e)
	}
	if r.Connectors.ConfigType == ProviderHTTP && !r.Fleet.Enabled {
		if r.Connectors.BaseURL == "" {
			return bad("connectors.base_url", "required when connectors.config_type is %q", ProviderHTTP)
		}
		if r.Connectors.Retry.InitialBackoff > r.Connectors.Retry.MaxBackoff {
			return bad("connectors.retry.initial_backoff", "%s is larger than connectors.retry.max_backoff %s",
				FormatDuration(r.Connectors.Retry.InitialBackoff), FormatDuration(r.Connectors.Retry.MaxBackoff))
		}
		for name, value := range r.Connectors.RequestHeaders {
			if !isHeaderName(name) {
				return bad("connectors.request_headers", "Invalid header name '%s'", name)
			}
			if strings.ContainsAny(value, "\r\n\x00") {
				return bad("connectors.request_headers", "Invalid header value for '%s'", name)
			}
		}
	}
	return nil
}

func isHTTPMethod(m string) bool {
	switch m {
	case "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "PATCH", "TRACE":
		return true
	}
	return false
}

// isHeaderName reports whether name is an RFC 9110 token.
func isHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ResolveToken returns the personal access token to log in with: the token
// itself, or for "file:<path>" the trimmed content of that file ("~/" expands
// to the home directory). A missing or blank token file is an error.
func (i Iggy) ResolveToken() (string, error) {
	path, isFile := strings.CutPrefix(i.Token, "file:")
	if !isFile {
		return i.Token, nil
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("iggy.token: expand ~: %w", err)
		}
		path = filepath.Join(home, rest)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("iggy.token: read token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("iggy.token: token file %s is empty", path)
	}
	return token, nil
}

const masked = "******"

// Redacted returns a copy safe to log: secrets (api_key, password, token)
// are replaced by ****** when set.
func (r Runtime) Redacted() Runtime {
	c := r
	for _, f := range runtimeFields {
		if !f.secret {
			continue
		}
		if p := f.ref(&c).(*string); *p != "" {
			*p = masked
		}
	}
	return c
}

// DisplayConfig reports whether the effective configuration may be logged,
// per IGGY_DISPLAY_CONFIG: unset, "1" or "true" (any case) mean yes.
func DisplayConfig(env []string) bool {
	value, ok := EnvMap(env)["IGGY_DISPLAY_CONFIG"]
	if !ok {
		return true
	}
	return value == "1" || strings.EqualFold(value, "true")
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case int64, int, uint64:
		return "an integer"
	case float64:
		return "a float"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}
