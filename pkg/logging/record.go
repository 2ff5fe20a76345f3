package logging

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Origins of a log record: who wrote the line.
const (
	OriginRunner     = "runner"     // the runner process itself
	OriginSupervisor = "supervisor" // the supervisor, about this connector
	OriginPlugin     = "plugin"     // the connector's plugin, through the log callback
)

// RecordTimeLayout is RFC 3339 with nanoseconds, every digit written, so records sort as text.
const RecordTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Record is one log record as the logs routes answer it: the same shape for runner, plugin and
// supervisor lines, in spawn and fleet modes (Replica is set by a fleet merge only).
type Record struct {
	Time    string         `json:"time"`  // RecordTimeLayout, UTC
	Level   string         `json:"level"` // ERROR, WARN, INFO, DEBUG or TRACE
	Target  string         `json:"target"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields"`
	Origin  string         `json:"origin"`
	Replica string         `json:"replica,omitempty"`
}

// Attributes a record leaves out of its fields: they name the connector (the route already does)
// or are the record's target.
var recordOmits = map[string]bool{KeyConnectorKey: true, "connector_type": true, KeyTarget: true, KeyConnectorTarget: true}

// RecordLevel is the record level word of l: every slog level maps to the nearest of the five
// at or below it (INFO+2 is INFO, below DEBUG is TRACE).
func RecordLevel(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARN"
	case l >= slog.LevelInfo:
		return "INFO"
	case l >= slog.LevelDebug:
		return "DEBUG"
	}
	return "TRACE"
}

// ParseRecordLevel reads a level a client asks for (trace, debug, info, warn or warning, error;
// any case) as the lowest slog level it shows.
func ParseRecordLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trace":
		return LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("level %q: want trace, debug, info, warn or error", s)
}

// NewRecord builds a record from a log line's parts. The target is the "target" attribute, else
// the plugin's "connector_target" (origin then becomes OriginPlugin), else defaultTarget. Values
// of attributes named like secrets (secrets.Match) are masked, and the userinfo of URLs in the
// message and in string values, as the startup line masks them.
func NewRecord(t time.Time, level slog.Level, msg string, attrs []slog.Attr, origin, defaultTarget string, secrets config.SecretKeys) Record {
	r := Record{Time: t.UTC().Format(RecordTimeLayout), Level: RecordLevel(level), Target: defaultTarget,
		Message: config.MaskURLUserinfo(msg), Fields: map[string]any{}, Origin: origin}
	r.addFields(attrs, defaultTarget, secrets)
	return r
}

func (r *Record) addFields(attrs []slog.Attr, defaultTarget string, secrets config.SecretKeys) {
	for _, a := range attrs {
		if a.Key == "" && a.Value.Kind() == slog.KindGroup {
			r.addFields(a.Value.Group(), defaultTarget, secrets) // an inlined group
			continue
		}
		switch a.Key {
		case KeyTarget:
			r.Target = a.Value.Resolve().String()
		case KeyConnectorTarget:
			if r.Target == defaultTarget {
				r.Target = a.Value.Resolve().String()
			}
			r.Origin = OriginPlugin
		}
		if recordOmits[a.Key] || a.Key == "" {
			continue
		}
		r.Fields[a.Key] = fieldValue(a.Key, a.Value, secrets, 0)
	}
}

// fieldValue is an attribute's value as JSON-ready data, masked as the startup line masks: the
// runtime keys that line shows are kept as it shows them (config.LoggedRuntimeKey).
func fieldValue(key string, v slog.Value, secrets config.SecretKeys, depth int) any {
	v = v.Resolve()
	if v.Kind() != slog.KindGroup && secrets.Match(key) && !isEmptyValue(v) && !config.LoggedRuntimeKey(key) {
		return config.MaskedValue
	}
	switch v.Kind() {
	case slog.KindGroup:
		m := map[string]any{}
		if depth > maxJSONDepth {
			return m
		}
		for _, a := range v.Group() {
			m[a.Key] = fieldValue(a.Key, a.Value, secrets, depth+1)
		}
		return m
	case slog.KindString:
		return config.MaskURLUserinfo(v.String())
	case slog.KindTime:
		return v.Time().UTC().Format(time.RFC3339Nano)
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	}
	switch a := v.Any().(type) {
	case error:
		return config.MaskURLUserinfo(a.Error())
	case fmt.Stringer:
		return config.MaskURLUserinfo(a.String())
	case nil:
		return nil
	case map[string]any:
		return secrets.Mask(a)
	case []any, json.Number:
		return a
	default:
		if b, err := json.Marshal(a); err == nil {
			return json.RawMessage(b)
		}
		return config.MaskURLUserinfo(fmt.Sprint(a))
	}
}

func isEmptyValue(v slog.Value) bool {
	return (v.Kind() == slog.KindString && v.String() == "") || (v.Kind() == slog.KindAny && v.Any() == nil)
}

// JSON is the record's JSON, one line.
func (r Record) JSON() []byte {
	b, err := json.Marshal(r)
	if err != nil { // a field value that does not marshal after all: keep the record, not the fields
		r.Fields = map[string]any{"fields_error": err.Error()}
		b, _ = json.Marshal(r)
	}
	return b
}
