package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ParseOptions tune ParseConnectorWith.
type ParseOptions struct {
	// Env, when non-nil, is searched for this connector's
	// IGGY_CONNECTORS_<SINK|SOURCE>_<KEY>_* overrides (docs/config.md §4.5),
	// applied as upstream does: typed fields before decoding, plugin_config
	// keys after.
	Env []string
	// DeferStartChecks accepts bad poll_interval/idle_poll_max/idle_after/linger_time texts (leaving
	// the effective duration at the default) so a file upstream loads is not
	// refused; Connector.CheckStart reports them when the connector starts.
	DeferStartChecks bool
}

// ParseConnector decodes one connector document in format "toml" or "json"
// (the JSON form has the same keys, `type` included). name identifies the
// source (usually the file path) in errors, which also name the key. Schema
// names, plugin_config_format and transform names are checked here; what
// each transform's table holds is left to pkg/transform.
func ParseConnector(name string, data []byte, format string) (Connector, error) {
	return ParseConnectorWith(name, data, format, ParseOptions{})
}

// ParseConnectorWith is ParseConnector with options.
func ParseConnectorWith(name string, data []byte, format string, opts ParseOptions) (Connector, error) {
	doc, order, err := readDocument(name, data, format)
	if err != nil {
		return Connector{}, err
	}
	kind, key, err := identity(name, doc)
	if err != nil {
		return Connector{}, err
	}
	return finishDecode(name, doc, order, kind, key, opts)
}

// ParseConnectorBody decodes the JSON object an HTTP config provider serves
// for one connector version (docs/config.md §5.2 SinkConfig/SourceConfig): the
// document keys without `type`. A `type` that is present must equal kind.
func ParseConnectorBody(name string, kind ConnectorKind, data []byte) (Connector, error) {
	doc, order, err := readDocument(name, data, "json")
	if err != nil {
		return Connector{}, err
	}
	return decodeBody(name, kind, doc, order)
}

// DecodeConnectorValue is ParseConnectorBody for an already decoded JSON
// value (as found inside a larger response). order may be nil.
func DecodeConnectorValue(name string, kind ConnectorKind, value any, transformOrder []string) (Connector, error) {
	doc, ok := normalizeValue(value).(map[string]any)
	if !ok {
		return Connector{}, fmt.Errorf("%w: %s: expected a JSON object, got %s", ErrInvalidConnector, name, describeValue(value))
	}
	return decodeBody(name, kind, doc, transformOrder)
}

func decodeBody(name string, kind ConnectorKind, doc map[string]any, order []string) (Connector, error) {
	if t, ok := doc["type"]; ok && t != nil {
		if t != string(kind) {
			return Connector{}, fmt.Errorf("%w: %s: key type: got %v, expected %q", ErrInvalidConnector, name, t, kind)
		}
	}
	doc["type"] = string(kind)
	key, ok := doc["key"].(string)
	if !ok {
		return Connector{}, fmt.Errorf("%w: %s: key key: required string is missing", ErrInvalidConnector, name)
	}
	return finishDecode(name, doc, order, kind, key, ParseOptions{DeferStartChecks: true})
}

// ParseCreateBody decodes the body of POST /{sinks|sources}/{key}/configs
// (docs/config.md §6.1): enabled, name, path and streams are required; key and
// version are not part of it (key comes from the URL, version is assigned
// when the provider stores it). Stricter than upstream, durations must parse
// so that a config that cannot start is not stored.
func ParseCreateBody(kind ConnectorKind, key string, data []byte) (Connector, error) {
	if err := ValidKey(key); err != nil {
		return Connector{}, err
	}
	name := fmt.Sprintf("new %s config %q", kind, key)
	doc, order, err := readDocument(name, data, "json")
	if err != nil {
		return Connector{}, err
	}
	doc["type"] = string(kind)
	doc["key"] = key
	doc["version"] = int64(0)
	return finishDecode(name, doc, order, kind, key, ParseOptions{})
}

func finishDecode(name string, doc map[string]any, order []string, kind ConnectorKind, key string, opts ParseOptions) (Connector, error) {
	if err := checkBounds(name, doc); err != nil {
		return Connector{}, err
	}
	if opts.Env != nil {
		if err := applyTypedEnv(doc, kind, key, opts.Env); err != nil {
			return Connector{}, fmt.Errorf("%w: %s: %w", ErrInvalidConnector, name, err)
		}
	}
	c, err := decodeDoc(name, doc, order, opts.DeferStartChecks)
	if err != nil {
		return Connector{}, err
	}
	if opts.Env != nil {
		applyPluginConfigEnv(&c, kind, key, opts.Env)
		// Overrides are JSON values of their own: the document they made is bounded too.
		if err := checkBounds(name, c.document()); err != nil {
			return Connector{}, err
		}
	}
	return c, nil
}

