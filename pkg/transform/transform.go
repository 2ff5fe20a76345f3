package transform

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
)

// Transform is one configured transform. Apply changes m in place and
// returns keep=false to drop the message on purpose (counted as filtered) or
// an error when it cannot process the message (counted as an error); a
// message is never both.
type Transform interface {
	Name() string
	Apply(m *codec.Message) (keep bool, err error)
}

// Sentinel errors wrapped by Build.
var (
	// ErrUnknownTransform: a [transforms] key that is not a transform type.
	ErrUnknownTransform = errors.New("unknown transform type")
	// ErrNotSupported: a known transform type this build cannot run yet.
	ErrNotSupported = errors.New("transform not supported yet")
	// ErrInvalidConfig: a transform body with a missing or ill-typed key or
	// an invalid value (bad regex, empty unwrap field, ...).
	ErrInvalidConfig = errors.New("invalid transform config")
)

// Transform type names, in upstream's enum order (the fallback order).
const (
	AddFields         = "add_fields"
	DeleteFields      = "delete_fields"
	FilterFields      = "filter_fields"
	UpdateFields      = "update_fields"
	ProtoConvert      = "proto_convert"
	FlatBufferConvert = "flat_buffer_convert"
	AvroConvert       = "avro_convert"
	UnwrapEnvelope    = "unwrap_envelope"
)

var enumOrder = []string{AddFields, DeleteFields, FilterFields, UpdateFields, ProtoConvert, FlatBufferConvert, AvroConvert, UnwrapEnvelope}

// builders construct each type from its config table.
var builders = map[string]func(table) (Transform, error){
	AddFields:         newAddFields,
	DeleteFields:      newDeleteFields,
	FilterFields:      newFilterFields,
	UpdateFields:      newUpdateFields,
	ProtoConvert:      newProtoConvert,
	FlatBufferConvert: newFlatBufferConvert,
	AvroConvert:       newAvroConvert,
	UnwrapEnvelope:    newUnwrapEnvelope,
}

// Build turns the decoded [transforms] table of a connector into the list of
// enabled transforms. cfg maps a transform type to its table; order lists the
// table's keys in config-file order (docs/architecture.md, decision 2: transforms run in that
// order). Keys of cfg missing from order follow in upstream's enum order, so
// a nil order gives the enum order.
//
// Per type, as upstream: a nil value means disabled; otherwise the table must
// have a boolean "enabled"; disabled entries are skipped without looking at
// the rest; other unknown keys are ignored. Errors name the transform and the
// key and wrap ErrUnknownTransform, ErrNotSupported or ErrInvalidConfig.
func Build(cfg map[string]any, order []string) ([]Transform, error) {
	names, err := buildOrder(cfg, order)
	if err != nil {
		return nil, err
	}
	var out []Transform
	for _, name := range names {
		raw := cfg[name]
		if raw == nil {
			continue
		}
		tbl, ok := asTable(raw)
		if !ok {
			return nil, fmt.Errorf("transform %q: %w: expected a table, got %s", name, ErrInvalidConfig, typeName(raw))
		}
		enabledRaw, present := tbl["enabled"]
		if !present {
			return nil, fmt.Errorf("transform %q: %w: missing required key \"enabled\"", name, ErrInvalidConfig)
		}
		enabled, ok := enabledRaw.(bool)
		if !ok {
			return nil, fmt.Errorf("transform %q: %w: \"enabled\" must be a boolean, got %s", name, ErrInvalidConfig, typeName(enabledRaw))
		}
		if !enabled {
			continue
		}
		build, ok := builders[name]
		if !ok {
			return nil, fmt.Errorf("transform %q: %w", name, ErrNotSupported)
		}
		t, err := build(tbl)
		if err != nil {
			return nil, fmt.Errorf("transform %q: %w", name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func buildOrder(cfg map[string]any, order []string) ([]string, error) {
	var unknown []string
	for name := range cfg {
		if !slices.Contains(enumOrder, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%w %s (expected one of %s)", ErrUnknownTransform,
			quoteAll(unknown), strings.Join(enumOrder, ", "))
	}
	names := make([]string, 0, len(cfg))
	for _, name := range order {
		if _, ok := cfg[name]; !ok || slices.Contains(names, name) {
			continue // not configured, or listed twice: the first place counts
		}
		names = append(names, name)
	}
	for _, name := range enumOrder {
		if _, ok := cfg[name]; ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}

// Run applies ts to m in order and stops at the first transform that drops
// the message (keep=false, nil error) or fails (keep=false and an error
// naming the transform). A transform that panics on the message fails it
// with an error wrapping panicerr.ErrPanic; m may then be half changed.
func Run(ts []Transform, m *codec.Message) (keep bool, err error) {
	for _, t := range ts {
		keep, err := apply(t, m)
		if err != nil {
			return false, fmt.Errorf("transform %s: %w", t.Name(), err)
		}
		if !keep {
			return false, nil
		}
	}
	return true, nil
}

func apply(t Transform, m *codec.Message) (keep bool, err error) {
	defer panicerr.Catch(&err)
	return t.Apply(m)
}

// jsonObject returns the payload's top-level JSON object, or nil when the
// payload is anything else; the field transforms pass such payloads through.
func jsonObject(m *codec.Message) *codec.OrderedMap {
	if m.Payload.Kind != codecJSON {
		return nil
	}
	obj, _ := m.Payload.JSON.(*codec.OrderedMap)
	return obj
}
