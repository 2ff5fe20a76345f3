package transform

import (
	"fmt"
	"slices"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

// fieldValue is a configured value: static JSON copied into each message, or
// a computed kind generated per field per message.
type fieldValue struct {
	static   any
	computed computedKind // "" for a static value
}

func (v fieldValue) produce() any {
	if v.computed != "" {
		return v.computed.generate()
	}
	// Each message gets its own copy, so later transforms that edit an
	// object value cannot reach into the configuration or other messages.
	return codec.Clone(v.static)
}

// parseFieldValue reads {static = <any>} or {computed = "<kind>"}.
func parseFieldValue(v any, where string) (fieldValue, error) {
	tag, inner, ok := singleEntry(v)
	if !ok {
		return fieldValue{}, invalid(`%svalue must be a table with exactly one key, "static" or "computed", got %s`, where, typeName(v))
	}
	switch tag {
	case "static":
		j, err := codec.JSONFromGo(inner)
		if err != nil {
			return fieldValue{}, invalid("%svalue.static: %v", where, err)
		}
		return fieldValue{static: j}, nil
	case "computed":
		name, isString := inner.(string)
		if !isString {
			return fieldValue{}, invalid("%svalue.computed must be a string, got %s", where, typeName(inner))
		}
		kind, err := parseComputedKind(name)
		if err != nil {
			return fieldValue{}, invalid("%svalue.computed: %v", where, err)
		}
		return fieldValue{computed: kind}, nil
	default:
		return fieldValue{}, invalid(`%svalue has unknown variant %q (expected "static" or "computed")`, where, tag)
	}
}

// condition gates an update_fields field.
type condition int

const (
	always condition = iota
	keyExists
	keyNotExists
)

type field struct {
	key   string
	value fieldValue
	when  condition
}

// parseFields reads the "fields" array of add_fields/update_fields. Only
// update_fields takes a condition.
func parseFields(t table, withCondition bool) ([]field, error) {
	list, err := optionalList(t, "fields")
	if err != nil {
		return nil, err
	}
	fields := make([]field, 0, len(list))
	for i, e := range list {
		where := fmt.Sprintf("fields[%d]: ", i)
		ft, ok := asTable(e)
		if !ok {
			return nil, invalid("%smust be a table with key and value, got %s", where, typeName(e))
		}
		key, err := requiredString(ft, "key", where)
		if err != nil {
			return nil, err
		}
		rawValue, present := ft["value"]
		if !present {
			return nil, invalid("%smissing required key \"value\"", where)
		}
		value, err := parseFieldValue(rawValue, where)
		if err != nil {
			return nil, err
		}
		f := field{key: key, value: value}
		if withCondition {
			if f.when, err = parseCondition(ft["condition"], where); err != nil {
				return nil, err
			}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func parseCondition(v any, where string) (condition, error) {
	if v == nil {
		return always, nil
	}
	switch name, _ := v.(string); name {
	case "always":
		return always, nil
	case "key_exists":
		return keyExists, nil
	case "key_not_exists":
		return keyNotExists, nil
	}
	return 0, invalid(`%scondition must be "always", "key_exists" or "key_not_exists", got %v`, where, describe(v))
}

// addFields sets each configured key, overwriting existing values.
type addFields struct {
	fields []field
	text   addFieldsText // for ApplyJSONText (text.go)
}

func newAddFields(t table) (Transform, error) {
	fields, err := parseFields(t, false)
	if err != nil {
		return nil, err
	}
	return &addFields{fields: fields, text: newAddFieldsText(fields)}, nil
}

func (*addFields) Name() string { return AddFields }

func (a *addFields) Apply(m *codec.Message) (bool, error) {
	if obj := jsonObject(m); obj != nil {
		for _, f := range a.fields {
			obj.Set(f.key, f.value.produce())
		}
	}
	return true, nil
}

// updateFields sets each configured key whose condition holds against the
// object as it is at that point (earlier fields of the same list count).
type updateFields struct{ fields []field }

func newUpdateFields(t table) (Transform, error) {
	fields, err := parseFields(t, true)
	if err != nil {
		return nil, err
	}
	return &updateFields{fields: fields}, nil
}

func (*updateFields) Name() string { return UpdateFields }

func (u *updateFields) Apply(m *codec.Message) (bool, error) {
	obj := jsonObject(m)
	if obj == nil {
		return true, nil
	}
	for _, f := range u.fields {
		switch f.when {
		case keyExists:
			if !obj.Has(f.key) {
				continue
			}
		case keyNotExists:
			if obj.Has(f.key) {
				continue
			}
		}
		obj.Set(f.key, f.value.produce())
	}
	return true, nil
}

// deleteFields removes the listed top-level keys.
type deleteFields struct {
	keys []string // few keys: a scan beats hashing
	set  map[string]struct{}
}

// deleteScanLimit is the key count up to which deleteFields scans a slice.
const deleteScanLimit = 8

func newDeleteFields(t table) (Transform, error) {
	keys, err := stringList(t, "fields")
	if err != nil {
		return nil, err
	}
	if len(keys) <= deleteScanLimit {
		return &deleteFields{keys: keys}, nil
	}
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return &deleteFields{set: set}, nil
}

func (*deleteFields) Name() string { return DeleteFields }

func (d *deleteFields) Apply(m *codec.Message) (bool, error) {
	obj := jsonObject(m)
	if obj == nil || (len(d.keys) == 0 && len(d.set) == 0) {
		return true, nil
	}
	obj.Retain(func(key string, _ any) bool { return !d.listed(key) })
	return true, nil
}

func (d *deleteFields) listed(key string) bool {
	if d.set != nil {
		_, ok := d.set[key]
		return ok
	}
	return slices.Contains(d.keys, key)
}

// unwrapEnvelope replaces the payload with the value of one top-level key
// when the object has it; otherwise the message passes unchanged.
type unwrapEnvelope struct{ field string }

func newUnwrapEnvelope(t table) (Transform, error) {
	name, err := requiredString(t, "field", "")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, invalid(`"field" must not be empty`)
	}
	return &unwrapEnvelope{field: name}, nil
}

func (*unwrapEnvelope) Name() string { return UnwrapEnvelope }

func (u *unwrapEnvelope) Apply(m *codec.Message) (bool, error) {
	if obj := jsonObject(m); obj != nil {
		if inner, ok := obj.Get(u.field); ok {
			m.Payload.JSON = inner
		}
	}
	return true, nil
}
