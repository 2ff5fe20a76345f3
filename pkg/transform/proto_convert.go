package transform

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// protoConvert is proto_convert (docs/pipeline.md §4.4): converts payloads
// between JSON/text/bytes and protobuf, by a .proto message type when one
// is configured.
type protoConvert struct {
	source, target  postcard.Schema
	schema          *codec.ProtoSchema // nil without schema_path / descriptor_set
	messageType     string
	mappings        map[string]string
	pretty          bool
	includeMetadata bool
	strict          bool
}

func newProtoConvert(t table) (Transform, error) {
	c := convertConfig{t}
	var p protoConvert
	var err error
	if p.source, err = c.format("source_format"); err != nil {
		return nil, err
	}
	if p.target, err = c.format("target_format"); err != nil {
		return nil, err
	}
	includePaths, err := c.requiredStrings("include_paths")
	if err != nil {
		return nil, err
	}
	if _, err := c.requiredBool("preserve_unknown_fields"); err != nil {
		return nil, err
	}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	if _, err := opts.requiredBool("validate_messages"); err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	if p.pretty, err = opts.requiredBool("pretty_json"); err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	if p.includeMetadata, err = opts.requiredBool("include_metadata"); err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	if _, err := requiredString(opts.t, "type_url_prefix", "conversion_options: "); err != nil {
		return nil, err
	}
	if p.strict, err = opts.requiredBool("strict_mode"); err != nil {
		return nil, fmt.Errorf("conversion_options: %w", err)
	}
	schemaPath, err := c.optionalString("schema_path")
	if err != nil {
		return nil, err
	}
	if p.messageType, err = c.optionalString("message_type"); err != nil {
		return nil, err
	}
	if _, err := c.optionalString("schema_registry_url"); err != nil {
		return nil, err
	}
	if p.mappings, err = c.fieldMappings(); err != nil {
		return nil, err
	}
	descriptorSet, err := c.byteList("descriptor_set")
	if err != nil {
		return nil, err
	}
	// Unlike upstream, which logs a bad schema and carries on without it, a
	// schema that cannot be loaded stops the connector at start.
	switch {
	case schemaPath != "":
		if p.schema, err = codec.LoadProtoSchema(schemaPath, includePaths, p.messageType); err != nil {
			return nil, invalid("schema_path: %v", err)
		}
	case descriptorSet != nil:
		if p.schema, err = codec.ProtoSchemaFromDescriptorSet(descriptorSet, p.messageType); err != nil {
			return nil, invalid("descriptor_set: %v", err)
		}
	}
	if p.schema != nil && p.messageType == "" {
		p.messageType = p.schema.MessageType()
	}
	return &p, nil
}

func (*protoConvert) Name() string { return ProtoConvert }

func (p *protoConvert) Apply(m *codec.Message) (bool, error) {
	renameFields(&m.Payload, p.mappings)
	out, err := p.convert(m.Payload)
	if err != nil {
		return false, err
	}
	m.Payload = out
	return true, nil
}

