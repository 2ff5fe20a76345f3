package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EnvPrefix starts every runtime variable name.
const EnvPrefix = "IGGY_CONNECTORS_"

// Variables that steer loading rather than set a key.
const (
	EnvConfigPath      = "IGGY_CONNECTORS_CONFIG_PATH"
	EnvEnvPath         = "IGGY_CONNECTORS_ENV_PATH"
	EnvDisplayConfig   = "IGGY_DISPLAY_CONFIG"
	DefaultConfigPath  = "core/connectors/runtime/config.toml"
	sinkOverridePrefix = EnvPrefix + "SINK_"
	srcOverridePrefix  = EnvPrefix + "SOURCE_"
)

type fieldKind int

const (
	kindString fieldKind = iota
	kindBool
	kindUint32
	kindDuration
	kindStrings
	kindStringMap // Go-only variable holding a JSON object
	kindPathList  // comma-separated in a variable (a bracket list is read too)
	kindFloat
)

// runtimeField describes one key of the runtime file and its variable. The
// one table drives file decoding, env overrides, Environ and the help list.
type runtimeField struct {
	path   string
	kind   fieldKind
	secret bool
	enum   []string
	// extension marks variables upstream does not have (maps are file-only
	// upstream); they exist so Environ can hand a complete Runtime to a runner.
	extension bool
	// commaList: a list variable may also be written a,b,c (without brackets).
	commaList bool
	help      string
	ref       func(*Runtime) any
}

