package tap_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// Every string of an event is written the same way, with <, > and & as they are: the JSON
// payload's text, a text payload, header keys and values, the place, the error; and the other
// events' data (dropped, end, unreachable) too.
func TestEveryStringRendersWithoutHTMLEscaping(t *testing.T) {
	str := func(s string) postcard.HeaderField {
		return postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte(s)}
	}
	for _, tc := range []struct {
		name    string
		schema  postcard.Schema
		payload string
		want    string // the line's payload member
	}{
		{"json", postcard.SchemaJSON, `{"html":"<b>&amp;</b>","password":"<&>"}`, `"payload":{"html":"<b>&amp;</b>","password":"******"}`},
		{"text", postcard.SchemaText, "<p class=\"x\">a & b</p>\n", `"payload":"<p class=\"x\">a & b</p>\n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			smp := tap.Sample{Point: tap.PointDeadLettered, Stream: "s<1>", Topic: "t&u", Schema: tc.schema, Payload: []byte(tc.payload),
				Headers: postcard.HeaderMap{{Key: str("<k>"), Value: str("a&b")}}, Err: "transform: field <x> & more"}
			line := smp.EventJSON(secrets())
			for _, want := range []string{
				`"stream":"s<1>","topic":"t&u"`,
				`"headers":[{"key":"<k>","kind":"string","value":"a&b"}]`,
				tc.want,
				`"error":"transform: field <x> & more"`,
			} {
				if !strings.Contains(string(line), want) {
					t.Errorf("line lacks %s:\n%s", want, line)
				}
			}
			if strings.Contains(string(line), `\u00`) || !json.Valid(line) {
				t.Fatalf("line escapes HTML characters, or is no JSON:\n%s", line)
			}
			// And it reads back to the same event, which writes the same line again.
			var back tap.Event
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatal(err)
			}
			again, err := tap.Marshal(&back)
			if err != nil || string(again) != string(line) {
				t.Fatalf("written again:\n%s\n%s", again, line)
			}
		})
	}
	for _, tc := range []struct{ got, want string }{
		{string(tap.DroppedJSON(3, "http://r<1>&2")), `{"dropped":3,"replica":"http://r<1>&2"}`},
		{string(tap.EndJSON("<limit>")), `{"reason":"<limit>"}`},
		{string(tap.UnreachableJSON("r&1", errors.New("dial <nowhere>"))), `{"replica":"r&1","error":"dial <nowhere>"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

// U+2028 and U+2029 are escaped in the strings the event writes, as encoding/json writes them,
// and kept as they are inside a JSON payload's own text.
func TestLineSeparatorsInStrings(t *testing.T) {
	var e tap.Event
	e.SetHeaders(nil)
	e.SetPayload(postcard.SchemaText, []byte("a\u2028b"), nil)
	if string(e.Payload) != `"a\u2028b"` {
		t.Fatalf("text payload %s", e.Payload)
	}
	e.SetPayload(postcard.SchemaJSON, []byte("\"a\u2028b\""), nil)
	if string(e.Payload) != "\"a\u2028b\"" {
		t.Fatalf("json payload %s", e.Payload)
	}
}
