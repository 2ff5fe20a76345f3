package dryrun_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

func TestParseSample(t *testing.T) {
	line := `{"point":"polled","stream":"s","topic":"t","partition":3,"offset":18446744073709551615,` +
		`"id":"340282366920938463463374607431768211455","timestamp":17,"headers":[` +
		`{"key":"k","kind":"string","value":"v"},{"key":"n","kind":"int16","value":-2},` +
		`{"key":1,"key_kind":"uint8","kind":"float32","value":1.5},{"key":"/w==","key_kind":"string","key_encoding":"base64","kind":"raw","value":"AAE=","encoding":"base64"}],` +
		`"schema":"json","size":99,"payload":{"a": [1, 2]}}`
	s, err := dryrun.ParseSample([]byte(line), 4)
	if err != nil {
		t.Fatal(err)
	}
	if s.Line != 4 || s.Stream != "s" || s.Topic != "t" || s.Partition != 3 || *s.Offset != 1<<64-1 || s.Timestamp != 17 ||
		*s.ID != (postcard.Uint128{Hi: 1<<64 - 1, Lo: 1<<64 - 1}) || *s.Schema != postcard.SchemaJSON {
		t.Fatalf("sample %+v", s)
	}
	payload, err := s.Payload(postcard.SchemaRaw)
	if err != nil || string(payload) != `{"a": [1, 2]}` {
		t.Fatalf("payload %q, %v: want the JSON text as written", payload, err)
	}
	want := postcard.HeaderMap{
		{Key: field(postcard.HeaderKindString, "k"), Value: field(postcard.HeaderKindString, "v")},
		{Key: field(postcard.HeaderKindString, "n"), Value: field(postcard.HeaderKindInt16, "\xfe\xff")},
		{Key: field(postcard.HeaderKindUint8, "\x01"), Value: field(postcard.HeaderKindFloat32, "\x00\x00\xc0\x3f")},
		{Key: field(postcard.HeaderKindString, "\xff"), Value: field(postcard.HeaderKindRaw, "\x00\x01")},
	}
	if got := *s.Headers; !sameHeaders(got, want) {
		t.Fatalf("headers %v, want %v", got, want)
	}

	for _, tc := range []struct {
		line, schema, want string
	}{
		{`{"payload":"hé"}`, "text", "hé"},
		{`{"payload":"hé"}`, "json", `"hé"`},
		{`{"payload":"AAE=","encoding":"base64"}`, "text", "\x00\x01"},
		{`{"payload":null}`, "json", "null"},
		{`{"payload":"x","schema":"text"}`, "json", "x"}, // the sample's own schema wins
	} {
		s, err := dryrun.ParseSample([]byte(tc.line), 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		schema := map[string]postcard.Schema{"text": postcard.SchemaText, "json": postcard.SchemaJSON}[tc.schema]
		if got, err := s.Payload(schema); err != nil || string(got) != tc.want {
			t.Errorf("%s as %s: %q, %v; want %q", tc.line, tc.schema, got, err, tc.want)
		}
	}
}

func field(kind postcard.HeaderKind, v string) postcard.HeaderField {
	return postcard.HeaderField{Kind: kind, Value: []byte(v)}
}

func sameHeaders(a, b postcard.HeaderMap) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key.Kind != b[i].Key.Kind || a[i].Value.Kind != b[i].Value.Kind ||
			!bytes.Equal(a[i].Key.Value, b[i].Key.Value) || !bytes.Equal(a[i].Value.Value, b[i].Value.Value) {
			return false
		}
	}
	return true
}