var runtimeFields = []runtimeField{
	{path: "http.enabled", kind: kindBool, help: "serve the REST API", ref: func(r *Runtime) any { return &r.HTTP.Enabled }},
	{path: "http.address", kind: kindString, help: "REST API bind address host:port", ref: func(r *Runtime) any { return &r.HTTP.Address }},
	{path: "http.api_key", kind: kindString, secret: true, help: "the API key, sent in the api-key header or as Authorization: Bearer (empty: none, and a listener beyond loopback refuses control, config and offset routes)", ref: func(r *Runtime) any { return &r.HTTP.APIKey }},
	// Secret masking (Go-only keys).
	{path: "http.secret_keys", kind: kindStrings, commaList: true, extension: true, help: "plugin_config key-name parts whose values are masked in API answers, comma-separated or bracket list (empty: mask nothing)", ref: func(r *Runtime) any { return &r.HTTP.SecretKeys }},
	{path: "http.reveal_secrets", kind: kindBool, extension: true, help: "answer the config routes with secret plugin_config values in clear", ref: func(r *Runtime) any { return &r.HTTP.RevealSecrets }},
	{path: "http.cors.enabled", kind: kindBool, help: "install the CORS layer", ref: func(r *Runtime) any { return &r.HTTP.CORS.Enabled }},
	{path: "http.cors.allowed_methods", kind: kindStrings, help: "CORS methods, bracket list", ref: func(r *Runtime) any { return &r.HTTP.CORS.AllowedMethods }},
	{path: "http.cors.allowed_origins", kind: kindStrings, help: "CORS origins, bracket list; [\"*\"] is any", ref: func(r *Runtime) any { return &r.HTTP.CORS.AllowedOrigins }},
	{path: "http.cors.allowed_headers", kind: kindStrings, help: "CORS allowed headers, bracket list", ref: func(r *Runtime) any { return &r.HTTP.CORS.AllowedHeaders }},
	{path: "http.cors.exposed_headers", kind: kindStrings, help: "CORS exposed headers, bracket list", ref: func(r *Runtime) any { return &r.HTTP.CORS.ExposedHeaders }},
	{path: "http.cors.allow_credentials", kind: kindBool, help: "CORS allow credentials", ref: func(r *Runtime) any { return &r.HTTP.CORS.AllowCredentials }},
	{path: "http.cors.allow_private_network", kind: kindBool, help: "CORS allow private network", ref: func(r *Runtime) any { return &r.HTTP.CORS.AllowPrivateNetwork }},
	{path: "http.tls.enabled", kind: kindBool, help: "serve HTTPS", ref: func(r *Runtime) any { return &r.HTTP.TLS.Enabled }},
	{path: "http.tls.cert_file", kind: kindString, help: "PEM certificate for HTTPS", ref: func(r *Runtime) any { return &r.HTTP.TLS.CertFile }},
	{path: "http.tls.key_file", kind: kindString, help: "PEM key for HTTPS", ref: func(r *Runtime) any { return &r.HTTP.TLS.KeyFile }},
	{path: "http.metrics.enabled", kind: kindBool, help: "expose Prometheus metrics", ref: func(r *Runtime) any { return &r.HTTP.Metrics.Enabled }},
	{path: "http.metrics.endpoint", kind: kindString, help: "metrics route path", ref: func(r *Runtime) any { return &r.HTTP.Metrics.Endpoint }},
	// Bounds of slow clients (Go extension keys; 0 switches one off).
	{path: "http.read_timeout", kind: kindDuration, extension: true, help: "longest time to read one request, body included (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.ReadTimeout }},
	{path: "http.write_timeout", kind: kindDuration, extension: true, help: "longest time to answer a quick request; restart and config routes add their own budget (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.WriteTimeout }},
	{path: "http.idle_timeout", kind: kindDuration, extension: true, help: "keep-alive connections idle this long are closed (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.IdleTimeout }},
	{path: "http.max_body_bytes", kind: kindUint32, extension: true, help: "largest request body in bytes; larger is answered 413 (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.MaxBodyBytes }},
	{path: "http.max_connections", kind: kindUint32, extension: true, help: "connections served at once; at the cap idle keep-alive connections are closed first, then new ones wait (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.MaxConnections }},
	{path: "http.min_body_rate", kind: kindUint32, extension: true, help: "slowest a request body may arrive, in bytes a second after its first second; slower is cut with 408 (0: no floor)", ref: func(r *Runtime) any { return &r.HTTP.Limits.MinBodyRate }},
	{path: "http.max_connections_per_client", kind: kindUint32, extension: true, help: "connections one client IP address may hold; more are closed (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.Limits.MaxConnectionsPerClient }},
	// Access policy (Go extension keys, pkg/httpguard).
	{path: "http.allow_unauthenticated", kind: kindBool, extension: true, help: "serve control, config and offset routes without an API key on a listener beyond loopback (off: they answer 401)", ref: func(r *Runtime) any { return &r.HTTP.AllowUnauthenticated }},
	{path: "http.allowed_hosts", kind: kindStrings, commaList: true, extension: true, help: "Host names accepted from clients without the key, besides IP addresses, localhost and the listener's name; .example.com matches subdomains, * any", ref: func(r *Runtime) any { return &r.HTTP.AllowedHosts }},
	{path: "http.ui.enabled", kind: kindBool, extension: true, help: "serve the operations console under /ui/ (supervisor only; the page holds no data, every data call needs the API key as the API does)", ref: func(r *Runtime) any { return &r.HTTP.UI.Enabled }},
	// See inside (Go extension keys, pkg/tap and pkg/logging's ring; docs/see-inside.md).
	{path: "http.tap", kind: kindBool, extension: true, help: "serve the live tap (GET /tap on a runner, GET /{sinks,sources}/{key}/tap on the supervisor); false answers 403", ref: func(r *Runtime) any { return &r.HTTP.Tap }},
	{path: "http.tap_max_duration", kind: kindDuration, extension: true, help: "a tap stream ends after this long with an end event (0: no limit)", ref: func(r *Runtime) any { return &r.HTTP.TapMaxDuration }},
	{path: "http.log_records", kind: kindUint32, extension: true, help: "log records kept in memory per connector for the logs routes (0: none kept)", ref: func(r *Runtime) any { return &r.HTTP.LogRecords }},
	{path: "http.log_bytes", kind: kindUint32, extension: true, help: "bytes of log records (as JSON) kept in memory per connector; the oldest go first (0: none kept)", ref: func(r *Runtime) any { return &r.HTTP.LogBytes }},
	{path: "http.metrics.public", kind: kindBool, extension: true, help: "serve the metrics route without the API key (for scrapers that cannot send one)", ref: func(r *Runtime) any { return &r.HTTP.Metrics.Public }},
	{path: "iggy.address", kind: kindString, help: "Iggy server TCP address", ref: func(r *Runtime) any { return &r.Iggy.Address }},
	{path: "iggy.username", kind: kindString, help: "Iggy user", ref: func(r *Runtime) any { return &r.Iggy.Username }},
	{path: "iggy.password", kind: kindString, secret: true, help: "Iggy password", ref: func(r *Runtime) any { return &r.Iggy.Password }},
	{path: "iggy.token", kind: kindString, secret: true, help: "personal access token, or file:<path>; replaces username/password", ref: func(r *Runtime) any { return &r.Iggy.Token }},
	{path: "iggy.tls.enabled", kind: kindBool, help: "TLS to the Iggy server", ref: func(r *Runtime) any { return &r.Iggy.TLS.Enabled }},
	{path: "iggy.tls.ca_file", kind: kindString, help: "CA certificate for Iggy TLS", ref: func(r *Runtime) any { return &r.Iggy.TLS.CAFile }},
	{path: "iggy.tls.domain", kind: kindString, help: "TLS server name (empty: from the address)", ref: func(r *Runtime) any { return &r.Iggy.TLS.Domain }},
	{path: "iggy.request_timeout", kind: kindDuration, extension: true, help: "longest wait for the answer to one Iggy request; a server silent that long is dropped and reconnected (both protocols)", ref: func(r *Runtime) any { return &r.Iggy.RequestTimeout }},
	{path: "iggy.protocol", kind: kindString, enum: []string{IggyProtocolAuto, IggyProtocol08, IggyProtocol09}, extension: true, help: "Iggy wire protocol: auto (detect at connect), 0.8 or 0.9", ref: func(r *Runtime) any { return &r.Iggy.Protocol }},
	{path: "connectors.config_type", kind: kindString, enum: []string{ProviderLocal, ProviderHTTP}, help: "connector config provider: local or http", ref: func(r *Runtime) any { return &r.Connectors.ConfigType }},
	{path: "connectors.config_dir", kind: kindString, help: "local provider: directory of connector files", ref: func(r *Runtime) any { return &r.Connectors.ConfigDir }},
	{path: "connectors.base_url", kind: kindString, help: "http provider: base URL", ref: func(r *Runtime) any { return &r.Connectors.BaseURL }},
	{path: "connectors.timeout", kind: kindDuration, help: "http provider: timeout per attempt", ref: func(r *Runtime) any { return &r.Connectors.Timeout }},
	{path: "connectors.request_headers", kind: kindStringMap, extension: true, help: "http provider: request headers as a JSON object (Go-only variable)", ref: func(r *Runtime) any { return &r.Connectors.RequestHeaders }},
	{path: "connectors.url_templates", kind: kindStringMap, extension: true, help: "http provider: URL templates as a JSON object (Go-only variable)", ref: func(r *Runtime) any { return &r.Connectors.URLTemplates }},
	{path: "connectors.response.data_path", kind: kindString, help: "http provider: dotted path of the data in responses", ref: func(r *Runtime) any { return &r.Connectors.Response.DataPath }},
	{path: "connectors.response.error_path", kind: kindString, help: "http provider: dotted path of an error in responses", ref: func(r *Runtime) any { return &r.Connectors.Response.ErrorPath }},
	{path: "connectors.retry.enabled", kind: kindBool, help: "http provider: retry transient failures", ref: func(r *Runtime) any { return &r.Connectors.Retry.Enabled }},
	{path: "connectors.retry.max_attempts", kind: kindUint32, help: "http provider: number of retries", ref: func(r *Runtime) any { return &r.Connectors.Retry.MaxAttempts }},
	{path: "connectors.retry.initial_backoff", kind: kindDuration, help: "http provider: first retry delay", ref: func(r *Runtime) any { return &r.Connectors.Retry.InitialBackoff }},
	{path: "connectors.retry.max_backoff", kind: kindDuration, help: "http provider: largest retry delay", ref: func(r *Runtime) any { return &r.Connectors.Retry.MaxBackoff }},
	{path: "connectors.retry.backoff_multiplier", kind: kindUint32, help: "http provider: delay growth factor", ref: func(r *Runtime) any { return &r.Connectors.Retry.BackoffMultiplier }},
	// Activation with a probe (Go extension keys, docs/runtime-changes.md).
	{path: "connectors.activation_probe", kind: kindDuration, extension: true, help: "PUT .../configs/active restarts the connector on the new version and watches it this long, putting the previous version back when it fails (0: only record the active version, as upstream)", ref: func(r *Runtime) any { return &r.Connectors.ActivationProbe }},
	{path: "connectors.activation_max_error_rate", kind: kindFloat, extension: true, help: "during an activation probe: the largest share (0 to 1) of messages that may fail (errors or dead-lettered) before the version is rolled back (0: not checked)", ref: func(r *Runtime) any { return &r.Connectors.ActivationMaxErrorRate }},
	{path: "state.path", kind: kindString, help: "directory of source state files", ref: func(r *Runtime) any { return &r.State.Path }},
	{path: "state.backend", kind: kindString, enum: []string{StateBackendFile, StateBackendIggy}, extension: true, help: "where sources keep their state: file (a file per source in state.path) or iggy (a topic per source in state.stream; no volume needed, and replicas of a source run active/standby)", ref: func(r *Runtime) any { return &r.State.Backend }},
	{path: "state.stream", kind: kindString, extension: true, help: "state backend iggy: the stream holding each source's state topic and lease topic (created if missing)", ref: func(r *Runtime) any { return &r.State.Stream }},
	{path: "telemetry.enabled", kind: kindBool, help: "OpenTelemetry export", ref: func(r *Runtime) any { return &r.Telemetry.Enabled }},
	{path: "telemetry.service_name", kind: kindString, help: "OpenTelemetry service name", ref: func(r *Runtime) any { return &r.Telemetry.ServiceName }},
	{path: "telemetry.logs.transport", kind: kindString, enum: []string{"grpc", "http"}, help: "OTLP logs transport: grpc or http", ref: func(r *Runtime) any { return &r.Telemetry.Logs.Transport }},
	{path: "telemetry.logs.endpoint", kind: kindString, help: "OTLP logs endpoint", ref: func(r *Runtime) any { return &r.Telemetry.Logs.Endpoint }},
	{path: "telemetry.traces.transport", kind: kindString, enum: []string{"grpc", "http"}, help: "OTLP traces transport: grpc or http", ref: func(r *Runtime) any { return &r.Telemetry.Traces.Transport }},
	{path: "telemetry.traces.endpoint", kind: kindString, help: "OTLP traces endpoint", ref: func(r *Runtime) any { return &r.Telemetry.Traces.Endpoint }},
	{path: "logging.format", kind: kindString, enum: []string{"text", "json"}, help: "log format: text or json", ref: func(r *Runtime) any { return &r.Logging.Format }},
	{path: "plugins.allowed_dirs", kind: kindPathList, extension: true, help: "directories plugins may be loaded from, comma-separated (default: those of the connectors found at startup and plugins/ next to the binary)", ref: func(r *Runtime) any { return &r.Plugins.AllowedDirs }},
	// Attach mode (Go extension keys, fleet.go; docs/architecture.md, decision 21).
	{path: "fleet.enabled", kind: kindBool, extension: true, help: "attach mode: serve the merged API over runners deployed on their own; spawn nothing and read no connector provider", ref: func(r *Runtime) any { return &r.Fleet.Enabled }},
	{path: "fleet.runners", kind: kindStrings, commaList: true, extension: true, help: "attach mode: static runner endpoints, host:port or http(s)://host:port, comma-separated or bracket list", ref: func(r *Runtime) any { return &r.Fleet.Runners }},
	{path: "fleet.dns", kind: kindStrings, commaList: true, extension: true, help: "attach mode: DNS names resolved on every refresh: SRV names (_http._tcp.name) or A/AAAA names with a port (name:8081)", ref: func(r *Runtime) any { return &r.Fleet.DNS }},
	{path: "fleet.refresh", kind: kindDuration, extension: true, help: "attach mode: how often discovery runs and the runners are polled", ref: func(r *Runtime) any { return &r.Fleet.Refresh }},
	{path: "fleet.runner_api_key", kind: kindString, secret: true, extension: true, help: "attach mode: the API key the runners expect (their http.api_key); give them a key of their own, not http.api_key", ref: func(r *Runtime) any { return &r.Fleet.RunnerAPIKey }},
	{path: "fleet.scheme", kind: kindString, enum: []string{FleetSchemeHTTP, FleetSchemeHTTPS}, extension: true, help: "attach mode: how runners are called that name no scheme (DNS-found ones, fleet.runners without http(s)://): http or https", ref: func(r *Runtime) any { return &r.Fleet.Scheme }},
	{path: "fleet.ca_file", kind: kindString, extension: true, help: "attach mode, https: PEM file of the CAs the runners' certificates chain to (empty: the system's); certificates are always verified", ref: func(r *Runtime) any { return &r.Fleet.CAFile }},
	{path: "fleet.server_name", kind: kindString, extension: true, help: "attach mode, https: the name the runners' certificates must carry (empty: each endpoint's host, an IP address for DNS-found runners)", ref: func(r *Runtime) any { return &r.Fleet.ServerName }},
}

func (f runtimeField) envName() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.path, ".", "_"))
}

func (f runtimeField) checkEnum(value string) error {
	if f.enum == nil || slices.Contains(f.enum, value) {
		return nil
	}
	return fmt.Errorf("unknown value %q, expected one of %s (lowercase)", value, strings.Join(f.enum, ", "))
}

// setFromTOML stores a value decoded from the file, which must already have
// the field's type (durations are strings with a unit).
func (f runtimeField) setFromTOML(r *Runtime, v any) error {
	switch p := f.ref(r).(type) {
	case *string:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected a string, got %s", describeValue(v))
		}
		if err := f.checkEnum(s); err != nil {
			return err
		}
		*p = s
	case *bool:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("expected a bool, got %s", describeValue(v))
		}
		*p = b
	case *uint32:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("expected an integer, got %s", describeValue(v))
		}
		if n < 0 || n > 1<<32-1 {
			return fmt.Errorf("%d is out of range for an unsigned 32-bit integer", n)
		}
		*p = uint32(n)
	case *float64:
		switch n := v.(type) {
		case int64:
			*p = float64(n)
		case float64:
			*p = n
		default:
			return fmt.Errorf("expected a number, got %s", describeValue(v))
		}
	case *time.Duration:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected a duration string with a unit such as \"10s\", got %s", describeValue(v))
		}
		d, err := ParseDuration(s)
		if err != nil {
			return err
		}
		*p = d
	case *[]string:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("expected an array of strings, got %s", describeValue(v))
		}
		out := make([]string, len(items))
		for i, it := range items {
			s, ok := it.(string)
			if !ok {
				return fmt.Errorf("element %d: expected a string, got %s", i, describeValue(it))
			}
			out[i] = s
		}
		*p = out
	case *map[string]string:
		table, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("expected a table of strings, got %s", describeValue(v))
		}
		if len(table) == 0 {
			*p = nil
			return nil
		}
		out := make(map[string]string, len(table))
		for k, it := range table {
			s, ok := it.(string)
			if !ok {
				return fmt.Errorf("entry %q: expected a string, got %s", k, describeValue(it))
			}
			out[k] = s
		}
		*p = out
	default:
		panic(fmt.Sprintf("config: unhandled field type %T for %s", p, f.path))
	}
	return nil
}

