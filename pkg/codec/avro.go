package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/hamba/avro/v2"

	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// ErrInvalidAvro: bytes that are not one datum of the Avro schema, or a JSON
// value the schema cannot hold.
var ErrInvalidAvro = errors.New("invalid Avro payload")

// ErrAvroSchema: an Avro schema that cannot be read or does not parse.
var ErrAvroSchema = errors.New("invalid Avro schema")

// maxAvroDepth bounds the nesting of decoded and encoded values, so a
// recursive schema fed hostile bytes cannot exhaust the stack.
const maxAvroDepth = 256

// avroSpareElements is how many array or map elements a datum may hold
// beyond one per input byte. Only items that encode to zero bytes (null,
// empty records) can exceed one per byte; the cap stops a tiny input from
// claiming billions of them.
const avroSpareElements = 4096

// avroConfig keeps the library's 1 MiB cap on any single bytes or string
// value (a message is at most that large anyway).
var avroConfig = avro.Config{MaxByteSliceSize: 1 << 20}.Freeze()

// AvroSchema is a parsed Avro schema that converts between the JSON value
// model and one bare binary datum (no container file, no fingerprint
// header), the format upstream reads and writes. Safe for concurrent use.
type AvroSchema struct {
	schema avro.Schema
	text   string
	plan   *avroNode // the schema compiled for the direct paths; nil keeps them off
}

// ParseAvroSchema parses a schema written in Avro's JSON schema language.
// Named types are resolved within this one schema only.
func ParseAvroSchema(text string) (*AvroSchema, error) {
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAvroSchema, err)
	}
	plan, _ := compileAvro(s) // a schema it cannot compile only keeps the direct paths off
	return &AvroSchema{schema: s, text: text, plan: plan}, nil
}

// LoadAvroSchema reads and parses the schema file at path; errors name the
// file.
func LoadAvroSchema(path string) (*AvroSchema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrAvroSchema, path, errors.Unwrap(err))
	}
	s, err := ParseAvroSchema(string(b))
	if err != nil {
		return nil, fmt.Errorf("avro schema file %s: %w", path, err)
	}
	return s, nil
}

// avroSchemaFromOptions builds the schema a stream entry names:
// avro_schema_json wins over avro_schema_path, as upstream. It returns nil
// when neither is set.
func avroSchemaFromOptions(opts Options) (*AvroSchema, error) {
	if text, _ := opts["avro_schema_json"].(string); text != "" {
		s, err := ParseAvroSchema(text)
		if err != nil {
			return nil, fmt.Errorf("avro_schema_json: %w", err)
		}
		return s, nil
	}
	if path, _ := opts["avro_schema_path"].(string); path != "" {
		s, err := LoadAvroSchema(path)
		if err != nil {
			return nil, fmt.Errorf("avro_schema_path: %w", err)
		}
		return s, nil
	}
	return nil, nil
}

// String returns the schema's canonical form.
func (s *AvroSchema) String() string { return s.schema.String() }

// DecodeJSON decodes exactly one datum (trailing bytes are an error) into
// the JSON value model the way upstream converts Avro values: records become
// objects in schema field order, unions are unwrapped, enums become their
// symbol, bytes and fixed become arrays of numbers, maps become objects and
// logical types are left as their underlying values.
func (s *AvroSchema) DecodeJSON(b []byte) (_ any, err error) {
	defer panicerr.Catch(&err)
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty payload", ErrInvalidAvro)
	}
	d := avroReaders.Get().(*avroReader)
	defer func() {
		d.r.Reset(nil)
		d.r.Error = nil
		avroReaders.Put(d)
	}()
	d.r.Reset(b)
	d.size, d.budget = len(b), len(b)+avroSpareElements
	v, err := d.value(s.schema, 0)
	if err == nil && d.r.Error != nil {
		err = d.r.Error
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: the datum is truncated", ErrInvalidAvro)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidAvro, err)
	}
	d.r.Peek() // sets io.EOF when every byte was consumed
	if d.r.Error == nil {
		return nil, fmt.Errorf("%w: trailing bytes after the datum", ErrInvalidAvro)
	}
	return v, nil
}

