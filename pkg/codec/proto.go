package codec

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// ErrInvalidProto: bytes that are not a google.protobuf.Any (stream codec) or
// not a message of the configured type, or JSON the message type cannot hold.
var ErrInvalidProto = errors.New("invalid protobuf payload")

// ErrProtoSchema: a .proto file or descriptor set that cannot be read,
// compiled, or does not define the requested message type.
var ErrProtoSchema = errors.New("invalid protobuf schema")

// Type URLs of the well-known wrappers the proto stream encoder uses.
const (
	ProtoTypeURLPrefix  = "type.googleapis.com"
	ProtoStringValueURL = ProtoTypeURLPrefix + "/google.protobuf.StringValue"
	ProtoBytesValueURL  = ProtoTypeURLPrefix + "/google.protobuf.BytesValue"
)

// DecodeProtoAny decodes b as a google.protobuf.Any message (field 1
// type_url, field 2 value; unknown fields skipped, the last occurrence
// winning). ok is false when b is not a well-formed message. value aliases b.
func DecodeProtoAny(b []byte) (typeURL string, value []byte, ok bool) {
	return decodeProtoAny(b)
}

// AppendProtoAny appends the encoding of Any{typeURL, value} to dst.
func AppendProtoAny(dst []byte, typeURL string, value []byte) []byte {
	if typeURL != "" {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendString(dst, typeURL)
	}
	if len(value) > 0 {
		dst = protowire.AppendTag(dst, 2, protowire.BytesType)
		dst = protowire.AppendBytes(dst, value)
	}
	return dst
}

// AppendProtoWrapper appends the encoding of a google.protobuf.StringValue or
// BytesValue holding v (both keep it in field 1).
func AppendProtoWrapper(dst, v []byte) []byte {
	if len(v) == 0 {
		return dst // proto3 omits the empty default
	}
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendBytes(dst, v)
}

// appendProtoAnyWrapper appends what AppendProtoAny(dst, typeURL, AppendProtoWrapper(nil, v))
// appends, writing the wrapper in place instead of building it apart.
func appendProtoAnyWrapper(dst []byte, typeURL string, v []byte) []byte {
	if typeURL != "" {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendString(dst, typeURL)
	}
	if len(v) == 0 {
		return dst // an empty wrapper is empty, and Any omits an empty value
	}
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(protowire.SizeTag(1)+protowire.SizeBytes(len(v))))
	return AppendProtoWrapper(dst, v)
}

// protoAnyWrapperSize is the length appendProtoAnyWrapper appends.
func protoAnyWrapperSize(typeURL string, n int) int {
	size := 0
	if typeURL != "" {
		size = protowire.SizeTag(1) + protowire.SizeBytes(len(typeURL))
	}
	if n > 0 {
		size += protowire.SizeTag(2) + protowire.SizeBytes(protowire.SizeTag(1)+protowire.SizeBytes(n))
	}
	return size
}

// newProtoAnyWrapper is appendProtoAnyWrapper into a buffer of exactly its size.
func newProtoAnyWrapper(typeURL string, v []byte) []byte {
	return appendProtoAnyWrapper(make([]byte, 0, protoAnyWrapperSize(typeURL, len(v))), typeURL, v)
}

// DecodeProtoWrapper reads the value of a StringValue or BytesValue message
// (field 1, the last occurrence winning). ok is false when b is not such a
// message, e.g. the raw JSON text upstream's encoder puts in Any.value.
func DecodeProtoWrapper(b []byte) (v []byte, ok bool) {
	v = []byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			field, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			v, b = field, b[m:]
			continue
		}
		if num == 1 {
			return nil, false // field 1 with the wrong wire type
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, false
		}
		b = b[m:]
	}
	return v, true
}

// proto stream codec (docs/pipeline.md §3): Any-wrapper mode.
type (
	protoStreamDecoder struct{}
	protoStreamEncoder struct {
		now func() int64 // Unix milliseconds for the Text wrapper
	}
)

func (protoStreamDecoder) Schema() postcard.Schema { return postcard.SchemaProto }

// Decode turns a google.protobuf.Any into {"type_url", "value": base64}.
func (protoStreamDecoder) Decode(b []byte) (Payload, error) {
	if len(b) == 0 {
		return Payload{}, fmt.Errorf("%w: empty payload", ErrInvalidProto)
	}
	typeURL, value, ok := decodeProtoAny(b)
	if !ok {
		return Payload{}, fmt.Errorf("%w: not a google.protobuf.Any message", ErrInvalidProto)
	}
	obj := NewOrderedMap(2)
	obj.Set("type_url", typeURL)
	obj.Set("value", base64Std(value))
	return JSONPayload(obj), nil
}

// AppendJSONText implements JSONTextDecoder: the text of Decode's
// {"type_url", "value"} object, written directly.
func (protoStreamDecoder) AppendJSONText(dst, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return dst, false
	}
	typeURL, value, ok := decodeProtoAnyBytes(b)
	if !ok {
		return dst, false
	}
	out, ok := appendValidString(append(dst, `{"type_url":`...), typeURL)
	if !ok { // decodeProtoAnyBytes checked it: never taken
		return dst, false
	}
	dst = append(out, `,"value":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, value) // base64 needs no escaping
	return append(dst, `"}`...), true
}

