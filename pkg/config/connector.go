package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ConnectorKind says whether a connector is a sink or a source. Sinks and
// sources are separate key namespaces.
type ConnectorKind string

// The two connector kinds, spelled as in the `type` key of connector files.
const (
	KindSink   ConnectorKind = "sink"
	KindSource ConnectorKind = "source"
)

// ParseKind accepts "sink" or "source" (case-sensitive, as upstream).
func ParseKind(s string) (ConnectorKind, error) {
	switch ConnectorKind(s) {
	case KindSink, KindSource:
		return ConnectorKind(s), nil
	}
	return "", fmt.Errorf("%w: unknown connector type %q, expected sink or source", ErrInvalidConnector, s)
}

// Plural is the kind's REST path segment and table name: "sinks" or "sources".
func (k ConnectorKind) Plural() string { return string(k) + "s" }

// envSegment is the kind in connector env override names: SINK or SOURCE.
func (k ConnectorKind) envSegment() string { return strings.ToUpper(string(k)) }

// ErrInvalidConnector wraps every rejected connector configuration.
var ErrInvalidConnector = errors.New("invalid connector configuration")

// Defaults of optional stream keys (docs/config.md §3.2) and of our offset_commit.
const (
	DefaultBatchLength  uint32 = 1000
	DefaultPollInterval        = 5 * time.Millisecond
	DefaultLingerTime          = 5 * time.Millisecond
	// DefaultIdlePollMax is how far an idle sink's wait between empty polls grows from
	// poll_interval (our idle_poll_max): an idle runner then costs a few tenths of a percent of a
	// core, and a message arriving after an idle spell waits at most this long (docs/benchmarks.md §2).
	DefaultIdlePollMax = 250 * time.Millisecond
	// DefaultIdleAfter is how long a sink's stream goes without messages before its polls back
	// off towards idle_poll_max (our idle_after): a stream with a message at least this often
	// keeps poll_interval between its polls (docs/pipeline.md §1.7).
	DefaultIdleAfter = time.Second
	// OffsetCommitAfterConsuming stores a sink's offsets only after the
	// plugin's consume returned 0 (at least once; docs/architecture.md, decision 1).
	OffsetCommitAfterConsuming = "after_consuming"
	// OffsetCommitAfterPolling is upstream's behaviour (at most once).
	OffsetCommitAfterPolling = "after_polling"
)

// DefaultConsumerGroup is the consumer group a sink uses when its stream entry
// names none.
func DefaultConsumerGroup(key string) string { return "iggy-connect-sink-" + key }

// Schema names accepted in a stream entry's `schema` key.
var SchemaNames = []string{"json", "raw", "text", "proto", "flat_buffer", "avro"}

// PluginConfigFormats are the values of `plugin_config_format`.
var PluginConfigFormats = []string{"json", "yaml", "toml", "text"}

// TransformNames are the transform table names a connector may use.
var TransformNames = []string{"add_fields", "delete_fields", "filter_fields", "update_fields",
	"unwrap_envelope", "proto_convert", "flat_buffer_convert", "avro_convert"}

// Connector is one version of one connector's configuration (docs/config.md §3).
//
// Values inside PluginConfig, Transforms and StreamEntry.Options use
// JSON-like Go types whichever format they came from: map[string]any, []any,
// string, bool, int64 (uint64 above the int64 range), float64 and nil (JSON
// null only; TOML has none).
type Connector struct {
	Kind    ConnectorKind
	Key     string
	Enabled bool
	Version uint64
	Name    string
	// Path is the plugin library as written; pkg/plugin resolves it.
	Path string
	// PluginConfigFormat is "" when absent, else one of PluginConfigFormats.
	// It only picks the default rendering of GET .../configs/plugin.
	PluginConfigFormat string
	// PluginConfig is nil when absent: the plugin then receives JSON null.
	PluginConfig map[string]any
	Verbose      bool
	Benchmark    bool
	Streams      []StreamEntry
	// Transforms maps a transform name to its table; nil when absent.
	// TransformOrder lists the names in file order, the order they run in.
	Transforms     map[string]any
	TransformOrder []string
	// ErrorHandling is the [error_handling] section (ours, docs/architecture.md, decision 14); nil when absent.
	ErrorHandling *ErrorHandling
	// RateLimit is the [rate_limit] section (ours, rate_limit.go); nil when absent.
	RateLimit *RateLimit
}