type avroReader struct {
	r      *avro.Reader
	size   int    // of the whole datum
	budget int    // array and map elements left
	slab   []byte // kept across decodes, carved front to back
}

// avroSlabSize is the chunk small strings are carved from, as hamba's reader does.
const avroSlabSize = 1024

// lengthPrefixed reads a bytes or string value. hamba's reader allocates the length a value
// claims before it reads (up to MaxByteSliceSize), so a few bytes claiming a 1 MiB string cost
// 1 MiB each; a length beyond the whole datum fails here before anything is allocated. Small
// values share a slab; the result is never overwritten, so strings may alias it.
func (d *avroReader) lengthPrefixed(what string) ([]byte, error) {
	n := d.r.ReadLong()
	if d.r.Error != nil {
		return nil, d.r.Error
	}
	if n < 0 {
		return nil, fmt.Errorf("invalid %s length %d", what, n)
	}
	if n > int64(d.size) {
		return nil, fmt.Errorf("the datum is truncated: a %s of %d bytes in a %d-byte datum", what, n, d.size)
	}
	if n == 0 {
		return []byte{}, nil
	}
	var buf []byte
	if n <= avroSlabSize {
		if cap(d.slab)-len(d.slab) < int(n) {
			d.slab = make([]byte, 0, avroSlabSize)
		}
		buf = d.slab[len(d.slab) : len(d.slab)+int(n)]
		d.slab = d.slab[:len(d.slab)+int(n)]
	} else {
		buf = make([]byte, n)
	}
	d.r.Read(buf)
	return buf, d.r.Error
}