func (protoStreamEncoder) Schema() postcard.Schema { return postcard.SchemaProto }

// AppendEncodedJSONText implements JSONTextEncoder: a JSON payload's text goes into the
// StringValue as MarshalJSON would write it.
func (e protoStreamEncoder) AppendEncodedJSONText(dst, canonical []byte) ([]byte, bool) {
	return appendProtoAnyWrapper(dst, ProtoStringValueURL, canonical), true
}

// Encode wraps the payload in a google.protobuf.Any holding a StringValue
// (JSON, Text, Proto) or a BytesValue (Raw, FlatBuffer, Avro). Unlike
// upstream, Any.value is the encoded wrapper message, as the type URL says,
// not the bare text or bytes.
func (e protoStreamEncoder) Encode(p Payload) ([]byte, error) {
	var value []byte // the StringValue's or BytesValue's content
	typeURL := ProtoStringValueURL
	switch p.Kind {
	case postcard.SchemaJSON:
		text, err := MarshalJSON(p.JSON)
		if err != nil {
			return nil, err
		}
		value = text
	case postcard.SchemaText:
		// Upstream's content: the text with a timestamp and its encoding.
		obj := NewOrderedMap(3)
		obj.Set("text", p.Text)
		obj.Set("timestamp", signedToModel(e.now()))
		obj.Set("encoding", "utf-8")
		text, err := MarshalJSON(obj)
		if err != nil {
			return nil, err
		}
		value = text
	case postcard.SchemaProto:
		value = []byte(p.Text)
	case postcard.SchemaRaw, postcard.SchemaFlatBuffer, postcard.SchemaAvro:
		typeURL = ProtoBytesValueURL
		value = p.Bytes
	default:
		return nil, fmt.Errorf("%w: payload kind %s", ErrInvalidPayloadType, p.Kind)
	}
	return newProtoAnyWrapper(typeURL, value), nil
}

// ProtoSchema is one protobuf message type, loaded from a .proto file or a
// FileDescriptorSet, that converts between binary messages and the JSON
// value model. Safe for concurrent use.
type ProtoSchema struct {
	desc protoreflect.MessageDescriptor
	// withMaps are the types reachable from desc that can hold a map field,
	// whose entries DecodeJSON checks first (proto_maps.go).
	withMaps map[protoreflect.FullName]bool
}

func newProtoSchema(md protoreflect.MessageDescriptor) *ProtoSchema {
	return &ProtoSchema{desc: md, withMaps: typesHoldingMaps(md)}
}

// LoadProtoSchema compiles the .proto file at path, resolving imports from
// includePaths, the file's own directory and the well-known types, and
// selects messageType by full name (nested types as "pkg.Outer.Inner"). An
// empty messageType is accepted when the file defines exactly one message.
// Errors name the file and the problem.
func LoadProtoSchema(path string, includePaths []string, messageType string) (*ProtoSchema, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: proto file %s: %v", ErrProtoSchema, path, errors.Unwrap(err))
	}
	name, importPaths := protoImportName(path, includePaths)
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths}),
	}
	files, err := compiler.Compile(context.Background(), name)
	if err != nil {
		return nil, fmt.Errorf("%w: proto file %s: %v", ErrProtoSchema, path, err)
	}
	md, err := findProtoMessage(files[0], messageType)
	if err != nil {
		return nil, fmt.Errorf("%w: proto file %s: %v", ErrProtoSchema, path, err)
	}
	return newProtoSchema(md), nil
}

// protoImportName finds how the compiler should name path: relative to the
// first include path that holds it, else by its base name with its directory
// added as the last import path.
func protoImportName(path string, includePaths []string) (string, []string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	importPaths := append([]string(nil), includePaths...)
	for _, inc := range includePaths {
		incAbs, err := filepath.Abs(inc)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(incAbs, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel), importPaths
		}
	}
	return filepath.Base(abs), append(importPaths, filepath.Dir(abs))
}

// ProtoSchemaFromDescriptorSet selects messageType from a serialized
// google.protobuf.FileDescriptorSet (as `protoc --descriptor_set_out`
// writes, with imports included).
func ProtoSchemaFromDescriptorSet(set []byte, messageType string) (*ProtoSchema, error) {
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(set, &fds); err != nil {
		return nil, fmt.Errorf("%w: descriptor_set: %v", ErrProtoSchema, err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return nil, fmt.Errorf("%w: descriptor_set: %v", ErrProtoSchema, err)
	}
	if messageType == "" {
		return nil, fmt.Errorf("%w: descriptor_set: message_type is required", ErrProtoSchema)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(messageType))
	if err != nil {
		return nil, fmt.Errorf("%w: descriptor_set: message type %q not found", ErrProtoSchema, messageType)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%w: descriptor_set: %q is not a message", ErrProtoSchema, messageType)
	}
	return newProtoSchema(md), nil
}

func findProtoMessage(file protoreflect.FileDescriptor, messageType string) (protoreflect.MessageDescriptor, error) {
	if messageType == "" {
		if file.Messages().Len() != 1 {
			return nil, fmt.Errorf("message_type is required: the file defines %d top-level messages", file.Messages().Len())
		}
		return file.Messages().Get(0), nil
	}
	var walk func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor
	walk = func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
		for i := range ms.Len() {
			m := ms.Get(i)
			if string(m.FullName()) == messageType {
				return m
			}
			if found := walk(m.Messages()); found != nil {
				return found
			}
		}
		return nil
	}
	if md := walk(file.Messages()); md != nil {
		return md, nil
	}
	return nil, fmt.Errorf("message type %q not found (the file's package is %q)", messageType, file.Package())
}

