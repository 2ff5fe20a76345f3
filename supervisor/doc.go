// Package supervisor is the drop-in iggy-connectors: it reads the runtime config, spawns one runner
// process per enabled connector, restarts them, and serves the merged REST API, /stats and /metrics.
//
// Files: main.go (the command: config loading, logging and telemetry setup), supervisor.go (start,
// drain, runner environment), handover.go (the connector document a runner starts with, and the
// variables carrying our secrets, each in a private file, never the environment; the document
// size-checked before anything stops), connector.go (one connector's life loop: start, watch, restart with
// backoff), process.go (spawning and stopping runner processes; pkg/logging relays their output,
// tagged with connector_key), runnerapi.go (talking to a runner's endpoint), api.go and server.go
// (routes, CORS, TLS; the access policy is pkg/httpguard's), routes.go (the route table both modes
// register on, which keeps its patterns: a test checks the modes list the same), api_lifecycle.go (POST .../pause, resume, stop, start: the transitions
// and their 409 rules; POST .../restart), targetstate.go (each connector's target state, running, paused or stopped,
// in a file beside the state files, read at startup), api_offsets.go (the offsets routes, rewritten only while the
// connector is stopped, and reaching Iggy for them), api_offsets_sink.go (sink consumer-group
// offsets from Iggy through pkg/iggyclient.Admin), api_offsets_source.go (source state through
// pkg/state, from the configured state backend: files or Iggy), api_validate.go (validate a config body by running the runner binary's
// --check in a child process; the supervisor never loads a plugin), api_preview.go (POST .../preview: a dry run of a config over sample messages by the
// runner binary's --dry-run in a child process, through pkg/dryrun; 409 in attach mode),
// admission.go (validate, preview and the offsets routes run a few at a time, 429 beyond), stats.go (/stats, /metrics: composed from each connector's
// stats page, pkg/metrics.Page, which the supervisor creates beside the runner's socket), sampling.go
// (memory and CPU of every runner, sampled once a second in one pass), settings.go (the IGGY_SUPERVISOR_* variables),
// api_tap.go (GET .../tap: the runner's live tap relayed event by event in spawn mode, the
// replicas' taps merged in attach mode), api_logs.go (GET .../logs: each connector's recent log
// records in a ring fed by the relayed runner lines and the supervisor's own lines about it,
// LogRings; merged by time over the replicas in attach mode).
// Safe changes at run time (docs/runtime-changes.md): restartlimit.go (IGGY_SUPERVISOR_RESTART_LIMIT: status failed
// until an operator starts it), api_loglevel.go (GET/PUT .../log_level and /log_level: the connectors' and the
// supervisor's own log filter), api_ratelimit.go (GET/PUT .../rate_limit), overrides.go (what an operator changed at
// run time, handed to every runner of the connector's life loop; a persisted log filter in the target-state file).
// In attach mode fleet_runtime.go forwards those changes to every replica.
// Attach mode ([fleet] enabled, docs/architecture.md, decision 21) spawns nothing and reads no provider: fleet.go
// (its start and the pkg/fleet view of the runners deployed on their own), fleet_api.go (the same
// routes and shapes from the last fleet snapshot, each connector gaining "replicas"; config and
// process changes answer 409; pause and resume are forwarded to every replica), fleet_stats.go
// (/stats summed over replicas, /metrics with every runner's families labelled by replica).
// api_console.go serves the operations console (package console: the embedded page) under /ui/ in
// both modes. README.md documents the API with curl examples.
package supervisor
