package config

import (
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// loggedRuntimeKeys are the runtime keys the startup line shows. The list is explicit: a key added
// later, a secret maybe, is not logged until someone adds it here. http.api_key, iggy.password and
// iggy.token are never listed; header values are masked, URLs lose their userinfo.
var loggedRuntimeKeys = []string{
	"http.enabled", "http.address", "http.secret_keys", "http.reveal_secrets",
	"http.cors.enabled", "http.cors.allowed_methods", "http.cors.allowed_origins", "http.cors.allowed_headers",
	"http.cors.exposed_headers", "http.cors.allow_credentials", "http.cors.allow_private_network",
	"http.tls.enabled", "http.tls.cert_file", "http.tls.key_file", "http.metrics.enabled", "http.metrics.endpoint",
	"http.read_timeout", "http.write_timeout", "http.idle_timeout", "http.max_body_bytes", "http.max_connections",
	"http.max_connections_per_client", "http.min_body_rate", "http.allow_unauthenticated", "http.allowed_hosts", "http.metrics.public",
	"http.ui.enabled",
	"http.tap", "http.tap_max_duration", "http.log_records", "http.log_bytes",
	"iggy.address", "iggy.username", "iggy.tls.enabled", "iggy.tls.ca_file", "iggy.tls.domain", "iggy.protocol",
	"iggy.request_timeout",
	"connectors.config_type", "connectors.config_dir", "connectors.base_url", "connectors.timeout",
	"connectors.request_headers", "connectors.url_templates", "connectors.response.data_path",
	"connectors.response.error_path", "connectors.retry.enabled", "connectors.retry.max_attempts",
	"connectors.retry.initial_backoff", "connectors.retry.max_backoff", "connectors.retry.backoff_multiplier",
	"state.path", "state.backend", "state.stream",
	"telemetry.enabled", "telemetry.service_name", "telemetry.logs.transport", "telemetry.logs.endpoint",
	"telemetry.traces.transport", "telemetry.traces.endpoint",
	"logging.format", "plugins.allowed_dirs",
	"fleet.enabled", "fleet.runners", "fleet.dns", "fleet.refresh", "fleet.scheme", "fleet.ca_file", "fleet.server_name", // never fleet.runner_api_key
}

// LoggedRuntimeKey reports whether name is a key of the startup line's runtime configuration
// (loggedRuntimeKeys): vetted to hold no secret even where its name reads like one
// (http.secret_keys, http.reveal_secrets, http.cors.allow_credentials), so a log record that
// carries the startup line keeps its values as the line shows them.
func LoggedRuntimeKey(name string) bool { return slices.Contains(loggedRuntimeKeys, name) }

// LogValue is the runtime configuration as the startup line logs it: the keys of
// loggedRuntimeKeys by their file names, request header values masked, the userinfo of every URL
// masked.
func (r Runtime) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(loggedRuntimeKeys))
	for _, f := range runtimeFields {
		if f.secret || !slices.Contains(loggedRuntimeKeys, f.path) {
			continue
		}
		attrs = append(attrs, slog.Any(f.path, loggedValue(f.path, f.ref(&r))))
	}
	return slog.GroupValue(attrs...)
}

// loggedValue renders one field (a pointer into a Runtime) for the log.
func loggedValue(path string, ref any) any {
	switch v := ref.(type) {
	case *string:
		return MaskURLs(*v)
	case *[]string:
		out := make([]string, len(*v))
		for i, s := range *v {
			out[i] = MaskURLs(s)
		}
		return out
	case *map[string]string:
		out := make(map[string]string, len(*v))
		for k, s := range *v {
			if path == "connectors.request_headers" {
				s = MaskedValue // header values are credentials as often as not
			}
			out[k] = MaskURLs(s)
		}
		return fmt.Sprint(out)
	case *time.Duration:
		return v.String()
	case *bool:
		return *v
	case *uint32:
		return *v
	case *uint64:
		return *v
	case *float64:
		return *v
	}
	return fmt.Sprint(ref) // unreachable for the listed keys; a pointer prints no value
}
