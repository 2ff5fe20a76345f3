package msgpackjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// FromJSON encodes one JSON document as MessagePack (see the package doc for the mapping): object
// members keep their order, integers take their smallest encoding, numbers with a fraction or
// exponent become float64.
func FromJSON(text []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	root, err := readNode(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the top-level value", ErrBadJSON)
	}
	var out bytes.Buffer
	if err := encodeNode(msgpack.NewEncoder(&out), root); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadJSON, err)
	}
	return out.Bytes(), nil
}

// node is one parsed JSON value: a scalar token, or an array's items, or an object's members in
// document order (MessagePack needs a container's length before its elements, so the document is
// read whole first).
type node struct {
	scalar  json.Token
	array   bool
	items   []node
	object  bool
	members []member
}

type member struct {
	name  string
	value node
}

func readNode(dec *json.Decoder, depth int) (node, error) {
	if depth > maxDepth {
		return node{}, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return node{}, err
	}
	switch tok {
	case json.Delim('['):
		n := node{array: true}
		for dec.More() {
			item, err := readNode(dec, depth+1)
			if err != nil {
				return node{}, err
			}
			n.items = append(n.items, item)
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('{'):
		n := node{object: true}
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return node{}, err
			}
			value, err := readNode(dec, depth+1)
			if err != nil {
				return node{}, err
			}
			n.members = append(n.members, member{name: name.(string), value: value})
		}
		_, err := dec.Token()
		return n, err
	}
	return node{scalar: tok}, nil
}

func encodeNode(e *msgpack.Encoder, n node) error {
	switch {
	case n.array:
		if err := e.EncodeArrayLen(len(n.items)); err != nil {
			return err
		}
		for i, item := range n.items {
			if err := encodeNode(e, item); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case n.object:
		if len(n.members) == 1 && isTag(n.members[0].name) {
			return encodeTagged(e, n.members[0])
		}
		if err := e.EncodeMapLen(len(n.members)); err != nil {
			return err
		}
		for _, m := range n.members {
			if err := e.EncodeString(m.name); err != nil {
				return err
			}
			if err := encodeNode(e, m.value); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		return nil
	}
	switch t := n.scalar.(type) {
	case nil:
		return e.EncodeNil()
	case bool:
		return e.EncodeBool(t)
	case string:
		return e.EncodeString(t)
	case json.Number:
		return encodeNumber(e, string(t))
	}
	return fmt.Errorf("unexpected token %v", n.scalar)
}

func encodeNumber(e *msgpack.Encoder, text string) error {
	if strings.ContainsAny(text, ".eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("number %s is out of the float64 range", text)
		}
		return e.EncodeFloat64(f)
	}
	if strings.HasPrefix(text, "-") {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return fmt.Errorf("integer %s is out of the int64 range", text)
		}
		return e.EncodeInt(n)
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("integer %s is out of the uint64 range", text)
	}
	return e.EncodeUint(n)
}

// encodeTagged writes the value of a {"$map"|"$bin"|"$ext": ...} object.
func encodeTagged(e *msgpack.Encoder, m member) error {
	switch m.name {
	case tagBin:
		b, err := nodeBase64(m.value)
		if err != nil {
			return fmt.Errorf("%s: %w", tagBin, err)
		}
		return e.EncodeBytes(b)
	case tagExt:
		var typ *int8
		var data []byte
		for _, f := range m.value.members {
			switch f.name {
			case "type":
				if num, ok := f.value.scalar.(json.Number); ok {
					if v, err := strconv.ParseInt(string(num), 10, 8); err == nil {
						t := int8(v)
						typ = &t
					}
				}
			case "data":
				b, err := nodeBase64(f.value)
				if err != nil {
					return fmt.Errorf("%s.data: %w", tagExt, err)
				}
				data = b
			}
		}
		if !m.value.object || typ == nil || data == nil {
			return fmt.Errorf(`%s: want {"type": -128..127, "data": "<base64>"}`, tagExt)
		}
		if err := e.EncodeExtHeader(*typ, len(data)); err != nil {
			return err
		}
		_, err := e.Writer().Write(data)
		return err
	}
	if !m.value.array {
		return fmt.Errorf("%s: want an array of [key, value] pairs", tagMap)
	}
	if err := e.EncodeMapLen(len(m.value.items)); err != nil {
		return err
	}
	for i, p := range m.value.items {
		if !p.array || len(p.items) != 2 {
			return fmt.Errorf("%s[%d]: want a [key, value] pair", tagMap, i)
		}
		for _, kv := range p.items {
			if err := encodeNode(e, kv); err != nil {
				return fmt.Errorf("%s[%d]: %w", tagMap, i, err)
			}
		}
	}
	return nil
}

func nodeBase64(n node) ([]byte, error) {
	s, ok := n.scalar.(string)
	if !ok || n.array || n.object {
		return nil, fmt.Errorf("want a base64 string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bad base64: %w", err)
	}
	return b, nil
}
