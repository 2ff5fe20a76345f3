package tap_test

import (
	"encoding/json"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

func TestSetPayload(t *testing.T) {
	secrets := config.SecretKeys(config.DefaultSecretKeys)
	for _, tc := range []struct {
		name     string
		schema   postcard.Schema
		payload  string
		want     string
		encoding string
	}{
		{"json kept byte for byte", postcard.SchemaJSON, `{"b":1, "a":[2]}`, `{"b":1, "a":[2]}`, ""},
		{"json secret masked in place", postcard.SchemaJSON, `{"user":"u", "db":{"password":"p"}}`, `{"user":"u", "db":{"password":"******"}}`, ""},
		{"json big number kept", postcard.SchemaJSON, `{"token":"","n":12345678901234567890}`, `{"token":"","n":12345678901234567890}`, ""},
		{"invalid json as base64", postcard.SchemaJSON, `{"a":`, `"eyJhIjo="`, "base64"},
		{"text", postcard.SchemaText, "héllo\n", `"héllo\n"`, ""},
		{"text not utf-8", postcard.SchemaText, "\xff", `"/w=="`, "base64"},
		{"raw", postcard.SchemaRaw, "\x00\x01", `"AAE="`, "base64"},
		{"avro", postcard.SchemaAvro, "\x02a", `"AmE="`, "base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e tap.Event
			e.SetPayload(tc.schema, []byte(tc.payload), secrets)
			if string(e.Payload) != tc.want || e.Encoding != tc.encoding || e.Size != len(tc.payload) || e.Schema != tc.schema.String() {
				t.Fatalf("got payload %s encoding %q size %d schema %q; want %s %q %d %q",
					e.Payload, e.Encoding, e.Size, e.Schema, tc.want, tc.encoding, len(tc.payload), tc.schema)
			}
			if !json.Valid(e.Payload) {
				t.Fatalf("payload %s is not JSON", e.Payload)
			}
		})
	}
}

func TestSetHeadersAndID(t *testing.T) {
	var e tap.Event
	e.SetHeaders(postcard.HeaderMap{
		{Key: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("k")}, Value: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("v")}},
		{Key: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("n")}, Value: postcard.HeaderField{Kind: postcard.HeaderKindInt32, Value: []byte{0xff, 0xff, 0xff, 0xff}}},
		{Key: postcard.HeaderField{Kind: postcard.HeaderKindUint8, Value: []byte{7}}, Value: postcard.HeaderField{Kind: postcard.HeaderKindRaw, Value: []byte{1}}},
		{Key: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte{0xff}}, Value: postcard.HeaderField{Kind: postcard.HeaderKindBool, Value: []byte{1}}},
		{Key: postcard.HeaderField{Kind: postcard.HeaderKindString, Value: []byte("short")}, Value: postcard.HeaderField{Kind: postcard.HeaderKindUint64, Value: []byte{1}}},
	})
	got, _ := json.Marshal(e.Headers)
	want := `[{"key":"k","kind":"string","value":"v"},{"key":"n","kind":"int32","value":-1},` +
		`{"key":7,"key_kind":"uint8","kind":"raw","value":"AQ==","encoding":"base64"},` +
		`{"key":"/w==","key_kind":"string","key_encoding":"base64","kind":"bool","value":true},` +
		`{"key":"short","kind":"uint64","value":"AQ==","encoding":"base64"}]`
	if string(got) != want {
		t.Fatalf("headers\n got %s\nwant %s", got, want)
	}
	e.SetHeaders(nil)
	if got, _ := json.Marshal(e.Headers); string(got) != "[]" {
		t.Fatalf("no headers: %s", got)
	}
	for _, tc := range []struct {
		id   postcard.Uint128
		want string
	}{{postcard.Uint128{Lo: 42}, "42"}, {postcard.Uint128{Hi: 1}, "18446744073709551616"}, {postcard.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, "340282366920938463463374607431768211455"}} {
		if got := tap.ID(tc.id); got != tc.want {
			t.Errorf("ID(%v) = %s, want %s", tc.id, got, tc.want)
		}
	}
	var le [16]byte
	le[0], le[8] = 42, 1
	if got := tap.IDBytes(le); got != "18446744073709551658" {
		t.Errorf("IDBytes = %s", got)
	}
}

// Marshal writes one compact line and leaves HTML characters in payloads alone.
func TestMarshal(t *testing.T) {
	e := tap.Event{Point: tap.PointDelivered, ID: "1"}
	e.SetHeaders(nil)
	e.SetPayload(postcard.SchemaJSON, []byte("{\"a\" :\n \"<b>&\"}"), nil)
	line, err := tap.Marshal(&e)
	want := `{"point":"delivered","stream":"","topic":"","partition":0,"offset":0,"id":"1","timestamp":0,"headers":[],"schema":"json","size":15,"payload":{"a":"<b>&"}}`
	if err != nil || string(line) != want {
		t.Fatalf("Marshal = %s, %v\nwant %s", line, err, want)
	}
}