func (p *protoConvert) convert(in codec.Payload) (codec.Payload, error) {
	src, dst := p.source, p.target
	proto := postcard.SchemaProto
	switch {
	case src == dst:
		return in, nil
	case src == proto && dst == postcard.SchemaJSON:
		return p.protoToJSON(in)
	case src == proto && dst == postcard.SchemaText:
		return p.protoToText(in)
	case src == proto && isByteKind(dst):
		switch in.Kind {
		case proto:
			return bytesPayload(dst, []byte(in.Text)), nil
		case postcard.SchemaRaw:
			return bytesPayload(dst, in.Bytes), nil
		}
		return codec.Payload{}, wrongPayload("proto or raw", in.Kind)
	case src == postcard.SchemaJSON && dst == proto:
		if in.Kind != postcard.SchemaJSON {
			return codec.Payload{}, wrongPayload("json", in.Kind)
		}
		return p.jsonToProto(in.JSON)
	case src == postcard.SchemaText && dst == proto:
		if in.Kind != postcard.SchemaText {
			return codec.Payload{}, wrongPayload("text", in.Kind)
		}
		if v, err := codec.ParseJSON([]byte(in.Text)); err == nil {
			return p.jsonToProto(v)
		}
		return codec.Payload{Kind: proto, Text: in.Text}, nil
	case isByteKind(src) && dst == proto:
		if in.Kind != src {
			return codec.Payload{}, wrongPayload(src.String(), in.Kind)
		}
		if utf8.Valid(in.Bytes) {
			return codec.Payload{Kind: proto, Text: string(in.Bytes)}, nil
		}
		return codec.Payload{Kind: proto, Text: `binary_data: "` + base64Std(in.Bytes) + `"`}, nil
	case src == postcard.SchemaJSON && (dst == postcard.SchemaText || dst == postcard.SchemaRaw):
		if in.Kind != postcard.SchemaJSON {
			return codec.Payload{}, wrongPayload("json", in.Kind)
		}
		text, err := jsonText(in.JSON, p.pretty && dst == postcard.SchemaText)
		if err != nil {
			return codec.Payload{}, err
		}
		if dst == postcard.SchemaText {
			return codec.TextPayload(string(text)), nil
		}
		return codec.RawPayload(text), nil
	case src == postcard.SchemaText && dst == postcard.SchemaJSON:
		if in.Kind != postcard.SchemaText {
			return codec.Payload{}, wrongPayload("text", in.Kind)
		}
		return parseJSONPayload([]byte(in.Text))
	case src == postcard.SchemaRaw && dst == postcard.SchemaJSON:
		if in.Kind != postcard.SchemaRaw {
			return codec.Payload{}, wrongPayload("raw", in.Kind)
		}
		return parseJSONPayload(in.Bytes)
	}
	return codec.Payload{}, fmt.Errorf("%w: proto_convert cannot convert %s to %s", codec.ErrInvalidPayloadType, src, dst)
}

// protoToJSON reads protobuf text (JSON), binary messages and, unlike
// upstream, the {"type_url", "value"} JSON the proto stream decoder makes.
func (p *protoConvert) protoToJSON(in codec.Payload) (codec.Payload, error) {
	switch in.Kind {
	case postcard.SchemaProto:
		return p.textToJSON(in.Text), nil
	case postcard.SchemaRaw:
		if p.schema != nil {
			return p.messageToJSON(in.Bytes)
		}
		if typeURL, value, ok := codec.DecodeProtoAny(in.Bytes); ok {
			obj := codec.NewOrderedMap(3)
			obj.Set("type_url", typeURL)
			obj.Set("value", base64Std(value))
			if p.includeMetadata {
				meta := codec.NewOrderedMap(2)
				meta.Set("converted_from", "protobuf_any")
				meta.Set("timestamp", nowMillis())
				obj.Set("metadata", meta)
			}
			return codec.JSONPayload(obj), nil
		}
		return codec.JSONPayload(binaryDataObject(in.Bytes)), nil
	case postcard.SchemaJSON:
		typeURL, value, ok := anyFromJSON(in.JSON)
		if !ok {
			break
		}
		return p.unwrapAny(in, typeURL, value)
	}
	return codec.Payload{}, wrongPayload(`proto, raw or {"type_url","value"} json`, in.Kind)
}

// unwrapAny turns the contents of a google.protobuf.Any into JSON: a
// StringValue's text, a BytesValue's or the configured type's message. The
// wrapped value may also be upstream's bare text or bytes.
func (p *protoConvert) unwrapAny(in codec.Payload, typeURL string, value []byte) (codec.Payload, error) {
	switch {
	case typeURL == codec.ProtoStringValueURL:
		text, ok := codec.DecodeProtoWrapper(value)
		if !ok {
			text = value // upstream writes the text itself
		}
		if !utf8.Valid(text) {
			return codec.Payload{}, fmt.Errorf("%w: StringValue that is not UTF-8", codec.ErrInvalidProto)
		}
		return p.textToJSON(string(text)), nil
	case typeURL == codec.ProtoBytesValueURL:
		b, ok := codec.DecodeProtoWrapper(value)
		if !ok {
			b = value
		}
		if p.schema != nil {
			return p.messageToJSON(b)
		}
		return codec.JSONPayload(binaryDataObject(b)), nil
	case p.schema != nil && strings.HasSuffix(typeURL, "/"+p.schema.MessageType()):
		return p.messageToJSON(value)
	}
	return in, nil // an Any of some other type stays as it is
}

