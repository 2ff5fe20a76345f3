package dryrun

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// Sample is one input message of a dry run, read from the pkg/tap.Event shape: for a sink a
// message as it sits in Iggy, for a source what the plugin produced. Every field but the payload
// is optional; what a line leaves out is nil or zero here.
type Sample struct {
	Line          int    // where it was read: 1-based line of a samples file, or index+1 of a list
	Stream, Topic string // "" when not given
	Partition     uint32
	Offset        *uint64
	ID            *postcard.Uint128
	Timestamp     uint64
	Headers       *postcard.HeaderMap // nil when not given
	Schema        *postcard.Schema    // how the payload is written; nil when not given

	payload  json.RawMessage // as written
	decoded  []byte          // the payload's bytes when it is base64 text
	isBase64 bool
}

// The fields of a sample line, in the order pkg/tap.Event writes them. Only "payload" is
// required; "point", "replica", "size" and "error" are read and ignored, so a tap's output and a
// dry run's output can be fed back as they are.
var sampleFields = []string{"point", "replica", "stream", "topic", "partition", "offset", "id", "timestamp",
	"headers", "schema", "size", "payload", "encoding", "error"}

// headerFields are the fields of one element of "headers" (pkg/tap.Header).
var headerFields = []string{"key", "key_kind", "key_encoding", "kind", "value", "encoding"}

// encodingBase64 is the only value "encoding" and "key_encoding" take.
const encodingBase64 = "base64"