// readDocument decodes TOML or JSON into normalized values, and finds the
// file order of the transforms table.
func readDocument(name string, data []byte, format string) (map[string]any, []string, error) {
	switch format {
	case "toml":
		var raw map[string]any
		md, err := toml.Decode(string(data), &raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: parsing TOML file '%s' raised an error: %w", ErrInvalidConnector, name, err)
		}
		var order []string
		for _, k := range md.Keys() {
			if len(k) >= 2 && k[0] == "transforms" && !slices.Contains(order, k[1]) {
				order = append(order, k[1])
			}
		}
		return normalizeValue(raw).(map[string]any), order, nil
	case "json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var raw any
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: malformed JSON: %w", ErrInvalidConnector, name, err)
		}
		if dec.More() {
			return nil, nil, fmt.Errorf("%w: %s: malformed JSON: data after the top-level value", ErrInvalidConnector, name)
		}
		doc, ok := raw.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s: expected a JSON object, got %s", ErrInvalidConnector, name, describeValue(normalizeValue(raw)))
		}
		return normalizeValue(doc).(map[string]any), jsonTransformOrder(data), nil
	}
	return nil, nil, fmt.Errorf("%w: %s: unknown connector config format %q, expected toml or json", ErrInvalidConnector, name, format)
}

// jsonTransformOrder returns the member names of the top-level "transforms"
// object in the order they are written (Go maps forget it).
func jsonTransformOrder(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if t != "transforms" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil
		}
		var order []string
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return order
			}
			if k, ok := t.(string); ok {
				order = append(order, k)
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return order
			}
		}
		return order
	}
	return nil
}

// normalizeValue converts decoded TOML/JSON into this package's JSON-like
// types, always copying containers.
func normalizeValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = normalizeValue(e)
		}
		return m
	case []map[string]any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = normalizeValue(e)
		}
		return s
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = normalizeValue(e)
		}
		return s
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(t.String(), 64) // out-of-range becomes ±Inf, rejected below
		return f
	case int:
		return int64(t)
	case time.Time:
		return t.Format(time.RFC3339Nano)
	}
	return v
}

// identity reads the two keys every file must have before anything else.
func identity(name string, doc map[string]any) (ConnectorKind, string, error) {
	t, ok := doc["type"].(string)
	if !ok {
		return "", "", fmt.Errorf("%w: %s: key type: required (\"sink\" or \"source\") and missing or not a string", ErrInvalidConnector, name)
	}
	kind, err := ParseKind(t)
	if err != nil {
		return "", "", fmt.Errorf("%s: key type: %w", name, err)
	}
	key, ok := doc["key"].(string)
	if !ok {
		return "", "", fmt.Errorf("%w: %s: key key: required and missing or not a string", ErrInvalidConnector, name)
	}
	return kind, key, nil
}

// fieldReader reads typed keys of one table and names them in errors.
type fieldReader struct {
	file   string
	prefix string // "" or "streams[0]."
	table  map[string]any
}

func (r fieldReader) fail(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: key %s%s: %s", ErrInvalidConnector, r.file, r.prefix, key, fmt.Sprintf(format, args...))
}

// get returns the value; JSON null counts as absent.
func (r fieldReader) get(key string, required bool) (any, bool, error) {
	v, ok := r.table[key]
	if !ok || v == nil {
		if required {
			return nil, false, r.fail(key, "required and missing")
		}
		return nil, false, nil
	}
	return v, true, nil
}

func (r fieldReader) str(key string, required bool) (*string, error) {
	v, ok, err := r.get(key, required)
	if !ok {
		return nil, err
	}
	s, isStr := v.(string)
	if !isStr {
		return nil, r.fail(key, "expected a string, got %s", describeValue(v))
	}
	return &s, nil
}

func (r fieldReader) enum(key string, required bool, allowed []string) (*string, error) {
	s, err := r.str(key, required)
	if err != nil || s == nil {
		return s, err
	}
	if !slices.Contains(allowed, *s) {
		return nil, r.fail(key, "unknown value %q, expected one of %s", *s, strings.Join(allowed, ", "))
	}
	return s, nil
}

func (r fieldReader) boolean(key string, required bool) (bool, error) {
	v, ok, err := r.get(key, required)
	if !ok {
		return false, err
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, r.fail(key, "expected a bool, got %s", describeValue(v))
	}
	return b, nil
}

func (r fieldReader) unsigned(key string, required bool, limit uint64) (*uint64, error) {
	v, ok, err := r.get(key, required)
	if !ok {
		return nil, err
	}
	var n uint64
	switch t := v.(type) {
	case int64:
		if t < 0 {
			return nil, r.fail(key, "expected an unsigned integer, got %d", t)
		}
		n = uint64(t)
	case uint64:
		n = t
	default:
		return nil, r.fail(key, "expected an unsigned integer, got %s", describeValue(v))
	}
	if n > limit {
		return nil, r.fail(key, "%d is larger than %d", n, limit)
	}
	return &n, nil
}

