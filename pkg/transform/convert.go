package transform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// This file holds what the three *_convert transforms share: reading their
// config (every non-optional key is required, as upstream has no defaults)
// and the per-message helpers.

// convertConfig reads one convert transform's table, naming the transform's
// keys in errors ("conversion_options.pretty_json").
type convertConfig struct{ t table }

func (c convertConfig) format(key string) (postcard.Schema, error) {
	name, err := requiredString(c.t, key, "")
	if err != nil {
		return 0, err
	}
	s, err := codec.ParseSchema(name)
	if err != nil {
		return 0, invalid("%s: %v", key, err)
	}
	return s, nil
}

func (c convertConfig) requiredBool(key string) (bool, error) {
	v, ok := c.t[key]
	if !ok {
		return false, invalid("missing required key %q", key)
	}
	b, ok := v.(bool)
	if !ok {
		return false, invalid("%q must be a boolean, got %s", key, typeName(v))
	}
	return b, nil
}

func (c convertConfig) requiredStrings(key string) ([]string, error) {
	if _, ok := c.t[key]; !ok {
		return nil, invalid("missing required key %q", key)
	}
	return stringList(c.t, key)
}

// optionalString reads key as a string; absent or null gives "".
func (c convertConfig) optionalString(key string) (string, error) {
	v, ok := c.t[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("%q must be a string, got %s", key, typeName(v))
	}
	return s, nil
}

// options reads the required conversion_options table.
func (c convertConfig) options() (convertConfig, error) {
	v, ok := c.t["conversion_options"]
	if !ok {
		return convertConfig{}, invalid(`missing required key "conversion_options"`)
	}
	t, ok := asTable(v)
	if !ok {
		return convertConfig{}, invalid(`"conversion_options" must be a table, got %s`, typeName(v))
	}
	return convertConfig{t}, nil
}

// fieldMappings reads the optional field_mappings table (old name → new).
func (c convertConfig) fieldMappings() (map[string]string, error) {
	v, ok := c.t["field_mappings"]
	if !ok || v == nil {
		return nil, nil
	}
	t, ok := asTable(v)
	if !ok {
		return nil, invalid(`"field_mappings" must be a table of strings, got %s`, typeName(v))
	}
	out := make(map[string]string, len(t))
	for from, to := range t {
		s, ok := to.(string)
		if !ok {
			return nil, invalid("field_mappings.%s must be a string, got %s", from, typeName(to))
		}
		out[from] = s
	}
	return out, nil
}

// byteList reads an optional array of numbers 0..255 (upstream's Vec<u8>).
func (c convertConfig) byteList(key string) ([]byte, error) {
	l, err := optionalList(c.t, key)
	if err != nil || l == nil {
		return nil, err
	}
	out := make([]byte, len(l))
	for i, e := range l {
		n, ok := toFloat(e)
		if !ok || n < 0 || n > 255 || n != float64(int(n)) {
			return nil, invalid("%s[%d] must be an integer 0..255, got %s", key, i, describe(e))
		}
		out[i] = byte(n)
	}
	return out, nil
}

func (c convertConfig) unsigned(key string) (uint64, error) {
	v, ok := c.t[key]
	if !ok {
		return 0, invalid("missing required key %q", key)
	}
	n, err := codec.JSONFromGo(v)
	u, isUnsigned := n.(uint64)
	if err != nil || !isUnsigned {
		return 0, invalid("%q must be a non-negative integer, got %s", key, describe(v))
	}
	return u, nil
}

// renameFields applies field_mappings to a JSON object payload's top-level
// keys, keeping each member's position. Other payloads pass unchanged.
func renameFields(p *codec.Payload, mappings map[string]string) {
	if len(mappings) == 0 || p.Kind != postcard.SchemaJSON {
		return
	}
	obj, ok := p.JSON.(*codec.OrderedMap)
	if !ok {
		return
	}
	renamed := codec.NewOrderedMap(obj.Len())
	for _, m := range obj.Members() {
		key := m.Key
		if to, ok := mappings[key]; ok {
			key = to
		}
		renamed.Set(key, m.Value)
	}
	p.JSON = renamed
}

// jsonText writes v compactly, or indented by two spaces when pretty.
func jsonText(v any, pretty bool) ([]byte, error) {
	compact, err := codec.MarshalJSON(v)
	if err != nil || !pretty {
		return compact, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func parseJSONPayload(b []byte) (codec.Payload, error) {
	v, err := codec.ParseJSON(b)
	if err != nil {
		return codec.Payload{}, err
	}
	return codec.JSONPayload(v), nil
}

// bytesPayload labels b with a byte-carrying kind (raw, flat_buffer, avro).
func bytesPayload(kind postcard.Schema, b []byte) codec.Payload {
	return codec.Payload{Kind: kind, Bytes: b}
}

func wrongPayload(want string, got postcard.Schema) error {
	return fmt.Errorf("%w: expected %s payload, got %s", codec.ErrInvalidPayloadType, want, got)
}

func nowMillis() uint64 { return uint64(time.Now().UnixMilli()) }

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// isByteKind reports whether payloads of kind carry Bytes.
func isByteKind(kind postcard.Schema) bool {
	return slices.Contains([]postcard.Schema{postcard.SchemaRaw, postcard.SchemaFlatBuffer, postcard.SchemaAvro}, kind)
}