// setFromEnv coerces a variable's text to the field's type.
func (f runtimeField) setFromEnv(r *Runtime, value string) error {
	switch p := f.ref(r).(type) {
	case *string:
		if err := f.checkEnum(value); err != nil {
			return err
		}
		*p = value
	case *bool:
		b, err := parseEnvBool(value)
		if err != nil {
			return err
		}
		*p = b
	case *uint32:
		n, err := parseEnvUint(value, 32)
		if err != nil {
			return err
		}
		*p = uint32(n)
	case *float64:
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return fmt.Errorf("expected a number, got %q", value)
		}
		*p = n
	case *time.Duration:
		d, err := ParseDuration(value)
		if err != nil {
			return err
		}
		*p = d
	case *[]string:
		if f.kind == kindPathList && !strings.HasPrefix(strings.TrimSpace(value), "[") {
			*p = splitPathList(value)
			return nil
		}
		items, ok := splitEnvArray(value)
		if !ok && f.commaList {
			items, ok = strings.Split(value, ","), true
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
		}
		if !ok {
			return fmt.Errorf("expected a bracket list such as [a, b], got %q", value)
		}
		*p = items
	case *map[string]string:
		var m map[string]string
		if err := json.Unmarshal([]byte(value), &m); err != nil {
			return fmt.Errorf("expected a JSON object of strings: %w", err)
		}
		if len(m) == 0 {
			m = nil
		}
		*p = m
	default:
		panic(fmt.Sprintf("config: unhandled field type %T for %s", p, f.path))
	}
	return nil
}