// StreamEntry is one [[streams]] table. Sinks use Topics, PollInterval,
// IdlePollMax, IdleAfter, ConsumerGroup and OffsetCommit; sources use Topic and LingerTime. The
// plain fields hold effective values (defaults applied); Declared keeps the
// optional keys exactly as written, so rendering the config back shows
// absent keys as absent.
type StreamEntry struct {
	Stream string
	Topics []string // sink
	Topic  string   // source
	Schema string   // one of SchemaNames

	AvroSchemaJSON string
	AvroSchemaPath string
	BatchLength    uint32
	PollInterval   time.Duration // sink
	IdlePollMax    time.Duration // sink: the idle back-off's bound; at or below PollInterval the interval is fixed
	IdleAfter      time.Duration // sink: how long without messages before the back-off starts
	LingerTime     time.Duration // source
	ConsumerGroup  string        // sink
	OffsetCommit   string        // sink: OffsetCommitAfterConsuming or OffsetCommitAfterPolling

	// Options is the whole stream table as written, for the schema codecs'
	// own keys (avro_schema_json, ...).
	Options map[string]any

	Declared StreamDeclared
}

// StreamDeclared holds a stream entry's optional keys as written; nil means
// the key was absent.
type StreamDeclared struct {
	AvroSchemaJSON *string
	AvroSchemaPath *string
	BatchLength    *uint32
	PollInterval   *string
	IdlePollMax    *string // ours: rendered only when written
	IdleAfter      *string // ours, likewise
	LingerTime     *string
	ConsumerGroup  *string
	OffsetCommit   *string
}

// ValidKey checks a connector key before it is used in file names, env
// variable names and URLs (docs/architecture.md, decision 11): 1 to 128 characters from
// A-Z a-z 0-9 _ - ., not starting with '-' or '.', so a key can never
// name a path, an option or a hidden file.
func ValidKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: connector key is empty", ErrInvalidConnector)
	}
	if len(key) > 128 {
		return fmt.Errorf("%w: connector key %.20q... is longer than 128 characters", ErrInvalidConnector, key)
	}
	if key[0] == '-' || key[0] == '.' {
		return fmt.Errorf("%w: connector key %q starts with %q", ErrInvalidConnector, key, key[0])
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("%w: connector key %q has character %q; allowed are letters, digits, '_', '-' and '.'", ErrInvalidConnector, key, rune(c))
		}
	}
	return nil
}

// CheckStart runs the checks upstream makes when a connector starts rather
// than when its file is loaded (docs/config.md §3.4): durations must parse, and a
// source needs at least one stream. ParseConnector already makes them unless
// ParseOptions.DeferStartChecks was set.
func (c Connector) CheckStart() error {
	for i, s := range c.Streams {
		if c.Kind == KindSink && s.Declared.PollInterval != nil {
			if _, err := ParseDuration(*s.Declared.PollInterval); err != nil {
				return fmt.Errorf("%w: sink %q: streams[%d].poll_interval: Invalid poll interval: %w", ErrInvalidConnector, c.Key, i, err)
			}
		}
		if c.Kind == KindSink && s.Declared.IdlePollMax != nil {
			if _, err := ParseDuration(*s.Declared.IdlePollMax); err != nil {
				return fmt.Errorf("%w: sink %q: streams[%d].idle_poll_max: Invalid idle poll max: %w", ErrInvalidConnector, c.Key, i, err)
			}
		}
		if c.Kind == KindSink && s.Declared.IdleAfter != nil {
			if _, err := ParseDuration(*s.Declared.IdleAfter); err != nil {
				return fmt.Errorf("%w: sink %q: streams[%d].idle_after: Invalid idle after: %w", ErrInvalidConnector, c.Key, i, err)
			}
		}
		if c.Kind == KindSource && s.Declared.LingerTime != nil {
			if _, err := ParseDuration(*s.Declared.LingerTime); err != nil {
				return fmt.Errorf("%w: source %q: streams[%d].linger_time: Invalid linger time: %w", ErrInvalidConnector, c.Key, i, err)
			}
		}
	}
	if c.Kind == KindSource && len(c.Streams) == 0 {
		return fmt.Errorf("%w: source %q: No streams configured for source", ErrInvalidConnector, c.Key)
	}
	return nil
}

// PluginConfigJSON is the text handed to the plugin's open call: the
// plugin_config as compact JSON, or `null` when it is absent.
func (c Connector) PluginConfigJSON() []byte {
	if c.PluginConfig == nil {
		return []byte("null")
	}
	return appendJSON(nil, c.PluginConfig)
}

// Clone returns a deep copy, so a caller may change it freely.
func (c Connector) Clone() Connector {
	out := c
	if c.PluginConfig != nil {
		out.PluginConfig = cloneValue(c.PluginConfig).(map[string]any)
	}
	if c.Transforms != nil {
		out.Transforms = cloneValue(c.Transforms).(map[string]any)
	}
	out.TransformOrder = slices.Clone(c.TransformOrder)
	out.ErrorHandling = c.ErrorHandling.clone()
	out.RateLimit = c.RateLimit.clone()
	out.Streams = make([]StreamEntry, len(c.Streams))
	for i, s := range c.Streams {
		s.Topics = slices.Clone(s.Topics)
		if s.Options != nil {
			s.Options = cloneValue(s.Options).(map[string]any)
		}
		out.Streams[i] = s
	}
	if c.Streams == nil {
		out.Streams = nil
	}
	return out
}

func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}
