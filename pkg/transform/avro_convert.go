package transform

import (
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// avroConvert is avro_convert (docs/pipeline.md §4.4): JSON or JSON text to one
// Avro datum of the schema and back, Avro bytes to base64 text or raw bytes.
// Pairs it does not know pass the message through unchanged, as upstream.
type avroConvert struct {
	source, target postcard.Schema
	schema         *codec.AvroSchema // nil when neither schema_json nor schema_path is set
	mappings       map[string]string
}

func newAvroConvert(t table) (Transform, error) {
	c := convertConfig{t}
	var a avroConvert
	var err error
	if a.source, err = c.format("source_format"); err != nil {
		return nil, err
	}
	if a.target, err = c.format("target_format"); err != nil {
		return nil, err
	}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"pretty_json", "include_metadata", "strict_mode"} {
		if _, err := opts.requiredBool(key); err != nil {
			return nil, fmt.Errorf("conversion_options: %w", err)
		}
	}
	schemaJSON, err := c.optionalString("schema_json")
	if err != nil {
		return nil, err
	}
	schemaPath, err := c.optionalString("schema_path")
	if err != nil {
		return nil, err
	}
	if a.mappings, err = c.fieldMappings(); err != nil {
		return nil, err
	}
	// The schema is parsed once here; upstream re-reads it for every message
	// and, when it is bad, fails each one instead of the connector start.
	switch {
	case schemaJSON != "":
		if a.schema, err = codec.ParseAvroSchema(schemaJSON); err != nil {
			return nil, invalid("schema_json: %v", err)
		}
	case schemaPath != "":
		if a.schema, err = codec.LoadAvroSchema(schemaPath); err != nil {
			return nil, invalid("schema_path: %v", err)
		}
	}
	if a.schema == nil && a.needsSchema() {
		return nil, invalid("converting %s to %s needs schema_json or schema_path", a.source, a.target)
	}
	return &a, nil
}

func (a *avroConvert) needsSchema() bool {
	avro := postcard.SchemaAvro
	return (a.target == avro && (a.source == postcard.SchemaJSON || a.source == postcard.SchemaText)) ||
		(a.source == avro && a.target == postcard.SchemaJSON)
}

func (*avroConvert) Name() string { return AvroConvert }

func (a *avroConvert) Apply(m *codec.Message) (bool, error) {
	renameFields(&m.Payload, a.mappings)
	avro := postcard.SchemaAvro
	in := m.Payload
	var out codec.Payload
	switch {
	case a.source == a.target:
		return true, nil
	case (a.source == postcard.SchemaJSON || a.source == postcard.SchemaText) && a.target == avro:
		if in.Kind != postcard.SchemaJSON && in.Kind != postcard.SchemaText {
			return true, nil // upstream passes other payloads through
		}
		b, err := codec.NewAvroEncoder(a.schema).Encode(in)
		if err != nil {
			return false, err
		}
		out = bytesPayload(avro, b)
	case a.source == avro && a.target == postcard.SchemaJSON:
		if in.Kind != avro {
			return false, wrongPayload("avro", in.Kind)
		}
		v, err := a.schema.DecodeJSON(in.Bytes)
		if err != nil {
			return false, err
		}
		out = codec.JSONPayload(v)
		renameFields(&out, a.mappings)
	case a.source == avro && a.target == postcard.SchemaText && in.Kind == avro:
		out = codec.TextPayload(base64Std(in.Bytes))
	case a.source == avro && a.target == postcard.SchemaRaw && in.Kind == avro:
		out = codec.RawPayload(in.Bytes)
	case a.source == postcard.SchemaRaw && a.target == avro && in.Kind == postcard.SchemaRaw:
		out = bytesPayload(avro, in.Bytes)
	default:
		return true, nil
	}
	m.Payload = out
	return true, nil
}
