// Package config reads the configuration shared by the runner and the
// supervisor (docs/config.md §1-4).
//
// The runtime side: Load finds the runtime file (IGGY_CONNECTORS_CONFIG_PATH,
// searched upwards from the working directory), merges a dotenv file, and
// layers defaults, file and IGGY_CONNECTORS_* variables into a Runtime;
// RuntimeEnvVars lists every variable and Runtime.Environ renders a Runtime
// back into them, which is how the supervisor configures its runners.
//
// The connector side: ParseConnector reads one connector file (TOML, or
// the same keys as JSON) into a Connector, keeping [transforms] in file
// order; IGGY_CONNECTORS_<SINK|SOURCE>_<KEY>_* overrides apply through
// ParseOptions.Env or ApplyConnectorEnv; MarshalTOML, MarshalDocument,
// MarshalJSON and VersionJSON write it back in the file and REST shapes.
//
// Fleet (fleet.go) is our [fleet] section (docs/architecture.md, decision 21): attach mode,
// its static endpoints and DNS names (FleetEndpoint, ParseFleetDNS), and how
// runners are called (scheme, ca_file, server_name).
//
// ErrorHandling (error_handling.go) is our [error_handling] section (docs/architecture.md,
// decision 14): tolerance, retries and the dead-letter topic; absent, it is
// nil and every answer keeps upstream's shape.
//
// RateLimit (rate_limit.go) is our [rate_limit] section: messages_per_second and
// bytes_per_second, each optional; absent, it is nil and every answer keeps
// upstream's shape. RateValue checks one figure, for the run-time routes too.
// The [connectors] keys activation_probe and activation_max_error_rate (ours)
// set the default probe of PUT .../configs/active (docs/runtime-changes.md).
//
// MarshalYAML (yaml.go) writes plugin_config in serde_yaml's layout, as
// upstream's GET .../configs/plugin?format=yaml does; strings a YAML 1.1
// reader would misread (yes, off, y, 1:20, =, 2001-12-14, ...) are quoted and
// exponents are written 1.0e+20, so PyYAML and yaml.v2 read the output back as
// yaml.v3 and serde_yaml do; escapes are libyaml's.
//
// Bounds (bounds.go): every connector document, from any source, is refused
// (ErrOverLimit) deeper than MaxNestingDepth or with more than MaxElements
// values; MarshalTOMLWithin, RenderTOML and RenderYAML refuse renderings over
// a byte limit, stopping the encoder there.
//
// Secrets: SecretKeys masks the values of secret-looking plugin_config keys
// (http.secret_keys, secrets.go) and the credentials of URLs in any string
// (userinfo, secret query parameters, token-like path segments:
// secrets_url.go) and secret-looking key=value pairs of free text
// (secrets_text.go), for API answers and error texts; Unmask restores them when
// a masked config is sent back with everything else unchanged
// (secrets_unmask.go).
//
// Runtime.LogValue (runtime_log.go) is the startup line's view of a Runtime:
// an explicit allow-list of keys, header values and URL userinfo masked.
//
// ErrorField (errfield.go) finds the field a connector config error is about
// ("streams[0].batch_length", "transforms.add_fields"), for the field paths of
// the validate route and the runner's --check.
//
// Values are read as upstream reads them; where upstream rejects input only
// by accident (numeric-looking strings in env, partial retry tables), this
// package accepts it.
package config