// str reads a string value that must be UTF-8; it aliases the slab.
func (d *avroReader) str(what string) (string, error) {
	b, err := d.lengthPrefixed(what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s is not valid UTF-8", what)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

func (d *avroReader) value(s avro.Schema, depth int) (any, error) {
	if depth > maxAvroDepth {
		return nil, fmt.Errorf("nesting deeper than %d", maxAvroDepth)
	}
	r := d.r
	switch s.Type() {
	case avro.Null:
		return nil, nil
	case avro.Boolean:
		// The spec allows only 0 and 1; hamba reads any non-zero as true.
		b := r.Peek()
		if r.Error == nil && b > 1 {
			return nil, fmt.Errorf("boolean byte %#x", b)
		}
		return r.ReadBool(), r.Error
	case avro.Int:
		return signedToModel(int64(r.ReadInt())), r.Error
	case avro.Long:
		return signedToModel(r.ReadLong()), r.Error
	case avro.Float:
		return finiteAvroFloat(float64(r.ReadFloat()), r.Error)
	case avro.Double:
		return finiteAvroFloat(r.ReadDouble(), r.Error)
	case avro.String:
		str, err := d.str("string")
		if err != nil {
			return nil, err
		}
		return str, nil
	case avro.Bytes:
		b, err := d.lengthPrefixed("bytes")
		if err != nil {
			return nil, err
		}
		return byteNumbers(b), nil
	case avro.Fixed:
		buf := make([]byte, s.(*avro.FixedSchema).Size())
		r.Read(buf)
		return byteNumbers(buf), r.Error
	case avro.Enum:
		symbols := s.(*avro.EnumSchema).Symbols()
		i := r.ReadInt()
		if r.Error != nil {
			return nil, r.Error
		}
		if i < 0 || int(i) >= len(symbols) {
			return nil, fmt.Errorf("enum index %d out of range (%d symbols)", i, len(symbols))
		}
		return symbols[i], nil
	case avro.Union:
		types := s.(*avro.UnionSchema).Types()
		i := r.ReadLong()
		if r.Error != nil {
			return nil, r.Error
		}
		if i < 0 || i >= int64(len(types)) {
			return nil, fmt.Errorf("union branch %d out of range (%d branches)", i, len(types))
		}
		return d.value(types[i], depth+1)
	case avro.Record, avro.Error:
		fields := s.(*avro.RecordSchema).Fields()
		obj := NewOrderedMap(len(fields))
		for _, f := range fields {
			v, err := d.value(f.Type(), depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name(), err)
			}
			obj.Set(f.Name(), v)
		}
		return obj, nil
	case avro.Ref:
		return d.value(s.(*avro.RefSchema).Schema(), depth+1)
	case avro.Array:
		items := s.(*avro.ArraySchema).Items()
		out := []any{}
		err := d.blocks(func() error {
			v, err := d.value(items, depth+1)
			out = append(out, v)
			return err
		})
		return out, err
	case avro.Map:
		values := s.(*avro.MapSchema).Values()
		obj := NewOrderedMap(0)
		err := d.blocks(func() error {
			key, err := d.str("map key")
			if err != nil {
				return err
			}
			v, err := d.value(values, depth+1)
			obj.Set(key, v)
			return err
		})
		return obj, err
	}
	return nil, fmt.Errorf("unsupported schema type %s", s.Type())
}

// blocks reads the block-encoded items of an array or map.
func (d *avroReader) blocks(item func() error) error {
	for {
		n, _ := d.r.ReadBlockHeader()
		if d.r.Error != nil {
			return d.r.Error
		}
		if n == 0 {
			return nil
		}
		if n < 0 || n > int64(d.budget) {
			return fmt.Errorf("block of %d items exceeds what the payload can hold", n)
		}
		d.budget -= int(n)
		for range n {
			if err := item(); err != nil {
				return err
			}
			if d.r.Error != nil {
				return d.r.Error
			}
		}
	}
}

func finiteAvroFloat(f float64, readErr error) (any, error) {
	if readErr != nil {
		return nil, readErr
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v cannot be represented in JSON", f)
	}
	return f, nil
}

func byteNumbers(b []byte) []any {
	out := make([]any, len(b))
	for i, c := range b {
		out[i] = uint64(c)
	}
	return out
}

// EncodeJSON writes v (the JSON value model) as one datum of the schema.
// Record fields are matched by name; a missing field takes the field's
// default when the schema declares one, else null. A union takes its first
// branch that can hold the value; int must fit in 32 bits; bytes and fixed
// take a string or an array of numbers 0..255; enums take a symbol; float
// and double take any number. Errors name the path to the offending value.
func (s *AvroSchema) EncodeJSON(v any) (_ []byte, err error) {
	defer panicerr.Catch(&err)
	w := avroWriters.Get().(*avro.Writer)
	defer func() {
		w.Reset(nil)
		w.Error = nil
		avroWriters.Put(w)
	}()
	if err := encodeAvro(w, s.schema, v, 0); err != nil {
		return nil, fmt.Errorf("%w: $%v", ErrInvalidAvro, err)
	}
	if w.Error != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidAvro, w.Error)
	}
	return append([]byte(nil), w.Buffer()...), nil
}

// avroReaders reuses decoders and their string slabs: strings are carved
// from a slab front to back and never overwritten, so they stay valid.
var avroReaders = sync.Pool{New: func() any {
	return &avroReader{r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfig))}
}}

// avroWriters reuses encode buffers; the result is copied out of them.
var avroWriters = sync.Pool{New: func() any { return avro.NewWriter(nil, 256, avro.WithWriterConfig(avroConfig)) }}

