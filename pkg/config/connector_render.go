package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// document is the connector as a raw document (the file's keys), the form
// env overrides apply to and the encoders write. Optional keys follow
// Declared; unknown stream keys kept in Options are carried along.
func (c Connector) document() map[string]any {
	doc := map[string]any{
		"type":      string(c.Kind),
		"key":       c.Key,
		"enabled":   c.Enabled,
		"version":   c.Version,
		"name":      c.Name,
		"path":      c.Path,
		"verbose":   c.Verbose,
		"benchmark": c.Benchmark,
	}
	if c.PluginConfigFormat != "" {
		doc["plugin_config_format"] = c.PluginConfigFormat
	}
	if c.PluginConfig != nil {
		doc["plugin_config"] = cloneValue(c.PluginConfig)
	}
	if c.Transforms != nil {
		doc["transforms"] = cloneValue(c.Transforms)
	}
	if c.ErrorHandling != nil {
		doc["error_handling"] = c.ErrorHandling.document()
	}
	if c.RateLimit != nil {
		doc["rate_limit"] = c.RateLimit.document()
	}
	streams := make([]any, len(c.Streams))
	for i, s := range c.Streams {
		streams[i] = s.document(c.Kind)
	}
	doc["streams"] = streams
	return doc
}

func (s StreamEntry) document(kind ConnectorKind) map[string]any {
	m := map[string]any{}
	if s.Options != nil {
		m = cloneValue(s.Options).(map[string]any)
	}
	for _, k := range streamKeys(kind) {
		delete(m, k)
	}
	m["stream"] = s.Stream
	m["schema"] = s.Schema
	if kind == KindSink {
		topics := make([]any, len(s.Topics))
		for i, t := range s.Topics {
			topics[i] = t
		}
		m["topics"] = topics
	} else {
		m["topic"] = s.Topic
	}
	d := s.Declared
	setOpt := func(key string, p *string) {
		if p != nil {
			m[key] = *p
		}
	}
	setOpt("avro_schema_json", d.AvroSchemaJSON)
	setOpt("avro_schema_path", d.AvroSchemaPath)
	if d.BatchLength != nil {
		m["batch_length"] = int64(*d.BatchLength)
	}
	if kind == KindSink {
		setOpt("poll_interval", d.PollInterval)
		setOpt("idle_poll_max", d.IdlePollMax)
		setOpt("idle_after", d.IdleAfter)
		setOpt("consumer_group", d.ConsumerGroup)
		setOpt("offset_commit", d.OffsetCommit)
	} else {
		setOpt("linger_time", d.LingerTime)
	}
	return m
}

// MarshalTOML writes the connector as a connector file: type, key, version
// and the body, optional keys that are absent left out, transforms in
// TransformOrder. ParseConnector reads it back to an equal Connector. A
// null (possible from JSON) inside plugin_config or transforms cannot be
// written in TOML and is an ErrInvalidConnector error, and so is an array
// the TOML parser would read back changed (mixesEmptyKeyTables).
func (c Connector) MarshalTOML() ([]byte, error) { return c.MarshalTOMLWithin(0) }

// MarshalTOMLWithin is MarshalTOML refusing (ErrOverLimit, naming the section) a file larger
// than limit bytes; 0 is no limit. Encoding stops at the limit.
func (c Connector) MarshalTOMLWithin(limit int) ([]byte, error) {
	doc := c.document()
	name := fmt.Sprintf("%s %q", c.Kind, c.Key)
	for _, section := range []string{"plugin_config", "transforms", "streams"} {
		value, present := doc[section]
		if !present {
			continue
		}
		if err := checkNoNull(value, section); err != nil {
			return nil, fmt.Errorf("%w: %s: cannot be written as TOML: %w", ErrInvalidConnector, name, err)
		}
	}
	w := &limitWriter{limit: limit}
	encode := func(section string, v map[string]any) error {
		err := encodeTOMLTo(w, v)
		if w.over {
			return renderTooLarge(name, section, limit)
		}
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", name, section, err)
		}
		return nil
	}
	// The TOML encoder sorts keys; the identity goes first for readers.
	fmt.Fprintf(w, "type = %s\nkey = %s\nversion = %d\n", tomlString(string(c.Kind)), tomlString(c.Key), c.Version)
	head := map[string]any{}
	for _, k := range []string{"enabled", "name", "path", "plugin_config_format", "verbose", "benchmark"} {
		if v, ok := doc[k]; ok {
			head[k] = v
		}
	}
	if err := encode("name", head); err != nil {
		return nil, err
	}
	w.WriteString("\n")
	if err := encode("streams", map[string]any{"streams": doc["streams"]}); err != nil {
		return nil, err
	}
	if c.Transforms != nil {
		// Written even when empty, so an empty table stays a table.
		w.WriteString("\n[transforms]\n")
	}
	for _, transform := range c.TransformOrder {
		body, ok := c.Transforms[transform]
		if !ok {
			continue
		}
		part := &limitWriter{limit: limit}
		if err := encodeTOMLTo(part, map[string]any{"transforms": map[string]any{transform: body}}); err != nil {
			if part.over {
				return nil, renderTooLarge(name, "transforms."+transform, limit)
			}
			return nil, fmt.Errorf("encode %s transform %s: %w", name, transform, err)
		}
		// Each part repeats the parent header, already written above.
		text := strings.Replace(part.buf.String(), "[transforms]\n", "", 1)
		w.WriteString("\n")
		w.WriteString(text)
	}
	if c.ErrorHandling != nil {
		// Written even when empty, so the section stays present.
		w.WriteString("\n[error_handling]\n")
		if err := encode("error_handling", doc["error_handling"].(map[string]any)); err != nil {
			return nil, err
		}
	}
	if c.RateLimit != nil {
		w.WriteString("\n[rate_limit]\n")
		if err := encode("rate_limit", doc["rate_limit"].(map[string]any)); err != nil {
			return nil, err
		}
	}
	if c.PluginConfig != nil {
		w.WriteString("\n")
		if err := encode("plugin_config", map[string]any{"plugin_config": doc["plugin_config"]}); err != nil {
			return nil, err
		}
	}
	if w.over {
		return nil, renderTooLarge(name, "transforms", limit) // only the transforms' text is copied in unchecked
	}
	return w.buf.Bytes(), nil
}

