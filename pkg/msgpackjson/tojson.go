package msgpackjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// ErrNotJSON: the input is not one MessagePack value that JSON can carry (malformed, trailing
// bytes, a non-finite float, nesting deeper than maxDepth).
var ErrNotJSON = errors.New("not a MessagePack value JSON can represent")

// ErrBadJSON: a JSON document FromJSON cannot encode (malformed, a malformed tagged object, an
// integer beyond 64 bits, nesting deeper than maxDepth).
var ErrBadJSON = errors.New("not a JSON document MessagePack can represent")

// maxDepth bounds nesting in both directions, so hostile input cannot exhaust the stack.
const maxDepth = 512

// Tag member names of the JSON forms of values JSON has no type for.
const (
	tagMap = "$map"
	tagBin = "$bin"
	tagExt = "$ext"
)

// ToJSON renders one MessagePack document as JSON text (see the package doc for the mapping).
func ToJSON(data []byte) ([]byte, error) {
	r := bytes.NewReader(data)
	d := msgpack.NewDecoder(r)
	var out bytes.Buffer
	if err := writeValue(&out, d, r, 0); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	if r.Len() > 0 {
		return nil, fmt.Errorf("%w: %d bytes after the first value", ErrNotJSON, r.Len())
	}
	return out.Bytes(), nil
}

// pending is a map entry decoded ahead, while finding out whether all keys are strings.
type pending struct {
	key, value []byte // JSON text
	strKey     string
	isStr      bool
}

func writeValue(out *bytes.Buffer, d *msgpack.Decoder, r *bytes.Reader, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d", maxDepth)
	}
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == msgpcode.Nil:
		out.WriteString("null")
		return d.DecodeNil()
	case c == msgpcode.True || c == msgpcode.False:
		v, err := d.DecodeBool()
		out.WriteString(strconv.FormatBool(v))
		return err
	case msgpcode.IsFixedNum(c), c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64:
		v, err := d.DecodeInt64()
		out.WriteString(strconv.FormatInt(v, 10))
		return err
	case c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32, c == msgpcode.Uint64:
		v, err := d.DecodeUint64()
		out.WriteString(strconv.FormatUint(v, 10))
		return err
	case c == msgpcode.Float, c == msgpcode.Double:
		v, err := d.DecodeFloat64()
		if err != nil {
			return err
		}
		return writeFloat(out, v)
	case msgpcode.IsString(c):
		b, err := readBytes(d, r)
		if err != nil {
			return err
		}
		text, _ := json.Marshal(string(b))
		out.Write(text)
		return nil
	case msgpcode.IsBin(c):
		b, err := readBytes(d, r)
		if err != nil {
			return err
		}
		writeTagged(out, tagBin, quoteBase64(b))
		return nil
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil {
			return err
		}
		if n > r.Len() { // every element takes at least one byte
			return fmt.Errorf("array of %d elements in %d bytes", n, r.Len())
		}
		out.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := writeValue(out, d, r, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte(']')
		return nil
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return writeMap(out, d, r, depth)
	case msgpcode.IsFixedExt(c), msgpcode.IsExt(c):
		typ, n, err := d.DecodeExtHeader()
		if err != nil {
			return err
		}
		if n > r.Len() {
			return fmt.Errorf("ext of %d bytes in %d", n, r.Len())
		}
		b := make([]byte, n)
		if err := d.ReadFull(b); err != nil {
			return err
		}
		body := fmt.Sprintf(`{"type":%d,"data":%s}`, typ, quoteBase64(b))
		writeTagged(out, tagExt, []byte(body))
		return nil
	}
	return fmt.Errorf("unknown MessagePack code 0x%02x", c)
}

func writeMap(out *bytes.Buffer, d *msgpack.Decoder, r *bytes.Reader, depth int) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	if n > r.Len() {
		return fmt.Errorf("map of %d entries in %d bytes", n, r.Len())
	}
	entries := make([]pending, 0, n)
	allStrings := true
	for i := 0; i < n; i++ {
		var e pending
		if c, err := d.PeekCode(); err == nil && msgpcode.IsString(c) {
			b, err := readBytes(d, r)
			if err != nil {
				return err
			}
			e.strKey = string(b)
			e.isStr = true
			e.key, _ = json.Marshal(e.strKey)
		} else {
			allStrings = false
			var kb bytes.Buffer
			if err := writeValue(&kb, d, r, depth+1); err != nil {
				return err
			}
			e.key = kb.Bytes()
		}
		var vb bytes.Buffer
		if err := writeValue(&vb, d, r, depth+1); err != nil {
			return err
		}
		e.value = vb.Bytes()
		entries = append(entries, e)
	}
	if len(entries) == 1 && entries[0].isStr && isTag(entries[0].strKey) {
		allStrings = false // would read back as a tagged value
	}
	if allStrings {
		out.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(e.key)
			out.WriteByte(':')
			out.Write(e.value)
		}
		out.WriteByte('}')
		return nil
	}
	var body bytes.Buffer
	body.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteByte('[')
		body.Write(e.key)
		body.WriteByte(',')
		body.Write(e.value)
		body.WriteByte(']')
	}
	body.WriteByte(']')
	writeTagged(out, tagMap, body.Bytes())
	return nil
}

// readBytes reads a str or bin value, refusing a length beyond the input before allocating it.
func readBytes(d *msgpack.Decoder, r *bytes.Reader) ([]byte, error) {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n > r.Len() {
		return nil, fmt.Errorf("%d bytes announced, %d left", n, r.Len())
	}
	b := make([]byte, max(n, 0))
	return b, d.ReadFull(b)
}

func isTag(name string) bool { return name == tagMap || name == tagBin || name == tagExt }

func writeTagged(out *bytes.Buffer, tag string, body []byte) {
	out.WriteString(`{"` + tag + `":`)
	out.Write(body)
	out.WriteByte('}')
}

func quoteBase64(b []byte) []byte {
	return []byte(`"` + base64.StdEncoding.EncodeToString(b) + `"`)
}

// writeFloat writes v with a fraction or exponent, so it reads back as a float.
func writeFloat(out *bytes.Buffer, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("float %v has no JSON form", v)
	}
	text := strconv.FormatFloat(v, 'g', -1, 64)
	if !bytes.ContainsAny([]byte(text), ".eE") {
		text += ".0"
	}
	out.WriteString(text)
	return nil
}