// encodeAvro writes v as s. An error's text starts with where v sits relative to the value
// being encoded (empty here, ".name" and "[i]" steps prepended by the levels above) and then
// ": what is wrong"; the caller prepends "$". Paths are built only on failure: a concatenation
// per field was an eighth of an Avro stream's CPU.
func encodeAvro(w *avro.Writer, s avro.Schema, v any, depth int) error {
	if depth > maxAvroDepth {
		return fmt.Errorf(": nesting deeper than %d", maxAvroDepth)
	}
	mismatch := func() error {
		return fmt.Errorf(": %s does not fit Avro type %s", describeJSON(v), avroTypeName(s))
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return mismatch()
		}
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		w.WriteBool(b)
	case avro.Int:
		i, ok := jsonInteger(v, math.MinInt32, math.MaxInt32)
		if !ok {
			return mismatch()
		}
		w.WriteInt(int32(i))
	case avro.Long:
		i, ok := jsonInteger(v, math.MinInt64, math.MaxInt64)
		if !ok {
			return mismatch()
		}
		w.WriteLong(i)
	case avro.Float:
		f, ok := JSONNumber(v)
		if !ok || math.IsInf(float64(float32(f)), 0) {
			return mismatch()
		}
		w.WriteFloat(float32(f))
	case avro.Double:
		f, ok := JSONNumber(v)
		if !ok {
			return mismatch()
		}
		w.WriteDouble(f)
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return mismatch()
		}
		w.WriteString(str)
	case avro.Bytes:
		b, ok := jsonBytes(v)
		if !ok {
			return mismatch()
		}
		w.WriteBytes(b)
	case avro.Fixed:
		b, ok := jsonBytes(v)
		if !ok || len(b) != s.(*avro.FixedSchema).Size() {
			return mismatch()
		}
		_, _ = w.Write(b)
	case avro.Enum:
		str, ok := v.(string)
		if !ok {
			return mismatch()
		}
		i := indexOf(s.(*avro.EnumSchema).Symbols(), str)
		if i < 0 {
			return fmt.Errorf(": %q is not a symbol of enum %s", str, avroTypeName(s))
		}
		w.WriteInt(int32(i))
	case avro.Union:
		for i, branch := range s.(*avro.UnionSchema).Types() {
			if avroAccepts(branch, v, 0) {
				w.WriteLong(int64(i))
				return encodeAvro(w, branch, v, depth+1)
			}
		}
		return mismatch()
	case avro.Record, avro.Error:
		obj, ok := v.(*OrderedMap)
		if !ok {
			return mismatch()
		}
		for _, f := range s.(*avro.RecordSchema).Fields() {
			fv, err := recordFieldValue(obj, f)
			if err != nil {
				return fmt.Errorf(".%s: %w", f.Name(), err)
			}
			if err := encodeAvro(w, f.Type(), fv, depth+1); err != nil {
				return fmt.Errorf(".%s%w", f.Name(), err)
			}
		}
	case avro.Ref:
		return encodeAvro(w, s.(*avro.RefSchema).Schema(), v, depth+1)
	case avro.Array:
		items, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		if len(items) > 0 {
			w.WriteBlockHeader(int64(len(items)), 0)
			for i, item := range items {
				if err := encodeAvro(w, s.(*avro.ArraySchema).Items(), item, depth+1); err != nil {
					return fmt.Errorf("[%d]%w", i, err)
				}
			}
		}
		w.WriteBlockHeader(0, 0)
	case avro.Map:
		obj, ok := v.(*OrderedMap)
		if !ok {
			return mismatch()
		}
		if obj.Len() > 0 {
			w.WriteBlockHeader(int64(obj.Len()), 0)
			for _, m := range obj.Members() {
				w.WriteString(m.Key)
				if err := encodeAvro(w, s.(*avro.MapSchema).Values(), m.Value, depth+1); err != nil {
					return fmt.Errorf(".%s%w", m.Key, err)
				}
			}
		}
		w.WriteBlockHeader(0, 0)
	default:
		return fmt.Errorf(": unsupported Avro type %s", s.Type())
	}
	return nil
}