func (p *protoConvert) textToJSON(text string) codec.Payload {
	v, err := codec.ParseJSON([]byte(text))
	if err != nil {
		obj := codec.NewOrderedMap(2)
		obj.Set("proto_text", text)
		obj.Set("format", "text")
		return codec.JSONPayload(obj)
	}
	return codec.JSONPayload(p.withMetadata(v))
}

func (p *protoConvert) messageToJSON(b []byte) (codec.Payload, error) {
	v, err := p.schema.DecodeJSON(b, p.strict)
	if err != nil {
		return codec.Payload{}, err
	}
	return codec.JSONPayload(p.withMetadata(v)), nil
}

func (p *protoConvert) withMetadata(v any) any {
	if !p.includeMetadata {
		return v
	}
	messageType := p.messageType
	if messageType == "" {
		messageType = "unknown"
	}
	meta := codec.NewOrderedMap(3)
	meta.Set("converted_from", "protobuf")
	meta.Set("timestamp", nowMillis())
	meta.Set("message_type", messageType)
	obj := codec.NewOrderedMap(2)
	obj.Set("data", v)
	obj.Set("metadata", meta)
	return obj
}

func (p *protoConvert) protoToText(in codec.Payload) (codec.Payload, error) {
	switch in.Kind {
	case postcard.SchemaProto:
		return codec.TextPayload(in.Text), nil
	case postcard.SchemaRaw:
		if typeURL, value, ok := codec.DecodeProtoAny(in.Bytes); ok {
			return codec.TextPayload(fmt.Sprintf("Type: %s\nData: %d bytes\nBase64: %s", typeURL, len(value), base64Std(value))), nil
		}
		return codec.TextPayload(fmt.Sprintf("Binary protobuf data: %d bytes\nBase64: %s", len(in.Bytes), base64Std(in.Bytes))), nil
	}
	return codec.Payload{}, wrongPayload("proto or raw", in.Kind)
}

// jsonToProto encodes v as the configured message type (binary, as Raw) or,
// without a schema, as protobuf text (its JSON). Unlike upstream, a value
// that does not fit the schema is an error rather than silently falling
// back to text that no consumer of the schema could read.
func (p *protoConvert) jsonToProto(v any) (codec.Payload, error) {
	if p.schema != nil {
		b, err := p.schema.EncodeJSON(v, p.strict)
		if err != nil {
			return codec.Payload{}, err
		}
		return codec.RawPayload(b), nil
	}
	text, err := jsonText(v, p.pretty)
	if err != nil {
		return codec.Payload{}, err
	}
	return codec.Payload{Kind: postcard.SchemaProto, Text: string(text)}, nil
}

// anyFromJSON recognises the proto stream decoder's output.
func anyFromJSON(v any) (typeURL string, value []byte, ok bool) {
	obj, isObject := v.(*codec.OrderedMap)
	if !isObject || obj.Len() != 2 {
		return "", nil, false
	}
	u, _ := obj.Get("type_url")
	b64, _ := obj.Get("value")
	typeURL, ok1 := u.(string)
	text, ok2 := b64.(string)
	if !ok1 || !ok2 {
		return "", nil, false
	}
	value, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return "", nil, false
	}
	return typeURL, value, true
}

func binaryDataObject(b []byte) *codec.OrderedMap {
	obj := codec.NewOrderedMap(2)
	obj.Set("binary_data", base64Std(b))
	obj.Set("format", "raw_binary")
	return obj
}