func encodeTOMLTo(w io.Writer, v map[string]any) error {
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	return enc.Encode(v)
}

func tomlString(s string) string {
	b, _ := json.Marshal(s) // a JSON string literal is a valid TOML basic string
	return string(b)
}

func checkNoNull(v any, section string) error {
	return findNull(v, []string{section})
}

// findNull is checkNoNull with the path as steps, joined only for the error: joining at every
// level would cost the square of a deep document's key lengths.
func findNull(v any, path []string) error {
	switch t := v.(type) {
	case nil:
		return fmt.Errorf("null at %s", strings.Join(path, ""))
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if err := findNull(t[k], append(path, "."+k)); err != nil {
				return err
			}
		}
	case []any:
		if mixesEmptyKeyTables(t) {
			return fmt.Errorf("%s: an array mixing values with a table that has an empty key (BurntSushi/toml would read back only the tables)", strings.Join(path, ""))
		}
		for i, e := range t {
			if err := findNull(e, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
				return err
			}
		}
	}
	return nil
}

// mixesEmptyKeyTables reports whether an array holds both a table with an empty key ("") and
// an element that is not a table: the TOML parser we use drops every non-table element of such
// an array (and the nesting of an array around it), so it cannot be stored without changing it.
func mixesEmptyKeyTables(a []any) bool {
	emptyKeyTable, nonTable := false, false
	for _, e := range a {
		m, isTable := e.(map[string]any)
		if !isTable {
			nonTable = true
			continue
		}
		if _, ok := m[""]; ok {
			emptyKeyTable = true
		}
	}
	return emptyKeyTable && nonTable
}

// MarshalDocument writes the connector file in format "toml" or "json"
// (JSON: the same keys as the TOML file, `type` included), the forms
// ParseConnector reads and IGGY_CONNECTOR_CONFIG accepts.
func (c Connector) MarshalDocument(format string) ([]byte, error) {
	switch format {
	case "toml":
		return c.MarshalTOML()
	case "json":
		obj := orderedObject{{"type", string(c.Kind)}}
		obj = append(obj, c.bodyObject(true)...)
		// The document keeps stream keys it does not know, as the TOML
		// form does; the API shapes below do not.
		for i, member := range obj {
			if member.key != "streams" {
				continue
			}
			streams := make([]any, len(c.Streams))
			for j, s := range c.Streams {
				streams[j] = append(s.jsonObject(c.Kind), s.extraOptions(c.Kind)...)
			}
			obj[i].value = streams
		}
		return appendJSON(nil, obj), nil
	}
	return nil, fmt.Errorf("%w: unknown connector config format %q, expected toml or json", ErrInvalidConnector, format)
}

// MarshalJSON writes the connector as upstream's SinkConfig/SourceConfig
// JSON (docs/config.md §5.2, §6.2): the body keys without `type`, every optional
// key present, null when unset.
func (c Connector) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, c.bodyObject(true)), nil
}

// VersionJSON is the version object of the config REST routes (§6.2): the
// MarshalJSON object plus "active".
func (c Connector) VersionJSON(active bool) []byte {
	obj := append(c.bodyObject(true), kv{"active", active})
	return appendJSON(nil, obj)
}

// CreateBodyJSON is the body of a create request to an HTTP config provider
// (§5.2): the body keys without key and version, all present, null when unset.
func (c Connector) CreateBodyJSON() []byte {
	return appendJSON(nil, c.bodyObject(false))
}

