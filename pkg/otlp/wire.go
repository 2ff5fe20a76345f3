package otlp

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Field numbers of opentelemetry/proto/common/v1/common.proto and
// resource/v1/resource.proto.
const (
	anyString protowire.Number = 1
	anyBool   protowire.Number = 2
	anyInt    protowire.Number = 3
	anyDouble protowire.Number = 4
	anyArray  protowire.Number = 5
	anyKvlist protowire.Number = 6
	anyBytes  protowire.Number = 7

	arrayValues  protowire.Number = 1 // ArrayValue.values and KeyValueList.values
	keyValueKey  protowire.Number = 1
	keyValueVal  protowire.Number = 2
	scopeName    protowire.Number = 1
	scopeVersion protowire.Number = 2
	scopeAttrs   protowire.Number = 3
	resourceAttr protowire.Number = 1
)

// beginMessage starts an embedded message field: its tag and a one-byte
// length placeholder. endMessage fills in the length, moving the body when
// it needs a longer varint, so small messages (most of them) cost no copy.
func beginMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return append(b, 0), len(b) + 1
}

func endMessage(b []byte, start int) []byte {
	n := len(b) - start
	size := protowire.SizeVarint(uint64(n))
	if size == 1 {
		b[start-1] = byte(n)
		return b
	}
	for range size - 1 {
		b = append(b, 0)
	}
	copy(b[start+size-1:], b[start:start+n])
	protowire.AppendVarint(b[:start-1], uint64(n))
	return b
}

// appendString appends a string field when it is not empty (proto3 drops
// empty strings). Protobuf strings must be UTF-8: invalid bytes become
// U+FFFD, so one bad attribute cannot make a collector reject the batch.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendStringAlways(b, num, s)
}

// appendStringAlways appends a string field even when empty (a oneof member
// is present whatever its value).
func appendStringAlways(b []byte, num protowire.Number, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// appendKeyValues appends attributes as repeated KeyValue fields.
func appendKeyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendKeyValue(b, num, kv)
	}
	return b
}

func appendIter(b []byte, num protowire.Number, iter attribute.Iterator) []byte {
	for iter.Next() {
		b = appendKeyValue(b, num, iter.Attribute())
	}
	return b
}

func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	b, m := beginMessage(b, num)
	b = appendString(b, keyValueKey, string(kv.Key))
	b = appendAnyValue(b, keyValueVal, kv.Value)
	return endMessage(b, m)
}

// appendAnyValue appends v as an AnyValue message field, typed as the
// OpenTelemetry SDK's own OTLP transform types it: slices become arrays, maps
// key-value lists, an empty value an AnyValue with nothing set.
func appendAnyValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	b, m := beginMessage(b, num)
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		b = protowire.AppendTag(b, anyBool, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, anyInt, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = appendStringAlways(b, anyString, v.AsString())
	case attribute.BYTESLICE:
		b = appendBytes(b, anyBytes, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		var l int
		b, l = beginMessage(b, anyKvlist)
		b = appendKeyValues(b, arrayValues, v.AsMap())
		b = endMessage(b, l)
	default:
		b = appendStringAlways(b, anyString, "INVALID")
	}
	return endMessage(b, m)
}

func appendArray[T any](b []byte, vals []T, value func(T) attribute.Value) []byte {
	b, a := beginMessage(b, anyArray)
	for _, v := range vals {
		b = appendAnyValue(b, arrayValues, value(v))
	}
	return endMessage(b, a)
}

// appendResource appends a Resource message with the resource's attributes
// (in the set's sorted order).
func appendResource(b []byte, num protowire.Number, res *resource.Resource) []byte {
	b, m := beginMessage(b, num)
	b = appendIter(b, resourceAttr, res.Iter())
	return endMessage(b, m)
}

// appendScope appends an InstrumentationScope message.
func appendScope(b []byte, num protowire.Number, scope instrumentation.Scope) []byte {
	b, m := beginMessage(b, num)
	b = appendString(b, scopeName, scope.Name)
	b = appendString(b, scopeVersion, scope.Version)
	b = appendIter(b, scopeAttrs, scope.Attributes.Iter())
	return endMessage(b, m)
}

// clampUint32 bounds a count to a uint32 field.
func clampUint32(v int) uint64 {
	return uint64(min(max(v, 0), math.MaxUint32))
}

// unixNano is a time as OTLP's unsigned nanoseconds, 0 before 1970.
func unixNano(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano()))
}