// A bad line is refused naming the field, whatever is wrong with it.
func TestParseSampleRefusesBadLines(t *testing.T) {
	for _, tc := range []struct{ line, field, msg string }{
		{`{"payload":1,`, "", "not a JSON object"},
		{`[1]`, "", "not a JSON object"},
		{`{"payload":1} {"payload":2}`, "", "more than one JSON value"},
		{`{"stream":"s"}`, "payload", "required"},
		{`{"paylod":1}`, "paylod", "unknown field"},
		{`{"payload":1,"offset":-1}`, "offset", "unsigned 64-bit"},
		{`{"payload":1,"offset":1.5}`, "offset", "unsigned 64-bit"},
		{`{"payload":1,"partition":4294967296}`, "partition", "unsigned 32-bit"},
		{`{"payload":1,"stream":7}`, "stream", "expected a string"},
		{`{"payload":1,"id":"-1"}`, "id", "from 0 to 2^128-1"},
		{`{"payload":1,"id":"340282366920938463463374607431768211456"}`, "id", "from 0 to 2^128-1"},
		{`{"payload":1,"id":"0x10"}`, "id", "from 0 to 2^128-1"},
		{`{"payload":1,"schema":"xml"}`, "schema", `unknown schema "xml"`},
		{`{"payload":1,"schema":"text"}`, "payload", "a text payload is a JSON string"},
		{`{"payload":1,"encoding":"base64"}`, "payload", "must be a string of base64"},
		{`{"payload":"!!","encoding":"base64"}`, "payload", "invalid base64"},
		{`{"payload":1,"encoding":"hex"}`, "encoding", `unknown encoding "hex"`},
		{`{"payload":1,"headers":{}}`, "headers", "expected a list"},
		{`{"payload":1,"headers":[1]}`, "headers[0]", "expected an object"},
		{`{"payload":1,"headers":[{"key":"k","kind":"string","value":"v","x":1}]}`, "headers[0].x", "unknown field"},
		{`{"payload":1,"headers":[{"kind":"string","value":"v"}]}`, "headers[0].key", "required"},
		{`{"payload":1,"headers":[{"key":"k","kind":"strng","value":"v"}]}`, "headers[0].kind", `unknown header kind "strng"`},
		{`{"payload":1,"headers":[{"key":"k","key_kind":"nope","value":"v"}]}`, "headers[0].key_kind", "unknown header kind"},
		{`{"payload":1,"headers":[{"key":"k","kind":"uint8","value":256}]}`, "headers[0].value", "unsigned integer of 8 bits"},
		{`{"payload":1,"headers":[{"key":"k","kind":"int8","value":"1"}]}`, "headers[0].value", "integer of 8 bits"},
		{`{"payload":1,"headers":[{"key":"k","kind":"bool","value":1}]}`, "headers[0].value", "true or false"},
		{`{"payload":1,"headers":[{"key":"k","kind":"float64","value":"Inf"}]}`, "headers[0].value", "is a number"},
		{`{"payload":1,"headers":[{"key":"k","kind":"raw","value":"AA"}]}`, "headers[0].value", "base64 text with encoding"},
		{`{"payload":1,"headers":[{"key":"k","kind":"string","value":"AA","encoding":"b64"}]}`, "headers[0].encoding", "unknown encoding"},
		{`{"payload":1,"headers":[{"key":"k","key_encoding":"base64","kind":"string","value":"v"}]}`, "headers[0].key", "invalid base64"},
	} {
		_, err := dryrun.ParseSample([]byte(tc.line), 9)
		var p *dryrun.Problem
		if !errors.As(err, &p) {
			t.Errorf("%s: got %v, want a problem", tc.line, err)
			continue
		}
		if p.Input != dryrun.InputSamples || p.Line != 9 || p.Field != tc.field || !strings.Contains(p.Message, tc.msg) {
			t.Errorf("%s: got %+v, want field %q and a message with %q", tc.line, p, tc.field, tc.msg)
		}
	}
}