func (c Connector) bodyObject(withIdentity bool) orderedObject {
	var obj orderedObject
	if withIdentity {
		obj = append(obj, kv{"key", c.Key})
	}
	obj = append(obj, kv{"enabled", c.Enabled})
	if withIdentity {
		obj = append(obj, kv{"version", c.Version})
	}
	obj = append(obj, kv{"name", c.Name}, kv{"path", c.Path})
	if c.Transforms == nil {
		obj = append(obj, kv{"transforms", nil})
	} else {
		var ts orderedObject
		for _, name := range c.TransformOrder {
			if body, ok := c.Transforms[name]; ok {
				ts = append(ts, kv{name, body})
			}
		}
		obj = append(obj, kv{"transforms", ts})
	}
	streams := make([]any, len(c.Streams))
	for i, s := range c.Streams {
		streams[i] = s.jsonObject(c.Kind)
	}
	obj = append(obj, kv{"streams", streams})
	if c.PluginConfigFormat == "" {
		obj = append(obj, kv{"plugin_config_format", nil})
	} else {
		obj = append(obj, kv{"plugin_config_format", c.PluginConfigFormat})
	}
	if c.PluginConfig == nil {
		obj = append(obj, kv{"plugin_config", nil})
	} else {
		obj = append(obj, kv{"plugin_config", c.PluginConfig})
	}
	obj = append(obj, kv{"verbose", c.Verbose}, kv{"benchmark", c.Benchmark})
	// error_handling is ours; shown only when written, so upstream's shape is unchanged.
	if c.ErrorHandling != nil {
		obj = append(obj, kv{"error_handling", c.ErrorHandling.jsonObject()})
	}
	if c.RateLimit != nil { // ours too, likewise
		obj = append(obj, kv{"rate_limit", c.RateLimit.jsonObject()})
	}
	return obj
}

func (s StreamEntry) jsonObject(kind ConnectorKind) orderedObject {
	opt := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	obj := orderedObject{{"stream", s.Stream}}
	if kind == KindSink {
		topics := s.Topics
		if topics == nil {
			topics = []string{}
		}
		obj = append(obj, kv{"topics", topics})
	} else {
		obj = append(obj, kv{"topic", s.Topic})
	}
	d := s.Declared
	obj = append(obj, kv{"schema", s.Schema}, kv{"avro_schema_json", opt(d.AvroSchemaJSON)},
		kv{"avro_schema_path", opt(d.AvroSchemaPath)})
	if d.BatchLength == nil {
		obj = append(obj, kv{"batch_length", nil})
	} else {
		obj = append(obj, kv{"batch_length", *d.BatchLength})
	}
	if kind == KindSink {
		obj = append(obj, kv{"poll_interval", opt(d.PollInterval)}, kv{"consumer_group", opt(d.ConsumerGroup)})
		// offset_commit is ours; shown only when written, so upstream's
		// shape is unchanged for upstream configs.
		if d.OffsetCommit != nil {
			obj = append(obj, kv{"offset_commit", *d.OffsetCommit})
		}
		if d.IdlePollMax != nil { // ours too, likewise
			obj = append(obj, kv{"idle_poll_max", *d.IdlePollMax})
		}
		if d.IdleAfter != nil {
			obj = append(obj, kv{"idle_after", *d.IdleAfter})
		}
	} else {
		obj = append(obj, kv{"linger_time", opt(d.LingerTime)})
	}
	return obj
}

// streamKeys are the stream keys this package reads for a kind.
func streamKeys(kind ConnectorKind) []string {
	common := []string{"stream", "schema", "avro_schema_json", "avro_schema_path", "batch_length"}
	if kind == KindSink {
		return append(common, "topics", "poll_interval", "idle_poll_max", "idle_after", "consumer_group", "offset_commit")
	}
	return append(common, "topic", "linger_time")
}

// extraOptions are the stream table's other keys, sorted.
func (s StreamEntry) extraOptions(kind ConnectorKind) orderedObject {
	var extra orderedObject
	known := streamKeys(kind)
	for _, k := range sortedKeys(s.Options) {
		if !slices.Contains(known, k) {
			extra = append(extra, kv{k, s.Options[k]})
		}
	}
	return extra
}

type kv struct {
	key   string
	value any
}

// orderedObject is a JSON object that keeps its member order.
type orderedObject []kv

// appendJSON writes compact JSON without HTML escaping (as serde_json
// does). Maps are written with sorted keys; values are this package's
// JSON-like types.
func appendJSON(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case orderedObject:
		dst = append(dst, '{')
		for i, m := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, m.key)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.value)
		}
		return append(dst, '}')
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range sortedKeys(t) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, t[k])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case []string:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, e)
		}
		return append(dst, ']')
	case string:
		return appendJSONString(dst, t)
	case bool:
		return strconv.AppendBool(dst, t)
	case int64:
		return strconv.AppendInt(dst, t, 10)
	case uint64:
		return strconv.AppendUint(dst, t, 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(t), 10)
	case int:
		return strconv.AppendInt(dst, int64(t), 10)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return append(dst, "null"...)
		}
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			// serde_json keeps the fraction marker on whole floats.
			return strconv.AppendFloat(dst, t, 'f', 1, 64)
		}
		return strconv.AppendFloat(dst, t, 'g', -1, 64)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return appendJSONString(dst, fmt.Sprint(v))
	}
	return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...)
}

func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // strings always encode
	return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...)
}