// ParseSample reads one sample from a JSON object; line is stored in the sample and in its
// errors. Every error is a *Problem naming the field.
func ParseSample(data []byte, line int) (Sample, error) {
	s := Sample{Line: line}
	bad := func(field, format string, args ...any) error {
		return &Problem{Input: InputSamples, Line: line, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return s, bad("", "not a JSON object: %s", describeJSONError(err, data))
	}
	if dec.More() {
		return s, bad("", "more than one JSON value on the line")
	}
	for name := range obj {
		if !slices.Contains(sampleFields, name) {
			return s, bad(name, "unknown field (a sample has the fields of a tap event: %s)", strings.Join(sampleFields, ", "))
		}
	}
	str := func(name string) (string, error) {
		raw, ok := obj[name]
		if !ok || isNull(raw) {
			return "", nil
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return "", bad(name, "expected a string, got %s", shorten(raw))
		}
		return v, nil
	}
	unsigned := func(name string, bits int) (uint64, bool, error) {
		raw, ok := obj[name]
		if !ok || isNull(raw) {
			return 0, false, nil
		}
		v, err := strconv.ParseUint(string(raw), 10, bits)
		if err != nil {
			return 0, false, bad(name, "expected an unsigned %d-bit integer, got %s", bits, shorten(raw))
		}
		return v, true, nil
	}
	var err error
	if s.Stream, err = str("stream"); err != nil {
		return s, err
	}
	if s.Topic, err = str("topic"); err != nil {
		return s, err
	}
	p, _, err := unsigned("partition", 32)
	if err != nil {
		return s, err
	}
	s.Partition = uint32(p)
	if off, ok, err := unsigned("offset", 64); err != nil {
		return s, err
	} else if ok {
		s.Offset = &off
	}
	if s.Timestamp, _, err = unsigned("timestamp", 64); err != nil {
		return s, err
	}
	for _, name := range []string{"point", "replica", "error"} {
		if _, err := str(name); err != nil {
			return s, err
		}
	}
	if raw, ok := obj["size"]; ok && !isNull(raw) {
		if _, err := strconv.ParseUint(string(raw), 10, 64); err != nil {
			return s, bad("size", "expected an unsigned integer, got %s", shorten(raw))
		}
	}
	if raw, ok := obj["id"]; ok && !isNull(raw) {
		id, err := parseID(raw)
		if err != nil {
			return s, bad("id", "%v", err)
		}
		s.ID = &id
	}
	if raw, ok := obj["schema"]; ok && !isNull(raw) {
		name, err := str("schema")
		if err != nil {
			return s, err
		}
		schema, ok := schemaByName(name)
		if !ok {
			return s, bad("schema", "unknown schema %q (one of %s)", name, strings.Join(schemaNames(), ", "))
		}
		s.Schema = &schema
	}
	if raw, ok := obj["headers"]; ok && !isNull(raw) {
		hs, err := parseHeaders(raw, line)
		if err != nil {
			return s, err
		}
		s.Headers = &hs
	}
	raw, ok := obj["payload"]
	if !ok {
		return s, bad("payload", "required (the message's payload: a JSON value, a string for text, base64 text with \"encoding\": \"base64\" for bytes)")
	}
	s.payload = raw
	encoding, err := str("encoding")
	if err != nil {
		return s, err
	}
	switch encoding {
	case "":
	case encodingBase64:
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return s, bad("payload", "with \"encoding\": \"base64\" the payload must be a string of base64 text, got %s", shorten(raw))
		}
		if s.decoded, err = base64.StdEncoding.DecodeString(text); err != nil {
			return s, bad("payload", "invalid base64 (standard alphabet, padded): %v", err)
		}
		s.isBase64 = true
	default:
		return s, bad("encoding", "unknown encoding %q: leave it out, or \"base64\" for a payload of base64 text", encoding)
	}
	if s.Schema != nil {
		if _, err := s.Payload(*s.Schema); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Payload is the sample's payload as bytes, read as schema writes it (pkg/tap.Event.SetPayload's
// rendering reversed): base64 text when "encoding" says so; else the string's text for text; else
// the JSON value as written, byte for byte (any schema: for raw, proto, flat_buffer and avro these
// are the bytes of that JSON text). The sample's own "schema" wins over schema.
func (s *Sample) Payload(schema postcard.Schema) ([]byte, error) {
	if s.Schema != nil {
		schema = *s.Schema
	}
	switch {
	case s.isBase64:
		return s.decoded, nil
	case schema == postcard.SchemaText:
		var text string
		if json.Unmarshal(s.payload, &text) != nil {
			return nil, &Problem{Input: InputSamples, Line: s.Line, Field: "payload",
				Message: fmt.Sprintf("a text payload is a JSON string (or base64 text with \"encoding\": \"base64\"), got %s", shorten(s.payload))}
		}
		return []byte(text), nil
	}
	return s.payload, nil
}

// IsBase64 reports whether the payload was written as base64 text ("encoding": "base64").
func (s *Sample) IsBase64() bool { return s.isBase64 }

// PayloadSchema is the schema the payload is written in: the sample's own, else def.
func (s *Sample) PayloadSchema(def postcard.Schema) postcard.Schema {
	if s.Schema != nil {
		return *s.Schema
	}
	return def
}

// parseHeaders reads "headers": a list of pkg/tap.Header objects.
func parseHeaders(raw json.RawMessage, line int) (postcard.HeaderMap, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &Problem{Input: InputSamples, Line: line, Field: "headers", Message: "expected a list of {\"key\", \"kind\", \"value\"} objects, got " + shorten(raw)}
	}
	hs := make(postcard.HeaderMap, 0, len(list))
	for i, h := range list {
		at := fmt.Sprintf("headers[%d]", i)
		bad := func(field, format string, args ...any) error {
			if field != "" {
				field = "." + field
			}
			return &Problem{Input: InputSamples, Line: line, Field: at + field, Message: fmt.Sprintf(format, args...)}
		}
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(h))
		dec.UseNumber()
		if dec.Decode(&obj) != nil || obj == nil {
			return nil, bad("", "expected an object with key, kind and value, got %s", shorten(h))
		}
		for name := range obj {
			if !slices.Contains(headerFields, name) {
				return nil, bad(name, "unknown field (a header has %s)", strings.Join(headerFields, ", "))
			}
		}
		str := func(name string) (string, error) {
			v, ok := obj[name]
			if !ok || isNull(v) {
				return "", nil
			}
			var text string
			if json.Unmarshal(v, &text) != nil {
				return "", bad(name, "expected a string, got %s", shorten(v))
			}
			return text, nil
		}
		var names [4]string
		for j, name := range []string{"key_kind", "key_encoding", "kind", "encoding"} {
			var err error
			if names[j], err = str(name); err != nil {
				return nil, err
			}
		}
		keyKind, keyEnc, kind, enc := names[0], names[1], names[2], names[3]
		var e postcard.HeaderEntry
		var err *fieldError
		if e.Key, err = headerField(obj["key"], keyKind, keyEnc); err != nil {
			return nil, bad(err.field("key"), "%s", err.msg)
		}
		if e.Value, err = headerField(obj["value"], kind, enc); err != nil {
			return nil, bad(err.field("value"), "%s", err.msg)
		}
		hs = append(hs, e)
	}
	return hs, nil
}