func TestReadSamples(t *testing.T) {
	in := "{\"payload\":1}\r\n\n   \n{\"payload\":2,\"offset\":\"x\"}\n{\"payload\":3}\n[\n{\"payload\":" + strings.Repeat("1", 70<<10) + "}"
	samples, problems := dryrun.ReadSamples(strings.NewReader(in))
	if len(samples) != 3 || samples[0].Line != 1 || samples[1].Line != 5 || samples[2].Line != 7 {
		t.Fatalf("samples %+v", samples)
	}
	if len(problems) != 2 || problems[0].Line != 4 || problems[0].Field != "offset" || problems[1].Line != 6 {
		t.Fatalf("problems %+v", problems)
	}
	if got := problems[0].Where("c.toml", "in.jsonl"); got != `in.jsonl:4: offset: expected an unsigned 64-bit integer, got "x"` {
		t.Fatalf("Where = %q", got)
	}
	if got := (&dryrun.Problem{Input: dryrun.InputConfig, Field: "streams[0].schema", Message: "bad"}).Where("c.toml", "in.jsonl"); got != "c.toml: streams[0].schema: bad" {
		t.Fatalf("Where = %q", got)
	}
}

// What pkg/tap renders reads back to the same bytes: every payload and header written by
// Event.SetPayload and Event.SetHeaders, as a tap or a dry run prints it.
func TestSampleReadsBackTapEvents(t *testing.T) {
	for _, schema := range []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText,
		postcard.SchemaProto, postcard.SchemaFlatBuffer, postcard.SchemaAvro} {
		for _, payload := range []string{`{"a":[1,2.5,"<x>"]}`, `"s"`, "plain text", "\x00\xff\x10", ""} {
			roundTrip(t, schema, []byte(payload), allKindsHeaders(), postcard.Uint128{Hi: 3, Lo: 9})
		}
	}
}

func allKindsHeaders() postcard.HeaderMap {
	var hs postcard.HeaderMap
	for k := postcard.HeaderKind(0); k.Valid(); k++ {
		for _, v := range []string{"", "\x01", "\x01\x02", "\x00\x00\x80\x7f", "\x00\x00\x00\x00\x00\x00\xf0\x3f", "\xff\xff\xff\xff\xff\xff\xff\xff", "héllo", "\xfe"} {
			hs = append(hs, postcard.HeaderEntry{Key: field(k, v), Value: field(postcard.HeaderKind(14-k), v)})
		}
	}
	return hs
}

// roundTrip renders an event as a tap would, reads it back as a sample and renders that again:
// the two lines are equal, and the bytes are the original ones (a JSON payload up to the
// compaction json.Marshal applies to it).
func roundTrip(t testing.TB, schema postcard.Schema, payload []byte, hs postcard.HeaderMap, id postcard.Uint128) {
	t.Helper()
	e := tap.Event{Point: tap.PointPolled, Stream: "s", Topic: "t", Partition: 1, Offset: 2, ID: tap.ID(id), Timestamp: 3}
	e.SetHeaders(hs)
	e.SetPayload(schema, payload, nil)
	line, err := tap.Marshal(&e)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	s, err := dryrun.ParseSample(line, 1)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	got, err := s.Payload(postcard.SchemaRaw)
	if err != nil {
		t.Fatalf("%s: payload: %v", line, err)
	}
	want := payload
	if e.Encoding == "" && schema != postcard.SchemaText { // JSON text: compacted in the line
		var compact bytes.Buffer
		if err := json.Compact(&compact, payload); err != nil {
			t.Fatalf("payload %q rendered as JSON: %v", payload, err)
		}
		want = compact.Bytes()
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: payload %q, want %q", line, got, want)
	}
	if hs == nil {
		hs = postcard.HeaderMap{}
	}
	if !sameHeaders(*s.Headers, hs) || *s.ID != id || s.Stream != "s" || *s.Offset != 2 || s.Partition != 1 || s.Timestamp != 3 {
		t.Fatalf("%s: read back as %+v", line, s)
	}
	again := tap.Event{Point: tap.PointPolled, Stream: s.Stream, Topic: s.Topic, Partition: s.Partition, Offset: *s.Offset, ID: tap.ID(*s.ID), Timestamp: s.Timestamp}
	again.SetHeaders(*s.Headers)
	again.SetPayload(*s.Schema, got, nil)
	again.Size = e.Size // the size of the bytes, not of their compacted text
	line2, _ := tap.Marshal(&again)
	if !bytes.Equal(line, line2) {
		t.Fatalf("rendered again differently:\n%s\n%s", line, line2)
	}
}