// recordFieldValue is the value written for field f: the object's member,
// else the field default, else null.
func recordFieldValue(obj *OrderedMap, f *avro.Field) (any, error) {
	if v, ok := obj.Get(f.Name()); ok {
		return v, nil
	}
	if !f.HasDefault() {
		return nil, nil
	}
	return avroDefaultJSON(f.Default())
}

// avroDefaultJSON converts a field's default, as hamba gives it, to the JSON value model. hamba
// stands for a null inside a record's default with a value of its own type, whose MarshalJSON
// writes null; JSONFromGo would refuse it, failing every record that lacks the field.
func avroDefaultJSON(v any) (any, error) {
	return JSONFromGo(unmarshalDefaults(v))
}

// unmarshalDefaults replaces the json.Marshaler values in v (maps and slices as hamba parses
// defaults) with what their JSON text parses to.
func unmarshalDefaults(v any) any {
	switch t := v.(type) {
	case *OrderedMap, time.Time: // JSONFromGo's own
		return v
	case json.Marshaler:
		text, err := t.MarshalJSON()
		if err != nil {
			return v
		}
		parsed, err := ParseJSON(text)
		if err != nil {
			return v
		}
		return parsed
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = unmarshalDefaults(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = unmarshalDefaults(e)
		}
		return out
	}
	return v
}

// avroAccepts reports whether encodeAvro would succeed for v, so a union
// can pick its branch before writing anything.
func avroAccepts(s avro.Schema, v any, depth int) bool {
	if depth > maxAvroDepth {
		return false
	}
	switch s.Type() {
	case avro.Null:
		return v == nil
	case avro.Boolean:
		_, ok := v.(bool)
		return ok
	case avro.Int:
		_, ok := jsonInteger(v, math.MinInt32, math.MaxInt32)
		return ok
	case avro.Long:
		_, ok := jsonInteger(v, math.MinInt64, math.MaxInt64)
		return ok
	case avro.Float:
		f, ok := JSONNumber(v)
		return ok && !math.IsInf(float64(float32(f)), 0)
	case avro.Double:
		_, ok := JSONNumber(v)
		return ok
	case avro.String:
		_, ok := v.(string)
		return ok
	case avro.Bytes:
		_, ok := jsonBytes(v)
		return ok
	case avro.Fixed:
		b, ok := jsonBytes(v)
		return ok && len(b) == s.(*avro.FixedSchema).Size()
	case avro.Enum:
		str, ok := v.(string)
		return ok && indexOf(s.(*avro.EnumSchema).Symbols(), str) >= 0
	case avro.Union:
		for _, branch := range s.(*avro.UnionSchema).Types() {
			if avroAccepts(branch, v, depth+1) {
				return true
			}
		}
		return false
	case avro.Record, avro.Error:
		obj, ok := v.(*OrderedMap)
		if !ok {
			return false
		}
		for _, f := range s.(*avro.RecordSchema).Fields() {
			fv, err := recordFieldValue(obj, f)
			if err != nil || !avroAccepts(f.Type(), fv, depth+1) {
				return false
			}
		}
		return true
	case avro.Ref:
		return avroAccepts(s.(*avro.RefSchema).Schema(), v, depth+1)
	case avro.Array:
		items, ok := v.([]any)
		if !ok {
			return false
		}
		for _, item := range items {
			if !avroAccepts(s.(*avro.ArraySchema).Items(), item, depth+1) {
				return false
			}
		}
		return true
	case avro.Map:
		obj, ok := v.(*OrderedMap)
		if !ok {
			return false
		}
		for _, m := range obj.Members() {
			if !avroAccepts(s.(*avro.MapSchema).Values(), m.Value, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonInteger returns an integer JSON value within [lo, hi].
func jsonInteger(v any, lo, hi int64) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, n >= lo && n <= hi
	case uint64:
		return int64(n), n <= uint64(hi)
	}
	return 0, false
}

// jsonBytes reads a string (its UTF-8 bytes) or an array of numbers 0..255.
func jsonBytes(v any) ([]byte, bool) {
	switch t := v.(type) {
	case string:
		return []byte(t), true
	case []any:
		out := make([]byte, len(t))
		for i, e := range t {
			n, ok := jsonInteger(e, 0, 255)
			if !ok {
				return nil, false
			}
			out[i] = byte(n)
		}
		return out, true
	}
	return nil, false
}

func indexOf(list []string, s string) int {
	for i, e := range list {
		if e == s {
			return i
		}
	}
	return -1
}

func avroTypeName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return fmt.Sprintf("%s %q", s.Type(), n.FullName())
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		names := make([]string, len(u.Types()))
		for i, t := range u.Types() {
			names[i] = string(t.Type())
		}
		return "union [" + strings.Join(names, ", ") + "]"
	}
	return string(s.Type())
}