func (r fieldReader) strings(key string, required bool) ([]string, error) {
	v, ok, err := r.get(key, required)
	if !ok {
		return nil, err
	}
	items, isArr := v.([]any)
	if !isArr {
		return nil, r.fail(key, "expected an array of strings, got %s", describeValue(v))
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, isStr := it.(string)
		if !isStr {
			return nil, r.fail(fmt.Sprintf("%s[%d]", key, i), "expected a string, got %s", describeValue(it))
		}
		out[i] = s
	}
	return out, nil
}

func decodeDoc(file string, doc map[string]any, order []string, deferStart bool) (Connector, error) {
	kind, key, err := identity(file, doc)
	if err != nil {
		return Connector{}, err
	}
	if err := ValidKey(key); err != nil {
		return Connector{}, fmt.Errorf("%s: key key: %w", file, err)
	}
	r := fieldReader{file: file, table: doc}
	c := Connector{Kind: kind, Key: key}
	if c.Enabled, err = r.boolean("enabled", true); err != nil {
		return Connector{}, err
	}
	version, err := r.unsigned("version", true, math.MaxUint64)
	if err != nil {
		return Connector{}, err
	}
	c.Version = *version
	name, err := r.str("name", true)
	if err != nil {
		return Connector{}, err
	}
	c.Name = *name
	path, err := r.str("path", true)
	if err != nil {
		return Connector{}, err
	}
	c.Path = *path
	if f, err := r.enum("plugin_config_format", false, PluginConfigFormats); err != nil {
		return Connector{}, err
	} else if f != nil {
		c.PluginConfigFormat = *f
	}
	if v, ok, _ := r.get("plugin_config", false); ok {
		table, isTable := v.(map[string]any)
		if !isTable {
			return Connector{}, r.fail("plugin_config", "expected a table, got %s", describeValue(v))
		}
		if err := checkFinite(table); err != nil {
			return Connector{}, r.fail("plugin_config", "%v", err)
		}
		c.PluginConfig = table
	}
	if c.Verbose, err = r.boolean("verbose", false); err != nil {
		return Connector{}, err
	}
	if c.Benchmark, err = r.boolean("benchmark", false); err != nil {
		return Connector{}, err
	}
	if err := decodeTransforms(r, &c, order); err != nil {
		return Connector{}, err
	}
	if c.ErrorHandling, err = decodeErrorHandling(file, doc); err != nil {
		return Connector{}, err
	}
	if c.RateLimit, err = decodeRateLimit(file, doc); err != nil {
		return Connector{}, err
	}
	v, _, err := r.get("streams", true)
	if err != nil {
		return Connector{}, err
	}
	items, ok := v.([]any)
	if !ok {
		return Connector{}, r.fail("streams", "expected an array of tables ([[streams]]), got %s", describeValue(v))
	}
	c.Streams = make([]StreamEntry, 0, len(items))
	for i, it := range items {
		table, ok := it.(map[string]any)
		if !ok {
			return Connector{}, r.fail(fmt.Sprintf("streams[%d]", i), "expected a table, got %s", describeValue(it))
		}
		s, err := decodeStream(fieldReader{file: file, prefix: fmt.Sprintf("streams[%d].", i), table: table}, kind, key, deferStart)
		if err != nil {
			return Connector{}, err
		}
		c.Streams = append(c.Streams, s)
	}
	return c, nil
}

func decodeTransforms(r fieldReader, c *Connector, order []string) error {
	v, ok, _ := r.get("transforms", false)
	if !ok {
		return nil
	}
	table, isTable := v.(map[string]any)
	if !isTable {
		return r.fail("transforms", "expected a table keyed by transform name ([transforms.<name>]), got %s", describeValue(v))
	}
	c.Transforms = table
	// File order first, then any name the order did not see, sorted, so
	// the order is total even for hand-built documents.
	for _, name := range order {
		if _, ok := table[name]; ok && !slices.Contains(c.TransformOrder, name) {
			c.TransformOrder = append(c.TransformOrder, name)
		}
	}
	for _, name := range sortedKeys(table) {
		if !slices.Contains(c.TransformOrder, name) {
			c.TransformOrder = append(c.TransformOrder, name)
		}
	}
	for _, name := range c.TransformOrder {
		if !slices.Contains(TransformNames, name) {
			return r.fail("transforms."+name, "unknown transform %q, expected one of %s", name, strings.Join(TransformNames, ", "))
		}
		body, ok := table[name].(map[string]any)
		if !ok {
			return r.fail("transforms."+name, "expected a table, got %s", describeValue(table[name]))
		}
		if err := checkFinite(body); err != nil {
			return r.fail("transforms."+name, "%v", err)
		}
	}
	return nil
}