// fieldError is a problem with one part of a header: which part (kind, encoding, or the
// key/value itself) and why.
type fieldError struct {
	part string // "kind", "encoding" or "" for the key/value itself
	msg  string
}

func (e *fieldError) Error() string { return e.msg }

// field names the sample field at fault for the header's key or value.
func (e *fieldError) field(which string) string {
	switch e.part {
	case "kind":
		if which == "key" {
			return "key_kind"
		}
		return "kind"
	case "encoding":
		if which == "key" {
			return "key_encoding"
		}
		return "encoding"
	}
	return which
}

// headerField reads a header key or value in kindName ("" = string) as pkg/tap renders it:
// base64 text with the encoding, a string for string, true/false for bool, a number for the
// numeric kinds (raw, int128 and uint128 are always base64).
func headerField(raw json.RawMessage, kindName, encoding string) (postcard.HeaderField, *fieldError) {
	if kindName == "" {
		kindName = "string"
	}
	kind, ok := headerKindByName(kindName)
	if !ok {
		return postcard.HeaderField{}, &fieldError{"kind", fmt.Sprintf("unknown header kind %q (one of %s)", kindName, strings.Join(headerKindNames(), ", "))}
	}
	f := postcard.HeaderField{Kind: kind}
	if raw == nil || isNull(raw) {
		return f, &fieldError{"", "required"}
	}
	switch encoding {
	case "":
	case encodingBase64:
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return f, &fieldError{"", "with encoding \"base64\" it must be a string of base64 text, got " + shorten(raw)}
		}
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return f, &fieldError{"", fmt.Sprintf("invalid base64 (standard alphabet, padded): %v", err)}
		}
		f.Value = b
		return f, nil
	default:
		return f, &fieldError{"encoding", fmt.Sprintf("unknown encoding %q: leave it out, or \"base64\"", encoding)}
	}
	le := binary.LittleEndian
	text := string(raw)
	intBits := map[postcard.HeaderKind]int{postcard.HeaderKindInt8: 8, postcard.HeaderKindInt16: 16, postcard.HeaderKindInt32: 32, postcard.HeaderKindInt64: 64}
	uintBits := map[postcard.HeaderKind]int{postcard.HeaderKindUint8: 8, postcard.HeaderKindUint16: 16, postcard.HeaderKindUint32: 32, postcard.HeaderKindUint64: 64}
	switch {
	case kind == postcard.HeaderKindString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return f, &fieldError{"", "a string header is a JSON string (or base64 text with encoding \"base64\"), got " + shorten(raw)}
		}
		f.Value = []byte(s)
	case kind == postcard.HeaderKindBool:
		switch text {
		case "true":
			f.Value = []byte{1}
		case "false":
			f.Value = []byte{0}
		default:
			return f, &fieldError{"", "a bool header is true or false, got " + shorten(raw)}
		}
	case intBits[kind] > 0:
		bits := intBits[kind]
		v, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return f, &fieldError{"", fmt.Sprintf("an %s header is an integer of %d bits, got %s", kindName, bits, shorten(raw))}
		}
		f.Value = le.AppendUint64(nil, uint64(v))[:bits/8]
	case uintBits[kind] > 0:
		bits := uintBits[kind]
		v, err := strconv.ParseUint(text, 10, bits)
		if err != nil {
			return f, &fieldError{"", fmt.Sprintf("a %s header is an unsigned integer of %d bits, got %s", kindName, bits, shorten(raw))}
		}
		f.Value = le.AppendUint64(nil, v)[:bits/8]
	case kind == postcard.HeaderKindFloat32:
		v, err := strconv.ParseFloat(text, 32)
		if err != nil || !isJSONNumber(text) {
			return f, &fieldError{"", "a float32 header is a number, got " + shorten(raw)}
		}
		f.Value = le.AppendUint32(nil, math.Float32bits(float32(v)))
	case kind == postcard.HeaderKindFloat64:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || !isJSONNumber(text) {
			return f, &fieldError{"", "a float64 header is a number, got " + shorten(raw)}
		}
		f.Value = le.AppendUint64(nil, math.Float64bits(v))
	default: // raw, int128, uint128
		return f, &fieldError{"", fmt.Sprintf("a %s header is base64 text with encoding \"base64\", got %s", kindName, shorten(raw))}
	}
	return f, nil
}

