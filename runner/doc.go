// Package runner runs exactly one connector (sink or source plugin) end to end in this process:
// the plugin, its Iggy pump, source state, and a small HTTP endpoint. It is the unit an operator
// deploys as one container per connector, and what the supervisor spawns per connector.
//
// Configuration is environment only (see Usage for the full list with defaults):
//   - the runtime sections under the supervisor's names (IGGY_CONNECTORS_IGGY_*, _HTTP_*, _STATE_PATH,
//     _LOGGING_FORMAT, ...), optionally over a runtime file named by IGGY_CONNECTORS_CONFIG_PATH;
//   - the connector from exactly one of IGGY_CONNECTOR_CONFIG_PATH (a connector file),
//     IGGY_CONNECTOR_CONFIG (the same content inline, TOML or JSON) or IGGY_CONNECTOR_TYPE +
//     IGGY_CONNECTOR_KEY (the active version from the configured provider), with the
//     IGGY_CONNECTORS_SINK_<KEY>_* / _SOURCE_<KEY>_* overrides applied (except to a config served
//     by the HTTP provider, as upstream);
//   - the runner's own timeouts and retry limits (IGGY_CONNECTOR_*, read with caarlos0/env).
//
// Logs (pkg/logging) go to stdout as text or JSON lines ([logging] format), filtered by RUST_LOG
// or else IGGY_CONNECTOR_LOG_LEVEL, every line carrying connector_key and connector_type; what the
// Iggy SDK prints through the standard log package comes out the same way, at debug. A sink
// message dropped because it fails to decode, transform or encode is warned about at most once a
// second (droplog.go). With [telemetry] enabled (pkg/telemetry) log records and one span tree per
// batch are exported over OTLP under a resource naming the connector and the process; the same
// Reporter writes the benchmark-mode events.
//
// Failed records ([error_handling], docs/architecture.md, decision 14; errorpolicy.go, deadletter.go,
// sink_isolate.go, source_isolate.go): with tolerance = "all" a record that fails decode,
// transform, encode or the plugin's consume (a refused batch is bisected down to single records) goes
// to the dead-letter topic with iggy_dlq_* headers, or is logged and counted without one; with
// "none" the connector fails as before, its error naming the stream, topic, partition and offset.
//
// Endpoint (IGGY_CONNECTORS_HTTP_ADDRESS, host:port or unix:/path): GET / (text), GET /health
// ({"status":"healthy","key":..,"connector_type":..,"connector_status":..}, plus "role" for a
// source on the iggy state backend), GET /ready (200 only while the connector is active and
// running and its Iggy connection is up, else 503, for readiness probes; iggystate.go: a lost
// connection, e.g. a server silent for [iggy] request_timeout, also shows in last_error), GET /stats (the connector's /stats object of
// docs/http-api.md §4.2 plus pid, last_error, memory_usage, cpu_usage, start_time, run_time), GET /config
// (configroute.go: the running connector config as a version object, secrets masked as the
// supervisor API masks them, for an attached supervisor, docs/architecture.md, decision 21), GET on
// the metrics endpoint (default /metrics, always served; it adds iggy_connector_state), and POST
// /pause and POST /resume (pause.go: the operator's pause, docs/architecture.md, decision 13; each answers once
// the connector is in the new state, a resume 504 when it does not run again in time;
// IGGY_CONNECTOR_START_PAUSED=true starts paused), GET /tap (tap.go: the live tap, sampled
// messages at the points polled, delivered and dead_lettered of a sink, produced, sent and
// dead_lettered of a source, as Server-Sent Events; ?point=&limit=&rate=&partition=; the pumps
// pay one atomic load per batch while no tap is open; at most 4 at once, 429 beyond; [http] tap
// = false answers 403; [http] tap_max_duration ends a stream) and GET /logs (logs.go: the
// runner's last log records, [http] log_records and log_bytes, as JSON lines, ?tail=&level=, or
// followed as Server-Sent Events with ?follow=true; docs/see-inside.md). The access policy is
// pkg/httpguard's, as the supervisor's: an api_key (header or Bearer) guards everything but /,
// /health and /ready, and without one a TCP address beyond loopback refuses POST /pause and
// /resume, the PUT routes, and GET /tap, /logs and /config.
//
// Source state ([state] backend, pkg/state): "file" keeps it in IGGY_CONNECTORS_STATE_PATH as
// upstream; "iggy" in the topic source_<key> of [state] stream, and then replicas of a source run
// active/standby on a consumer-group lease (standby.go).
//
// Stats page (IGGY_CONNECTOR_STATS_PAGE, set by the supervisor): the counters, stage histograms,
// status, plugin version and a heartbeat (every 200 ms) go into that shared file mapping
// (pkg/metrics.Page), where the supervisor reads them without asking; they outlive the process, so
// the next runner of the connector counts on. A file of another layout or connector is bad
// configuration. Unset, the figures stay in memory.
//
// Check (check.go, `iggy-connector-runner --check`): every check a start makes, nothing started —
// the connector document, the plugin path and allow-list, the library's symbols (it is loaded,
// not opened) and a sink's streams and topics on Iggy; one "field: message" line per problem, exit
// 0 or 2. The supervisor's validate routes run it as a child process.
//
// Dry run (dryrun.go, `iggy-connector-runner --dry-run [SAMPLES]`, docs/dry-runs.md): the
// connector document read as a start reads it, and sample messages (pkg/dryrun: JSON lines in the
// pkg/tap.Event shape, from the file or standard input) run through this package's own sinkBatch
// (decode, transforms, encode, one sample at a time) or sourceBatch, with no Iggy and no plugin.
// Each outcome is one tap.Event JSON line on stdout: "delivered" (what the sink plugin would
// receive), "sent" (what a source would send, one per stream entry), "filtered" or "failed" (the
// stage and error, named as a dead-letter record names them); exit 0. Bad configuration or
// samples give one pkg/dryrun.Problem JSON line each, exit 2. `iggy-connectors test` and the
// supervisor's preview routes run it as a child process. tapevent.go renders a delivered record
// and a sent message as tap.Events, for the dry run and the live tap alike.
//
// The sink's Iggy side (sink_feed.go, docs/pipeline.md §1.8): each topic's polls and offset
// stores run on an I/O goroutine beside the consumer goroutine that calls the plugin. After a
// full batch the next poll goes out while the plugin consumes it (one batch ahead, naming its
// partition and first offset, on the partitions the client says are this member's); a batch's
// offset is stored once the plugin returned for it (and its dead letters are written), in front
// of the next poll, and the next batch reaches the plugin only once that store is answered, so a
// killed runner repeats at most the batch it was consuming. A pause, a stop or a partition that
// moved discards the batch fetched ahead, unstored.
//
// Idle sinks (sink_idle.go): once a stream has had no message for idle_after (1 s), a consumer's
// wait doubles over consecutive empty polls from poll_interval up to the stream's idle_poll_max,
// and the first batch resets it, so an idle runner wakes a few times a second while a stream with
// a message at least every idle_after keeps poll_interval; a pause request or shutdown ends a
// wait at once.
//
// Run-time changes (docs/runtime-changes.md): GET/PUT /log_level (loglevel.go) swaps the process
// logger's filter for the next line, the runner's and its plugin's; a plugin filters its own lines
// from its first open, so the runner sets RUST_LOG before it to what its filter (or
// IGGY_CONNECTOR_PLUGIN_LOG_CEILING) takes of plugin lines. [rate_limit] and GET/PUT /rate_limit
// (ratelimit.go): golang.org/x/time/rate buckets a sink waits at before its plugin and a source
// before its send; the time waited is iggy_connector_throttled_seconds_total and throttled_seconds.
//
// Consumer lag: every sink poll sets iggy_connector_consumer_lag for the polled partition (the
// poll reply carries the partition's current offset) in the connector's figures, summed as "lag"
// in /stats.
//
// Lifecycle: starting -> running (<-> paused) -> stopping -> stopped, or error; a source replica
// without the lease waits in standby between starting and running, and exits 1 when it loses the
// lease. SIGTERM/SIGINT stops polling,
// settles the batch in flight (its offset is stored, or its state saved, only when the plugin took
// it or Iggy confirmed it), closes the plugin and exits 0. A fatal error (missing stream or topic,
// plugin open failure, consume still failing after its retries, a hung plugin call, a stalled
// source) exits 1 with the reason logged; bad configuration exits 2 with one message naming the
// variable or key. pkg/runnerproc holds this contract (exit codes, the connector variables, the
// stderr line announcing each kind of exit): a Go crash exits 2 as well, and only the
// "invalid configuration" line tells a supervisor that restarting will not help.
package runner