// render writes the field's value in the form setFromEnv reads.
func (f runtimeField) render(r *Runtime) string {
	switch p := f.ref(r).(type) {
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *uint32:
		return strconv.FormatUint(uint64(*p), 10)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *time.Duration:
		return FormatDuration(*p)
	case *[]string:
		if f.kind == kindPathList {
			return strings.Join(*p, ",")
		}
		return joinEnvArray(*p)
	case *map[string]string:
		if len(*p) == 0 {
			return ""
		}
		b, _ := json.Marshal(*p) // a map of strings always marshals
		return string(b)
	}
	panic(fmt.Sprintf("config: unhandled field type for %s", f.path))
}

// EnvVar documents one supported environment variable.
type EnvVar struct {
	Name    string
	Key     string // the runtime file key it sets; "" for loader variables
	Default string // as it would be written in the environment
	Help    string
	Secret  bool
}

// RuntimeEnvVars lists every variable the runtime configuration reads, with
// its default, in a stable order: the loader variables, then one per key.
func RuntimeEnvVars() []EnvVar {
	vars := []EnvVar{
		{Name: EnvConfigPath, Default: DefaultConfigPath, Help: "runtime config file; relative paths are searched in the working directory and its ancestors"},
		{Name: EnvEnvPath, Help: "dotenv file loaded first (default: .env in the working directory or an ancestor)"},
		{Name: EnvDisplayConfig, Help: "log the effective configuration: unset, 1 or true mean yes"},
	}
	def := DefaultRuntime()
	for _, f := range runtimeFields {
		vars = append(vars, EnvVar{Name: f.envName(), Key: f.path, Default: f.render(&def), Help: f.help, Secret: f.secret})
	}
	return vars
}

