// Package metrics holds the connectors' Prometheus families and the JSON
// shapes of /stats, exactly as upstream's runtime names and lays them out
// (http-api.md §4.2-4.3, pipeline.md §6).
//
//   - Connector: one connector's counters and stage histograms (upstream's
//     names, help texts, labels and buckets), its status, and Snapshot, the
//     per-connector /stats object. A runner creates exactly one.
//   - Runtime: the supervisor's gauges (connectors total and running) plus
//     iggy_connector_up and iggy_connector_restarts_total.
//   - ConnectorStats, RuntimeStats: the /stats JSON, fields in upstream's order.
//   - Sampler, ReadProcess: process and host figures (gopsutil, cgroup limits).
//   - Scrape, Parse, Merged: the supervisor reads every runner's /metrics and
//     re-exposes the union as one prometheus.Gatherer; a broken runner or a
//     conflicting family is skipped and reported, never failing the scrape.
//   - Handler, WriteOpenMetrics: /metrics as upstream serves it, byte for
//     byte (OpenMetrics under text/plain), or delimited protobuf on request.
package metrics