// MessageType is the message's full name, e.g. "shop.Order".
func (s *ProtoSchema) MessageType() string { return string(s.desc.FullName()) }

// EncodeJSON writes v (the JSON value model) as a binary message, reading
// it by protobuf's JSON mapping (proto or JSON field names, enums by name or
// number, 64-bit integers as numbers or strings, bytes as base64). Unknown
// keys are an error when strict, else ignored.
func (s *ProtoSchema) EncodeJSON(v any, strict bool) (_ []byte, err error) {
	defer panicerr.Catch(&err)
	text, err := MarshalJSON(v)
	if err != nil {
		return nil, err
	}
	msg := dynamicpb.NewMessage(s.desc)
	if err := (protojson.UnmarshalOptions{DiscardUnknown: !strict}).Unmarshal(text, msg); err != nil {
		return nil, fmt.Errorf("%w: JSON does not fit %s: %s", ErrInvalidProto, s.MessageType(), protoErrText(err))
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %s", ErrInvalidProto, s.MessageType(), protoErrText(err))
	}
	return out, nil
}

// DecodeJSON reads b as one binary message into the JSON value model: an
// object with proto field names in declaration order, implicit-presence
// fields with their defaults, enums by name, bytes as base64, 64-bit
// integers as numbers and well-known types in their JSON form. Unknown
// fields are an error when strict, else dropped.
func (s *ProtoSchema) DecodeJSON(b []byte, strict bool) (_ any, err error) {
	defer panicerr.Catch(&err)
	if err := checkMapEntries(b, s.desc, s.withMaps, 0); err != nil {
		return nil, fmt.Errorf("%w: not a %s message: %v", ErrInvalidProto, s.MessageType(), err)
	}
	msg := dynamicpb.NewMessage(s.desc)
	if err := proto.Unmarshal(b, msg); err != nil {
		return nil, fmt.Errorf("%w: not a %s message: %s", ErrInvalidProto, s.MessageType(), protoErrText(err))
	}
	if strict && hasUnknownFields(msg) {
		return nil, fmt.Errorf("%w: %s message carries fields the schema does not define", ErrInvalidProto, s.MessageType())
	}
	text, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s as JSON: %s", ErrInvalidProto, s.MessageType(), protoErrText(err))
	}
	v, err := ParseJSON(text)
	if err != nil {
		return nil, err
	}
	return int64sAsNumbers(v, s.desc), nil
}

func hasUnknownFields(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					found = hasUnknownFields(mv.Message())
					return !found
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := range v.List().Len() {
					if found = hasUnknownFields(v.List().Get(i).Message()); found {
						break
					}
				}
			}
		case fd.Message() != nil:
			found = hasUnknownFields(v.Message())
		}
		return !found
	})
	return found
}

// int64sAsNumbers turns the strings protobuf's JSON mapping writes for
// 64-bit integer fields back into numbers, so a JSON round trip through a
// message keeps each value's type. Well-known types keep their JSON form.
func int64sAsNumbers(v any, md protoreflect.MessageDescriptor) any {
	obj, ok := v.(*OrderedMap)
	if !ok || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return v
	}
	for i, m := range obj.Members() {
		fd := md.Fields().ByName(protoreflect.Name(m.Key))
		if fd == nil {
			continue
		}
		switch {
		case fd.IsMap():
			if inner, ok := m.Value.(*OrderedMap); ok {
				for j, e := range inner.Members() {
					inner.members[j].Value = int64FieldValue(e.Value, fd.MapValue())
				}
			}
		case fd.IsList():
			if list, ok := m.Value.([]any); ok {
				for j := range list {
					list[j] = int64FieldValue(list[j], fd)
				}
			}
		default:
			obj.members[i].Value = int64FieldValue(m.Value, fd)
		}
	}
	return obj
}

func int64FieldValue(v any, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return int64sAsNumbers(v, fd.Message())
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return signedToModel(n)
			}
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				return n
			}
		}
	}
	return v
}

func unixMillis() int64 { return time.Now().UnixMilli() }

// protoErrText is a protobuf error's text with its deliberately unstable spacing made plain:
// protobuf-go writes a no-break space instead of a space in some builds, so that nobody relies
// on its texts; ours reach dead-letter headers, logs and dry-run expectation files, which must
// read the same from every build.
func protoErrText(err error) string {
	return strings.ReplaceAll(err.Error(), "\u00a0", " ")
}