// Environ renders r as IGGY_CONNECTORS_* variables ("NAME=value"), the way
// the supervisor hands its runtime configuration to a runner:
// LoadRuntime("", r.Environ()) gives back r. Empty strings are left out
// because an empty variable means "not set" (so a key whose default is not
// empty cannot be set to "" this way).
func (r Runtime) Environ() []string {
	out := make([]string, 0, len(runtimeFields))
	for _, f := range runtimeFields {
		value := f.render(&r)
		if value == "" {
			continue
		}
		out = append(out, f.envName()+"="+value)
	}
	return out
}

// EnvironSplit is Environ in two parts: the variables that carry a secret (the secret keys:
// http.api_key, iggy.password, iggy.token, fleet.runner_api_key; connectors.request_headers, whose
// values are credentials as often as not; and any value holding a URL credential, MaskURLs) and
// the others. A supervisor hands the secret part to its runners in a private file
// (runnerproc.EnvSecretsPath), never in their environment.
func (r Runtime) EnvironSplit() (public, secret []string) {
	for _, f := range runtimeFields {
		value := f.render(&r)
		if value == "" {
			continue
		}
		kv := f.envName() + "=" + value
		if f.secret || f.path == "connectors.request_headers" || MaskURLs(value) != value {
			secret = append(secret, kv)
		} else {
			public = append(public, kv)
		}
	}
	return public, secret
}

