// Package logging builds the process loggers of the runner and the
// supervisor and carries runner output into the supervisor's log.
//
//   - New, NewHandler: a log/slog handler writing "text" or "json" (one JSON
//     object per line), filtered by a RUST_LOG-style directive list
//     ("info", "warn,connector=debug", "iggy_connectors::runner=trace"), with
//     fixed attributes on every line (a runner's connector key) and optional
//     extra handlers fed the same records (the OpenTelemetry log bridge).
//   - ParseFilter, Filter: the directive list. A record's target is its
//     "target" attribute, TargetPlugin for a plugin line (it carries
//     "connector_target"), else the handler's default target (TargetRuntime
//     for the supervisor, TargetRunner for runners). As upstream's
//     EnvFilter, a directive covers every target it is a prefix of, and the
//     longest match wins. A plugin line is judged by a directive naming the
//     plugin's own target when there is one ("iggy_connector_stdout_sink=trace"),
//     else by TargetPlugin.
//   - Handler.SetFilter (filtervar.go): the filter sits behind an atomic
//     pointer read once per record and shared by every handler derived from
//     one NewHandler, so a log level changed at run time applies to the next
//     record of every logger, plugin lines included.
//   - LevelChange, LevelState (levelchange.go): the bodies of the run-time
//     log level routes (PUT and GET /log_level); PluginFilter (plugin_filter.go)
//     the RUST_LOG a plugin is opened with so it sends what the host's filter,
//     or a more verbose ceiling, lets through of its lines.
//   - Relay, Relayer, ParseLine: the supervisor reads each runner's
//     stdout/stderr and re-emits every line on its own logger, tagged with
//     the connector key, so iggy-connectors shows one log stream. Lines the
//     runner wrote with slog (JSON or text) keep their time, level and
//     attributes; other lines (a crash report) become plain messages.
//     Relayer.SetAlso hands every line read to the caller too, before the filter.
//   - Record, Ring, RingHandler (record.go, ring.go): a connector's recent log
//     records in memory for the logs routes, in one JSON shape for runner,
//     plugin and supervisor lines (RFC 3339 time with nanoseconds, level word,
//     target, message, fields, origin), secret fields and URL userinfo masked;
//     the ring is bounded in records and bytes, and followers wait on Changed.
//     RingHandler fills a ring from a logger: as one of a Handler's Also
//     handlers it keeps exactly what passes the filter, so the ring needs no
//     change when the filter does.
//   - RouteStdlib (stdlib.go): the standard log package's output (the Iggy
//     SDK's chatter) through a process logger at debug level.
package logging
