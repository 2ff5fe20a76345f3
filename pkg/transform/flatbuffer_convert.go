package transform

import (
	"fmt"
	"os"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// flatBufferConvert is flat_buffer_convert (docs/pipeline.md §4.4): JSON to a
// schemaless FlatBuffer, or a FlatBuffer to its JSON description, base64
// text or bytes.
type flatBufferConvert struct {
	source, target postcard.Schema
	mappings       map[string]string
	encoder        codec.FlatBufferEncoder
	decoder        codec.FlatBufferDecoder
}

func newFlatBufferConvert(t table) (Transform, error) {
	c := convertConfig{t}
	var f flatBufferConvert
	var err error
	if f.source, err = c.format("source_format"); err != nil {
		return nil, err
	}
	if f.target, err = c.format("target_format"); err != nil {
		return nil, err
	}
	fb := postcard.SchemaFlatBuffer
	allowed := f.source == f.target ||
		(f.source == postcard.SchemaJSON && f.target == fb) ||
		(f.source == fb && (f.target == postcard.SchemaJSON || f.target == postcard.SchemaText || f.target == postcard.SchemaRaw))
	if !allowed {
		return nil, invalid("cannot convert %s to %s (supported: json to flat_buffer, flat_buffer to json, text or raw)", f.source, f.target)
	}
	if _, err := c.requiredStrings("include_paths"); err != nil {
		return nil, err
	}
	if _, err := c.requiredBool("preserve_unknown_fields"); err != nil {
		return nil, err
	}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	if f.decoder.Verify, err = opts.requiredBool("verify_buffers"); err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	for _, key := range []string{"pretty_json", "include_metadata", "strict_mode"} {
		if _, err := opts.requiredBool(key); err != nil {
			return nil, fmt.Errorf("conversion_options: %w", err)
		}
	}
	hint, err := opts.unsigned("buffer_size_hint")
	if err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	f.encoder.SizeHint = int(min(hint, 64<<20))
	schemaPath, err := c.optionalString("schema_path")
	if err != nil {
		return nil, err
	}
	// The .fbs content is not used (nor is it upstream), but a path that
	// names no readable file is a configuration mistake worth stopping on.
	if schemaPath != "" {
		if _, err := os.ReadFile(schemaPath); err != nil {
			return nil, invalid("schema_path: %v", err)
		}
	}
	if f.decoder.RootTableName, err = c.optionalString("root_table_name"); err != nil {
		return nil, err
	}
	if f.mappings, err = c.fieldMappings(); err != nil {
		return nil, err
	}
	return &f, nil
}

func (*flatBufferConvert) Name() string { return FlatBufferConvert }

func (f *flatBufferConvert) Apply(m *codec.Message) (bool, error) {
	if f.source == f.target {
		return true, nil
	}
	if m.Payload.Kind != f.source {
		return false, wrongPayload(f.source.String(), m.Payload.Kind)
	}
	var out codec.Payload
	switch f.target {
	case postcard.SchemaFlatBuffer: // from json
		renameFields(&m.Payload, f.mappings)
		b, err := f.encoder.Encode(m.Payload)
		if err != nil {
			return false, err
		}
		out = bytesPayload(postcard.SchemaFlatBuffer, b)
	case postcard.SchemaJSON:
		p, err := f.decoder.Decode(m.Payload.Bytes)
		if err != nil {
			return false, err
		}
		renameFields(&p, f.mappings)
		out = p
	case postcard.SchemaText:
		out = codec.TextPayload(base64Std(m.Payload.Bytes))
	case postcard.SchemaRaw:
		out = codec.RawPayload(m.Payload.Bytes)
	}
	m.Payload = out
	return true, nil
}
