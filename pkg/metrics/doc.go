// Package metrics holds the connectors' Prometheus families and the JSON
// shapes of /stats, exactly as upstream's runtime names and lays them out
// (docs/http-api.md §4.2-4.3, docs/pipeline.md §6).
//
//   - Connector (connector.go): one connector's counters and stage histograms
//     (upstream's names, help texts, labels and buckets), its status, and
//     Snapshot, the per-connector /stats object. A runner creates exactly one.
//   - cells (cells.go): the figures in a fixed layout of atomic 64-bit words
//     (counters, histogram buckets, heartbeat, status under a sequence lock),
//     rendered as Prometheus families and /stats counters by one code path.
//   - lagCells (lag.go): a sink's consumer lag per partition in the same layout (a table of
//     MaxLagPartitions entries naming stream, topic and partition), rendered as the
//     iggy_connector_consumer_lag gauge and summed as /stats "lag"; Connector.SetLag fills it.
//     The cells also count plugin log lines the runner dropped over its limit
//     (iggy_connector_log_lines_dropped_total, /stats "log_lines_dropped").
//   - throttleCells (throttle.go): the time a connector waited for its [rate_limit]
//     (iggy_connector_throttled_seconds_total, /stats "throttled_seconds"), shown once it has
//     a limit (Connector.ShowThrottled) or waited.
//     (iggy_connector_log_lines_dropped_total, /stats "log_lines_dropped") and live-tap events
//     dropped because a tap client did not keep up (iggy_connector_tap_dropped_total, /stats
//     "tap_dropped"; Connector.AddTapDropped).
//   - Page (page.go): the cells in a file mapped MAP_SHARED, created by the
//     supervisor (versioned header: magic, layout version, connector key) and
//     attached by the runner (AttachConnector), so the supervisor composes
//     /stats and /metrics without asking runners and counts outlive crashes.
//   - Runtime: the supervisor's gauges (connectors total and running) plus
//     iggy_connector_up, iggy_connector_restarts_total and the state gauge, and
//     (docs/runtime-changes.md) iggy_connector_config_rollbacks_total and
//     iggy_connector_restart_limit_reached, each without series until used.
//   - StateGauge (state.go): iggy_connector_state, one series per
//     ConnectorStates value, 1 for the current one (supervisor and runner).
//   - RegisterResources (resources.go): iggy_connector_memory_usage_bytes and
//     iggy_connector_cpu_seconds_total per connector (not in upstream), read
//     at scrape time: the supervisor's latest sample, or a runner's own.
//   - ConnectorStats, RuntimeStats: the /stats JSON, fields in upstream's order.
//   - SumReplicas (sum.go): one connector's /stats object over several runners of it, for
//     the supervisor's attach mode (docs/architecture.md, decision 21).
//   - Sampler, ReadProcess: process and host figures (gopsutil, cgroup limits);
//     Sampler.Processes reads many processes in one pass.
//   - Merged (merge.go): the supervisor's gatherer, its registry plus every
//     connector's families, merged by prometheus.Gatherers; a conflicting
//     family or series is skipped and reported with the connector it came
//     from, never failing the scrape. (Tests read expositions back with
//     testkit.ParseMetrics and testkit.ScrapeMetrics.)
//   - Handler, WriteOpenMetrics: /metrics as upstream serves it, byte for
//     byte (OpenMetrics under text/plain), or delimited protobuf on request.
package metrics
