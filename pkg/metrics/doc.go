// Package metrics holds one connector's counters, gauges and stage histograms in upstream's Prometheus names, and the JSON shapes of /stats.
package metrics