// describeJSON names a JSON value's kind for error messages.
func describeJSON(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int64, uint64:
		return fmt.Sprintf("the integer %v", t)
	case float64:
		return fmt.Sprintf("the number %v", t)
	case []any:
		return "an array"
	case *OrderedMap:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// avro stream codec (docs/pipeline.md §3.2, §3.3).
type (
	avroStreamDecoder struct{ schema *AvroSchema }
	avroStreamEncoder struct{ schema *AvroSchema }
)

func newAvroDecoder(_ postcard.Schema, opts Options) (Decoder, error) {
	s, err := avroSchemaFromOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("schema \"avro\": %w", err)
	}
	if s == nil {
		// Upstream starts and then fails every message; a sink that can
		// decode nothing is better refused at start.
		return nil, fmt.Errorf("schema \"avro\": %w: a sink needs avro_schema_json or avro_schema_path", ErrInvalidOption)
	}
	return avroStreamDecoder{s}, nil
}

func newAvroEncoder(_ postcard.Schema, opts Options) (Encoder, error) {
	s, err := avroSchemaFromOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("schema \"avro\": %w", err)
	}
	// Without a schema a source can still pass Avro and Raw payloads through.
	return avroStreamEncoder{s}, nil
}

func (avroStreamDecoder) Schema() postcard.Schema { return postcard.SchemaAvro }
func (d avroStreamDecoder) Decode(b []byte) (Payload, error) {
	v, err := d.schema.DecodeJSON(b)
	if err != nil {
		return Payload{}, err
	}
	return JSONPayload(v), nil
}

// NewAvroEncoder returns the avro stream encoder for schema, which may be
// nil (then only byte payloads pass).
func NewAvroEncoder(schema *AvroSchema) Encoder { return avroStreamEncoder{schema} }

func (avroStreamEncoder) Schema() postcard.Schema { return postcard.SchemaAvro }
func (e avroStreamEncoder) Encode(p Payload) ([]byte, error) {
	switch p.Kind {
	case postcard.SchemaAvro, postcard.SchemaRaw, postcard.SchemaFlatBuffer:
		return p.Bytes, nil
	case postcard.SchemaJSON:
		return e.encodeJSON(p.JSON)
	case postcard.SchemaText, postcard.SchemaProto:
		v, err := ParseJSON([]byte(p.Text))
		if err != nil {
			return nil, fmt.Errorf("%w: the avro encoder takes text only when it is JSON: %v", ErrInvalidPayloadType, err)
		}
		return e.encodeJSON(v)
	}
	return nil, fmt.Errorf("%w: payload kind %s", ErrInvalidPayloadType, p.Kind)
}

func (e avroStreamEncoder) encodeJSON(v any) ([]byte, error) {
	if e.schema == nil {
		return nil, fmt.Errorf("%w: no Avro schema configured (set avro_schema_json or avro_schema_path)", ErrInvalidAvro)
	}
	return e.schema.EncodeJSON(v)
}
