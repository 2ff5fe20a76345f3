package metrics

import (
	"math"
)

// ConnectorStats is one element of /stats "connectors" (docs/http-api.md §4.2),
// fields in upstream's order, followed by the additive fields of
// docs/architecture.md, decision 10 (pid .. run_time).
type ConnectorStats struct {
	Key               string  `json:"key"`
	Name              string  `json:"name"`
	ConnectorType     string  `json:"connector_type"`
	Version           string  `json:"version"`
	VersionSemver     *uint32 `json:"version_semver,omitempty"`
	Status            string  `json:"status"`
	Enabled           bool    `json:"enabled"`
	MessagesProduced  *uint64 `json:"messages_produced,omitempty"`  // sources only
	MessagesSent      *uint64 `json:"messages_sent,omitempty"`      // sources only
	MessagesConsumed  *uint64 `json:"messages_consumed,omitempty"`  // sinks only
	MessagesProcessed *uint64 `json:"messages_processed,omitempty"` // sinks only
	MessagesFiltered  *uint64 `json:"messages_filtered,omitempty"`
	Errors            uint64  `json:"errors"`
	// MessagesDeadLettered is ours (docs/architecture.md, decision 14): present for a connector with tolerance = "all"
	// or one that dead-lettered anything.
	MessagesDeadLettered *uint64 `json:"messages_dead_lettered,omitempty"`
	// LogLinesDropped is ours: plugin log lines dropped over the runner's per-second limit,
	// present once any was.
	LogLinesDropped *uint64 `json:"log_lines_dropped,omitempty"`
	// TapDropped is ours: events a live tap dropped because its client did not keep up (the
	// pipeline never waits for a tap), present once any was.
	TapDropped *uint64 `json:"tap_dropped,omitempty"`
	// Lag is ours (docs/architecture.md, decision 13): a sink's consumer lag summed over its partitions (see
	// Connector.SetLag), absent before its first poll and for sources.
	Lag *uint64 `json:"lag,omitempty"`
	// ThrottledSeconds is ours: the time the connector waited for its [rate_limit], present
	// once it has one (or waited).
	ThrottledSeconds *float64 `json:"throttled_seconds,omitempty"`

	// Additive fields: the runner process hosting the connector.
	PID         int32      `json:"pid"`
	LastError   *LastError `json:"last_error,omitempty"`
	Restarts    uint64     `json:"restarts"`     // filled by the supervisor
	MemoryUsage uint64     `json:"memory_usage"` // resident set size, bytes
	CPUUsage    Float32    `json:"cpu_usage"`    // % of one core since the previous read
	StartTime   uint64     `json:"start_time"`   // µs since epoch
	RunTime     uint64     `json:"run_time"`     // µs
}

// LastError is the last_error object: the message and when it happened.
type LastError struct {
	Message   string `json:"message"`
	Timestamp uint64 `json:"timestamp"` // µs since epoch
}

// RuntimeStats is the whole /stats object (docs/http-api.md §4.2), fields in
// upstream's order.
type RuntimeStats struct {
	ConnectorsRuntimeVersion       string           `json:"connectors_runtime_version"`
	ConnectorsRuntimeVersionSemver *uint32          `json:"connectors_runtime_version_semver,omitempty"`
	ProcessID                      uint32           `json:"process_id"`
	CPUUsage                       Float32          `json:"cpu_usage"`
	TotalCPUUsage                  Float32          `json:"total_cpu_usage"`
	MemoryUsage                    uint64           `json:"memory_usage"`
	TotalMemory                    uint64           `json:"total_memory"`
	AvailableMemory                uint64           `json:"available_memory"`
	RunTime                        uint64           `json:"run_time"`
	StartTime                      uint64           `json:"start_time"`
	SourcesTotal                   uint32           `json:"sources_total"`
	SourcesRunning                 uint32           `json:"sources_running"`
	SinksTotal                     uint32           `json:"sinks_total"`
	SinksRunning                   uint32           `json:"sinks_running"`
	Connectors                     []ConnectorStats `json:"connectors"`
}

// Float32 is an f32 that marshals the way upstream's serde_json does:
// shortest round-trip digits, always with a fraction or exponent ("0.0",
// "2.5"), and null when not finite.
type Float32 float32

// MarshalJSON implements json.Marshaler.
func (f Float32) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return appendRyuFloat32(nil, float32(v)), nil
}

// appendRyuFloat32 formats f with the shortest round-trip digits laid out
// as Rust's ryu crate does for f32: plain decimals for magnitudes from
// 1e-6 below 1e13, scientific notation ("1e-7", "1.5e20") beyond.
func appendRyuFloat32(dst []byte, f float32) []byte {
	return appendShortest(dst, float64(f), 32, 13)
}