func decodeStream(r fieldReader, kind ConnectorKind, key string, deferStart bool) (StreamEntry, error) {
	var s StreamEntry
	s.Options = make(map[string]any, len(r.table))
	for k, v := range r.table {
		if v != nil { // JSON null means absent
			s.Options[k] = v
		}
	}
	stream, err := r.str("stream", true)
	if err != nil {
		return s, err
	}
	s.Stream = *stream
	if kind == KindSink {
		if s.Topics, err = r.strings("topics", true); err != nil {
			return s, err
		}
	} else {
		topic, err := r.str("topic", true)
		if err != nil {
			return s, err
		}
		s.Topic = *topic
	}
	schema, err := r.enum("schema", true, SchemaNames)
	if err != nil {
		return s, err
	}
	s.Schema = *schema
	d := &s.Declared
	if d.AvroSchemaJSON, err = r.str("avro_schema_json", false); err != nil {
		return s, err
	}
	if d.AvroSchemaPath, err = r.str("avro_schema_path", false); err != nil {
		return s, err
	}
	batch, err := r.unsigned("batch_length", false, math.MaxUint32)
	if err != nil {
		return s, err
	}
	if batch != nil {
		n := uint32(*batch)
		d.BatchLength = &n
	}
	if kind == KindSink {
		if d.PollInterval, err = r.str("poll_interval", false); err != nil {
			return s, err
		}
		if d.IdlePollMax, err = r.str("idle_poll_max", false); err != nil {
			return s, err
		}
		if d.IdleAfter, err = r.str("idle_after", false); err != nil {
			return s, err
		}
		if d.ConsumerGroup, err = r.str("consumer_group", false); err != nil {
			return s, err
		}
		if d.OffsetCommit, err = r.enum("offset_commit", false, []string{OffsetCommitAfterConsuming, OffsetCommitAfterPolling}); err != nil {
			return s, err
		}
	} else {
		if d.LingerTime, err = r.str("linger_time", false); err != nil {
			return s, err
		}
	}
	if err := s.resolve(kind, key, func(field, text string, perr error) error {
		if deferStart {
			return nil
		}
		return r.fail(field, "invalid duration %q: %v", text, perr)
	}); err != nil {
		return s, err
	}
	return s, nil
}

// resolve fills the effective fields from Declared and the defaults.
// onBadDuration decides whether a duration that does not parse is an error.
func (s *StreamEntry) resolve(kind ConnectorKind, key string, onBadDuration func(field, text string, err error) error) error {
	d := s.Declared
	s.AvroSchemaJSON, s.AvroSchemaPath = deref(d.AvroSchemaJSON), deref(d.AvroSchemaPath)
	s.BatchLength = DefaultBatchLength
	if d.BatchLength != nil {
		s.BatchLength = *d.BatchLength
	}
	parse := func(field string, text *string, fallback time.Duration) (time.Duration, error) {
		if text == nil {
			return fallback, nil
		}
		v, err := ParseDuration(*text)
		if err != nil {
			return fallback, onBadDuration(field, *text, err)
		}
		return v, nil
	}
	var err error
	if kind == KindSource {
		s.LingerTime, err = parse("linger_time", d.LingerTime, DefaultLingerTime)
		return err
	}
	if s.PollInterval, err = parse("poll_interval", d.PollInterval, DefaultPollInterval); err != nil {
		return err
	}
	if s.IdlePollMax, err = parse("idle_poll_max", d.IdlePollMax, DefaultIdlePollMax); err != nil {
		return err
	}
	if s.IdleAfter, err = parse("idle_after", d.IdleAfter, DefaultIdleAfter); err != nil {
		return err
	}
	s.ConsumerGroup = DefaultConsumerGroup(key)
	if d.ConsumerGroup != nil {
		s.ConsumerGroup = *d.ConsumerGroup
	}
	s.OffsetCommit = OffsetCommitAfterConsuming
	if d.OffsetCommit != nil {
		s.OffsetCommit = *d.OffsetCommit
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkFinite rejects NaN and infinities, which JSON cannot carry to a plugin.
func checkFinite(v any) error {
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("non-finite number %v cannot be passed to the plugin as JSON", t)
		}
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if err := checkFinite(t[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case []any:
		for i, e := range t {
			if err := checkFinite(e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// DetectFormat guesses the format of an inline connector document (as in
// IGGY_CONNECTOR_CONFIG): "json" when it starts with '{', else "toml".
func DetectFormat(data []byte) string {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		return "json"
	}
	return "toml"
}
