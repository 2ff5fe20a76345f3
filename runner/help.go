package runner

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Usage writes the --help text: what the runner is and every variable it reads, with its default.
func Usage(w io.Writer) {
	fmt.Fprint(w, `iggy-connector-runner runs exactly one Iggy connector (sink or source plugin) with its Iggy pump.
It is configured by environment variables only, so it can run as one container per connector.

Usage: iggy-connector-runner [--help | --check | --dry-run [SAMPLES.jsonl]]

--check makes every check a start makes and starts nothing: the connector document (schemas,
transforms, durations), the plugin path (it resolves and is allowed), the library (it loads and
exports the symbols of its kind) and, for a sink, that its streams and topics exist on Iggy. It
prints one "field: message" line per problem (e.g. "streams[0].batch_length: expected an unsigned
integer, got -1"; "path", "plugin_config", "transforms.<name>", "iggy") and exits 0 when the
connector is valid, 2 when it is not.

--dry-run runs sample messages (JSON lines in the tap's event shape, from the file or standard
input) through the connector's decode, transforms and encode, with no Iggy and no plugin, and
prints one JSON line per outcome: "delivered" (what a sink plugin would receive), "sent" (what a
source would send to each stream entry), "filtered" or "failed" (with "error" naming the stage).
Bad configuration or samples print one {"input","line","field","message"} line each and exit 2.
See docs/dry-runs.md; "iggy-connectors test" runs it for you.

The connector comes from exactly one of IGGY_CONNECTOR_CONFIG_PATH, IGGY_CONNECTOR_CONFIG, or
IGGY_CONNECTOR_TYPE + IGGY_CONNECTOR_KEY (fetched from the provider of [connectors]).
Connector overrides: IGGY_CONNECTORS_SINK_<KEY>_<FIELD>, IGGY_CONNECTORS_SOURCE_<KEY>_<FIELD>
(e.g. ..._PLUGIN_CONFIG_<NAME>, ..._STREAMS_<i>_TOPIC), as upstream's local provider applies them;
a config served by the HTTP provider takes none.
RUST_LOG (upstream's filter syntax, e.g. "info,iggy_connectors::benchmark=off") overrides
IGGY_CONNECTOR_LOG_LEVEL.
The HTTP endpoint (IGGY_CONNECTORS_HTTP_ADDRESS) takes host:port or unix:/path/to.sock and serves
/, /health, /ready, /stats, the metrics endpoint, POST /pause and POST /resume. The API key
(IGGY_CONNECTORS_HTTP_API_KEY) goes in the api-key header or as Authorization: Bearer <key>; /,
/health and /ready never need it, the metrics endpoint not with IGGY_CONNECTORS_HTTP_METRICS_PUBLIC.
On a TCP address beyond loopback without a key, POST /pause and /resume answer 401 unless
IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED=true.

The plugin is loaded only from IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS (default: its own directory and
plugins/ next to this binary) and only when neither it nor a directory above it is writable by others.

Exit status: 0 after a graceful stop (SIGTERM/SIGINT), 1 on a fatal connector error (stderr ends
with "iggy-connector-runner: fatal: <reason>"), 2 on bad configuration, a refused plugin included
(with the line "iggy-connector-runner: invalid configuration: <reason>"). A Go runtime crash exits
2 too, with a "panic: " or "fatal error: " report and no such line.

Runner variables:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range RunnerEnvVars() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, defaultText(v.Default), v.Help)
	}
	tw.Flush()
	fmt.Fprint(w, `
Runtime variables (the runtime file's keys; same names as the supervisor). The runner reads the
iggy, state, http (address, api_key, access policy, tls, metrics endpoint, client bounds), plugins,
logging, telemetry and connectors (provider) sections; it serves no CORS headers (http.cors only
lists the browser origins that may POST to it) and always serves its metrics endpoint
(http.metrics.enabled is not consulted: a runner is scraped on its own). With telemetry enabled it
exports its logs and per-batch spans over OTLP, the resource naming its connector.
`)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range config.RuntimeEnvVars() {
		if v.Key == "" {
			continue // loader variables: IGGY_CONNECTORS_CONFIG_PATH is listed above; no dotenv in the runner
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, defaultText(v.Default), v.Help)
	}
	tw.Flush()
}

func defaultText(d string) string {
	if d == "" {
		return `(default "")`
	}
	return fmt.Sprintf("(default %s)", d)
}
