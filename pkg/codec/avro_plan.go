package codec

import (
	"fmt"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// avroNode is one node of an Avro schema compiled for the direct paths (avro_text.go writes a
// datum's JSON text, avro_fromtext.go encodes a datum from canonical JSON text): the schema's
// shape, with the JSON spellings those paths write or match computed once. Refs stay nodes of
// their own, so both paths count nesting exactly as DecodeJSON and EncodeJSON do.
type avroNode struct {
	kind     avro.Type
	fields   []avroField // record, error
	child    *avroNode   // array items, map values, the named schema a ref stands for
	branches []*avroNode // union
	symbols  [][]byte    // enum: each symbol as a JSON string literal
	size     int         // fixed
}

// avroField is one record field.
type avroField struct {
	key    []byte // what precedes the value in the record's JSON text: `"name":`, after a comma but for the first field
	quoted []byte // the name as a JSON string literal, matched against object keys
	node   *avroNode
	def    avroDefault
	text   []byte // defaultText: the default as the canonical JSON text EncodeJSON's value writes
}

// avroDefault says what EncodeJSON writes for a record field the JSON object lacks.
type avroDefault uint8

const (
	noDefault       avroDefault = iota // null
	defaultText                        // the default, held as JSON text
	defaultFails                       // the default does not convert to the value model: the record fails
	defaultUnproven                    // the direct path cannot prove it writes the same: the slow path must
)

// nullText is what a missing field without a default is encoded from.
var nullText = []byte("null")

// compileAvro compiles s; an error means the direct paths stay off for this schema.
func compileAvro(s avro.Schema) (*avroNode, error) {
	c := avroCompiler{named: map[avro.Schema]*avroNode{}}
	root, err := c.node(s)
	if err != nil {
		return nil, err
	}
	for _, r := range c.records {
		for i := range r.fields {
			r.fields[i].def, r.fields[i].text = c.defaults[r][i].kind()
		}
	}
	return root, nil
}

type avroCompiler struct {
	named    map[avro.Schema]*avroNode // named types compiled so far, so recursive schemas close
	records  []*avroNode
	defaults map[*avroNode][]fieldDefault
}

// fieldDefault is a field's default as the schema gives it, converted after the whole tree is
// compiled.
type fieldDefault struct {
	has bool
	v   any
}

func (c *avroCompiler) node(s avro.Schema) (*avroNode, error) {
	if n, ok := c.named[s]; ok {
		return n, nil
	}
	n := &avroNode{kind: s.Type()}
	switch t := s.(type) {
	case *avro.NullSchema:
	case *avro.PrimitiveSchema:
		switch t.Type() {
		case avro.Null, avro.Boolean, avro.Int, avro.Long, avro.Float, avro.Double, avro.String, avro.Bytes:
		default:
			return nil, fmt.Errorf("unsupported primitive %s", t.Type())
		}
	case *avro.RecordSchema:
		c.named[s] = n
		c.records = append(c.records, n)
		if c.defaults == nil {
			c.defaults = map[*avroNode][]fieldDefault{}
		}
		defs := make([]fieldDefault, len(t.Fields()))
		for i, f := range t.Fields() {
			child, err := c.node(f.Type())
			if err != nil {
				return nil, err
			}
			quoted := appendString(nil, f.Name())
			key := append(append([]byte(nil), quoted...), ':')
			if i > 0 {
				key = append([]byte{','}, key...)
			}
			n.fields = append(n.fields, avroField{key: key, quoted: quoted, node: child})
			defs[i] = fieldDefault{has: f.HasDefault()}
			if defs[i].has {
				defs[i].v = f.Default()
			}
		}
		c.defaults[n] = defs
	case *avro.EnumSchema:
		c.named[s] = n
		for _, sym := range t.Symbols() {
			n.symbols = append(n.symbols, appendString(nil, sym))
		}
	case *avro.FixedSchema:
		c.named[s] = n
		n.size = t.Size()
	case *avro.UnionSchema:
		for _, b := range t.Types() {
			child, err := c.node(b)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, child)
		}
	case *avro.ArraySchema:
		child, err := c.node(t.Items())
		if err != nil {
			return nil, err
		}
		n.child = child
	case *avro.MapSchema:
		child, err := c.node(t.Values())
		if err != nil {
			return nil, err
		}
		n.child = child
	case *avro.RefSchema:
		child, err := c.node(t.Schema())
		if err != nil {
			return nil, err
		}
		n.child = child
	default:
		return nil, fmt.Errorf("unsupported schema %T", s)
	}
	return n, nil
}

// kind converts a default the way recordFieldValue does, to the JSON text it writes.
func (d fieldDefault) kind() (avroDefault, []byte) {
	if !d.has {
		return noDefault, nil
	}
	v, err := avroDefaultJSON(d.v)
	if err != nil {
		return defaultFails, nil
	}
	// The text parses back to v exactly unless a string is not valid UTF-8 (written as U+FFFD).
	if !validStrings(v) {
		return defaultUnproven, nil
	}
	text, err := AppendJSON(nil, v)
	if err != nil {
		return defaultUnproven, nil
	}
	return defaultText, text
}

// validStrings reports whether every string and key in v is valid UTF-8.
func validStrings(v any) bool {
	switch t := v.(type) {
	case string:
		return utf8.ValidString(t)
	case []any:
		for _, e := range t {
			if !validStrings(e) {
				return false
			}
		}
	case *OrderedMap:
		for _, m := range t.Members() {
			if !utf8.ValidString(m.Key) || !validStrings(m.Value) {
				return false
			}
		}
	}
	return true
}
