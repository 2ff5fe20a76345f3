package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ConnectorEnvPrefix is the prefix of a connector's override variables:
// IGGY_CONNECTORS_<SINK|SOURCE>_<KEY upper-cased>_ (docs/config.md §4.5).
func ConnectorEnvPrefix(kind ConnectorKind, key string) string {
	return EnvPrefix + kind.envSegment() + "_" + strings.ToUpper(key) + "_"
}

// maxStreamIndex is the highest STREAMS_<i> index upstream generates names for.
const maxStreamIndex = 255

type envTarget int

const (
	envString envTarget = iota
	envBool
	envU64
	envU32
	envStrings
)

// envField maps one override variable's suffix to the key it sets and how its value is read.
type envField struct {
	suffix, key string
	target      envTarget
}

var topLevelEnvFields = []envField{
	{"KEY", "key", envString},
	{"ENABLED", "enabled", envBool},
	{"VERSION", "version", envU64},
	{"NAME", "name", envString},
	{"PATH", "path", envString},
	{"PLUGIN_CONFIG_FORMAT", "plugin_config_format", envString},
	{"VERBOSE", "verbose", envBool},
	{"BENCHMARK", "benchmark", envBool},
}

// streamEnvFields are the STREAMS_<i>_* overrides of a connector of kind.
func streamEnvFields(kind ConnectorKind) []envField {
	common := []envField{
		{"STREAM", "stream", envString},
		{"SCHEMA", "schema", envString},
		{"AVRO_SCHEMA_JSON", "avro_schema_json", envString},
		{"AVRO_SCHEMA_PATH", "avro_schema_path", envString},
		{"BATCH_LENGTH", "batch_length", envU32},
	}
	if kind == KindSink {
		return append(common,
			envField{"TOPICS", "topics", envStrings},
			envField{"POLL_INTERVAL", "poll_interval", envString},
			envField{"IDLE_POLL_MAX", "idle_poll_max", envString},
			envField{"IDLE_AFTER", "idle_after", envString},
			envField{"CONSUMER_GROUP", "consumer_group", envString},
			envField{"OFFSET_COMMIT", "offset_commit", envString})
	}
	return append(common,
		envField{"TOPIC", "topic", envString},
		envField{"LINGER_TIME", "linger_time", envString})
}

func coerceEnv(target envTarget, value string) (any, error) {
	switch target {
	case envBool:
		return parseEnvBool(value)
	case envU64:
		n, err := parseEnvUint(value, 64)
		return n, err
	case envU32:
		n, err := parseEnvUint(value, 32)
		return int64(n), err
	case envStrings:
		items, ok := splitEnvArray(value)
		if !ok {
			return nil, fmt.Errorf("expected a bracket list such as [a, b], got %q", value)
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = it
		}
		return out, nil
	}
	return value, nil
}

// applyTypedEnv sets the typed override variables on a raw document, before
// it is decoded. Any STREAMS_<i>_* variable replaces the whole streams array
// (indices not mentioned become empty tables), as upstream's merge does.
func applyTypedEnv(doc map[string]any, kind ConnectorKind, key string, env []string) error {
	prefix := ConnectorEnvPrefix(kind, key)
	vars := EnvMap(env)
	top, err := readEnvFields(prefix, topLevelEnvFields, vars)
	if err != nil {
		return err
	}
	for k, v := range top {
		doc[k] = v
	}
	if err := applyErrorHandlingEnv(doc, prefix, vars); err != nil {
		return err
	}
	if err := applyRateLimitEnv(doc, prefix, vars); err != nil {
		return err
	}
	var streams []any
	for i := 0; i <= maxStreamIndex; i++ {
		stream, err := readEnvFields(prefix+"STREAMS_"+strconv.Itoa(i)+"_", streamEnvFields(kind), vars)
		if err != nil {
			return err
		}
		if stream == nil {
			continue
		}
		for len(streams) < i {
			streams = append(streams, map[string]any{})
		}
		streams = append(streams, stream)
	}
	if streams != nil {
		doc["streams"] = streams
	}
	return nil
}

// readEnvFields reads the fields' variables that are set and not empty, by key; nil when none is.
func readEnvFields(prefix string, fields []envField, vars map[string]string) (map[string]any, error) {
	var set map[string]any
	for _, f := range fields {
		value, ok := vars[prefix+f.suffix]
		if !ok || value == "" {
			continue
		}
		v, err := coerceEnv(f.target, value)
		if err != nil {
			return nil, fmt.Errorf("environment variable %s: %w", prefix+f.suffix, err)
		}
		if set == nil {
			set = map[string]any{}
		}
		set[f.key] = v
	}
	return set, nil
}

// applyPluginConfigEnv sets top-level plugin_config keys from variables whose
// upper-cased name starts with <prefix>PLUGIN_CONFIG_. Empty values set "".
func applyPluginConfigEnv(c *Connector, kind ConnectorKind, key string, env []string) {
	marker := ConnectorEnvPrefix(kind, key) + "PLUGIN_CONFIG_"
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(strings.ToUpper(name), marker) {
			continue
		}
		field := strings.ToLower(name[len(marker):])
		if field == "" {
			continue
		}
		if c.PluginConfig == nil {
			c.PluginConfig = map[string]any{}
		}
		if value == "" {
			c.PluginConfig[field] = ""
		} else {
			c.PluginConfig[field] = guessEnvJSON(value)
		}
	}
}

// ApplyConnectorEnv applies the connector's IGGY_CONNECTORS_<TYPE>_<KEY>_*
// overrides from env to c, with the same rules as loading a file with them.
// On error c is left unchanged.
func ApplyConnectorEnv(c *Connector, env []string) error {
	name := fmt.Sprintf("%s %q", c.Kind, c.Key)
	updated, err := finishDecode(name, c.document(), c.TransformOrder, c.Kind, c.Key, ParseOptions{Env: env})
	if err != nil {
		return err
	}
	*c = updated
	return nil
}

// ConnectorEnvWarnings lists variables under the connector's prefix that are
// neither a typed override nor a plugin_config key, so they do nothing.
func ConnectorEnvWarnings(kind ConnectorKind, key string, env []string) []string {
	prefix := ConnectorEnvPrefix(kind, key)
	known := map[string]bool{}
	for _, f := range topLevelEnvFields {
		known[prefix+f.suffix] = true
	}
	for _, f := range append(errorHandlingEnvFields, rateLimitEnvFields...) {
		known[prefix+f.suffix] = true
	}
	for i := 0; i <= maxStreamIndex; i++ {
		for _, f := range streamEnvFields(kind) {
			known[prefix+"STREAMS_"+strconv.Itoa(i)+"_"+f.suffix] = true
		}
	}
	var warnings []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, prefix) || known[name] || strings.HasPrefix(strings.ToUpper(name), prefix+"PLUGIN_CONFIG_") {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("unknown environment variable %s for %s %q is ignored", name, kind, key))
	}
	return warnings
}