// UnknownRuntimeVars returns one warning per IGGY_CONNECTORS_* variable in env
// that nothing reads, with up to three known names it may be a typo of.
// Connector overrides (IGGY_CONNECTORS_SINK_*, _SOURCE_*) are not checked here.
func UnknownRuntimeVars(env []string) []string {
	known := map[string]bool{EnvConfigPath: true, EnvEnvPath: true}
	names := make([]string, 0, len(runtimeFields))
	for _, f := range runtimeFields {
		known[f.envName()] = true
		names = append(names, f.envName())
	}
	var warnings []string
	seen := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if seen[name] || known[name] || !strings.HasPrefix(name, EnvPrefix) ||
			strings.HasPrefix(name, sinkOverridePrefix) || strings.HasPrefix(name, srcOverridePrefix) {
			continue
		}
		seen[name] = true
		msg := fmt.Sprintf("unknown environment variable %s is ignored", name)
		if s := suggestNames(name, names, 3); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, ", ") + "?"
		}
		warnings = append(warnings, msg)
	}
	return warnings
}

// suggestNames picks up to limit candidates within Levenshtein distance
// max(3, 30% of the longer name), compared case-insensitively, nearest first.
func suggestNames(name string, candidates []string, limit int) []string {
	type scored struct {
		name string
		dist int
	}
	var hits []scored
	lower := strings.ToLower(name)
	for _, c := range candidates {
		d := levenshtein(lower, strings.ToLower(c))
		threshold := max(3, max(len(name), len(c))*3/10)
		if d <= threshold {
			hits = append(hits, scored{c, d})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, limit)
	for i := 0; i < len(hits) && i < limit; i++ {
		out = append(out, hits[i].name)
	}
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