// isJSONNumber reports whether text is a JSON number (ParseFloat also takes "Inf", "0x1p3", ...).
func isJSONNumber(text string) bool {
	var n json.Number
	return json.Unmarshal([]byte(text), &n) == nil && n.String() == text
}

// maxID is 2^128, one past the largest message id.
var maxID = new(big.Int).Lsh(big.NewInt(1), 128)

// parseID reads a u128 message id: a string of decimal digits (as pkg/tap.ID writes it) or a
// JSON integer.
func parseID(raw json.RawMessage) (postcard.Uint128, error) {
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			return postcard.Uint128{}, fmt.Errorf("expected a decimal u128 string or integer, got %s", shorten(raw))
		}
	}
	v, ok := new(big.Int).SetString(text, 10)
	if !ok || text == "" || text[0] == '+' || text[0] == '-' || v.Cmp(maxID) >= 0 {
		return postcard.Uint128{}, fmt.Errorf("expected a message id from 0 to 2^128-1 in decimal, got %s", shorten(raw))
	}
	var b [16]byte
	v.FillBytes(b[:])
	return postcard.Uint128{Hi: binary.BigEndian.Uint64(b[:8]), Lo: binary.BigEndian.Uint64(b[8:])}, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// shorten is a JSON value for an error message, cut after 60 bytes.
func shorten(raw json.RawMessage) string {
	const most = 60
	text := string(bytes.TrimSpace(raw))
	if len(text) <= most {
		return text
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "..."
}

// describeJSONError is a JSON syntax error with the column it happened at.
func describeJSONError(err error, data []byte) string {
	if err == nil {
		return "null"
	}
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	if ute, ok := err.(*json.UnmarshalTypeError); ok {
		return "got a JSON " + ute.Value
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return "empty"
	}
	return err.Error()
}

func schemaByName(name string) (postcard.Schema, bool) {
	for s := postcard.Schema(0); s.Valid(); s++ {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

func schemaNames() []string {
	var names []string
	for s := postcard.Schema(0); s.Valid(); s++ {
		names = append(names, s.String())
	}
	return names
}

func headerKindByName(name string) (postcard.HeaderKind, bool) {
	for k := postcard.HeaderKind(0); k.Valid(); k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

func headerKindNames() []string {
	var names []string
	for k := postcard.HeaderKind(0); k.Valid(); k++ {
		names = append(names, k.String())
	}
	return names
}
