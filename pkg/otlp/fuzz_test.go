package otlp_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
)

// utf8Safe is what a string becomes on the wire: protobuf strings are UTF-8,
// invalid bytes are sent as U+FFFD.
func utf8Safe(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// FuzzTraceRequest encodes a span with arbitrary attribute keys and values
// and decodes our bytes with the generated OTLP types: they must parse, and
// give back every value (strings made valid UTF-8).
func FuzzTraceRequest(f *testing.F) {
	f.Add("key", "value", int64(1), 1.5, true, []byte{1, 2}, "span")
	f.Add("", "", int64(0), 0.0, false, []byte{}, "")
	f.Add("k\xff", "\xc3\x28 invalid", int64(math.MinInt64), math.Inf(-1), false, []byte(nil), strings.Repeat("x", 200))
	f.Add("ünï", strings.Repeat("é", 10000), int64(math.MaxInt64), math.NaN(), true, bytes.Repeat([]byte{0}, 300), "\x00")
	f.Fuzz(func(t *testing.T, key, s string, i int64, fl float64, b bool, bs []byte, name string) {
		attrs := []attribute.KeyValue{
			attribute.String(key, s),
			attribute.Int64(key+"i", i),
			attribute.Float64(key+"f", fl),
			attribute.Bool(key+"b", b),
			attribute.ByteSlice(key+"y", bs),
			attribute.StringSlice(key+"ss", []string{s, key}),
			attribute.Int64Slice(key+"is", []int64{i, -i}),
			attribute.Map(key+"m", attribute.String(s, key)),
		}
		spans := tracetest.SpanStubs{{Name: name, Attributes: attrs, Resource: resource.NewSchemaless(attribute.String(key, s))}}.Snapshots()
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(otlp.AppendTraceRequest(nil, spans), &req); err != nil {
			t.Fatalf("our request does not decode: %v", err)
		}
		span := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
		if span.GetName() != utf8Safe(name) {
			t.Errorf("name %q, want %q", span.GetName(), utf8Safe(name))
		}
		got := span.GetAttributes()
		if len(got) != len(attrs) {
			t.Fatalf("%d attributes decoded, want %d", len(got), len(attrs))
		}
		for n, kv := range got {
			if kv.GetKey() != utf8Safe(string(attrs[n].Key)) {
				t.Errorf("attribute %d key %q, want %q", n, kv.GetKey(), utf8Safe(string(attrs[n].Key)))
			}
			wantValue(t, kv.GetValue(), attrs[n].Value)
		}
		// A resource drops an attribute without a key.
		resAttrs := req.GetResourceSpans()[0].GetResource().GetAttributes()
		if key == "" && len(resAttrs) != 0 || key != "" && (len(resAttrs) != 1 || resAttrs[0].GetValue().GetStringValue() != utf8Safe(s)) {
			t.Errorf("resource attributes %v", resAttrs)
		}
	})
}

// wantValue compares a decoded AnyValue with the attribute value encoded.
func wantValue(t *testing.T, got *commonpb.AnyValue, want attribute.Value) {
	t.Helper()
	if got == nil {
		t.Fatalf("no value decoded for %v", want.Emit())
	}
	bad := func() { t.Errorf("decoded %v, want %v (%v)", got, want.Emit(), want.Type()) }
	switch want.Type() {
	case attribute.STRING:
		if v, ok := got.Value.(*commonpb.AnyValue_StringValue); !ok || v.StringValue != utf8Safe(want.AsString()) {
			bad()
		}
	case attribute.INT64:
		if v, ok := got.Value.(*commonpb.AnyValue_IntValue); !ok || v.IntValue != want.AsInt64() {
			bad()
		}
	case attribute.FLOAT64:
		if v, ok := got.Value.(*commonpb.AnyValue_DoubleValue); !ok || math.Float64bits(v.DoubleValue) != math.Float64bits(want.AsFloat64()) {
			bad()
		}
	case attribute.BOOL:
		if v, ok := got.Value.(*commonpb.AnyValue_BoolValue); !ok || v.BoolValue != want.AsBool() {
			bad()
		}
	case attribute.BYTESLICE:
		if v, ok := got.Value.(*commonpb.AnyValue_BytesValue); !ok || !bytes.Equal(v.BytesValue, want.AsByteSlice()) {
			bad()
		}
	case attribute.STRINGSLICE, attribute.INT64SLICE:
		v, ok := got.Value.(*commonpb.AnyValue_ArrayValue)
		var elems []attribute.Value
		if want.Type() == attribute.STRINGSLICE {
			for _, s := range want.AsStringSlice() {
				elems = append(elems, attribute.StringValue(s))
			}
		} else {
			for _, i := range want.AsInt64Slice() {
				elems = append(elems, attribute.Int64Value(i))
			}
		}
		if !ok || len(v.ArrayValue.GetValues()) != len(elems) {
			bad()
			return
		}
		for i, e := range elems {
			wantValue(t, v.ArrayValue.GetValues()[i], e)
		}
	case attribute.MAP:
		v, ok := got.Value.(*commonpb.AnyValue_KvlistValue)
		kvs := want.AsMap()
		if !ok || len(v.KvlistValue.GetValues()) != len(kvs) {
			bad()
			return
		}
		for i, kv := range kvs {
			if v.KvlistValue.GetValues()[i].GetKey() != utf8Safe(string(kv.Key)) {
				bad()
			}
			wantValue(t, v.KvlistValue.GetValues()[i].GetValue(), kv.Value)
		}
	default:
		t.Fatalf("test does not handle %v", want.Type())
	}
}
