package transform_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

func TestAddFields(t *testing.T) {
	ts := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [
  { key = "s", value = { static = "text" } },
  { key = "n", value = { static = -3 } },
  { key = "u", value = { static = 7 } },
  { key = "f", value = { static = 1.0 } },
  { key = "b", value = { static = false } },
  { key = "arr", value = { static = [1, "two"] } },
  { key = "obj", value = { static = { z = 1, a = 2 } } },
  { key = "existing", value = { static = "overwritten" } },
]
`)
	tests := []struct{ name, in, want string }{
		{"appends new keys, overwrites in place", `{"existing":0,"keep":true}`,
			`{"existing":"overwritten","keep":true,"s":"text","n":-3,"u":7,"f":1.0,"b":false,"arr":[1,"two"],"obj":{"a":2,"z":1}}`},
		{"array passes through", `[1,2]`, `[1,2]`},
		{"scalar passes through", `"str"`, `"str"`},
		{"null passes through", `null`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runJSON(t, ts, tt.in); got != tt.want {
				t.Fatalf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAddFieldsWithoutFieldsIsANoOp(t *testing.T) {
	ts := buildTOML(t, "[transforms.add_fields]\nenabled = true\n")
	if got := runJSON(t, ts, `{"a":1}`); got != `{"a":1}` {
		t.Fatalf("got %s", got)
	}
}

// Field transforms leave non-JSON payloads alone.
func TestFieldTransformsPassNonJSONPayloads(t *testing.T) {
	ts := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [{ key = "a", value = { static = 1 } }]
[transforms.update_fields]
enabled = true
fields = [{ key = "a", value = { static = 1 } }]
[transforms.delete_fields]
enabled = true
fields = ["a"]
[transforms.filter_fields]
enabled = true
keep_fields = ["a"]
[transforms.unwrap_envelope]
enabled = true
field = "a"
`)
	for _, p := range []codec.Payload{
		codec.TextPayload(`{"a":1}`),
		codec.RawPayload([]byte(`{"a":1}`)),
		{Kind: postcard.SchemaProto, Text: "a: 1"},
		{Kind: postcard.SchemaAvro, Bytes: []byte{1}},
	} {
		m := &codec.Message{Payload: p}
		keep, err := transform.Run(ts, m)
		if !keep || err != nil || m.Payload.Kind != p.Kind || m.Payload.Text != p.Text || string(m.Payload.Bytes) != string(p.Bytes) {
			t.Errorf("%s payload: Run = %v, %v, payload %+v", p.Kind, keep, err, m.Payload)
		}
	}
}

// A static object is copied into each message: changing it in one message
// must not leak into the next.
func TestStaticValuesAreCopiedPerMessage(t *testing.T) {
	ts := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [{ key = "meta", value = { static = { source = "x" } } }]
[transforms.unwrap_envelope]
enabled = true
field = "meta"
[transforms.update_fields]
enabled = true
fields = [{ key = "source", value = { static = "changed" } }]
`)
	first := runJSON(t, ts, `{}`)
	second := runJSON(t, ts, `{}`)
	if first != `{"source":"changed"}` || second != first {
		t.Fatalf("first %s, second %s; want both {\"source\":\"changed\"}", first, second)
	}
	// And the configured value itself is untouched.
	add := ts[:1]
	if got := runJSON(t, add, `{}`); got != `{"meta":{"source":"x"}}` {
		t.Fatalf("config value changed: %s", got)
	}
}

func TestUpdateFieldsConditions(t *testing.T) {
	ts := buildTOML(t, `
[transforms.update_fields]
enabled = true
fields = [
  { key = "always", value = { static = 1 } },
  { key = "default", value = { static = 2 } , condition = "always" },
  { key = "if_present", value = { static = 3 }, condition = "key_exists" },
  { key = "if_absent", value = { static = 4 }, condition = "key_not_exists" },
  { key = "chained", value = { static = 5 }, condition = "key_not_exists" },
  { key = "chained", value = { static = 6 }, condition = "key_exists" },
]
`)
	tests := []struct{ name, in, want string }{
		{"keys absent", `{"x":0}`, `{"x":0,"always":1,"default":2,"if_absent":4,"chained":6}`},
		{"keys present keep their positions", `{"if_absent":"old","if_present":"old","always":"old"}`,
			`{"if_absent":"old","if_present":3,"always":1,"default":2,"chained":6}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runJSON(t, ts, tt.in); got != tt.want {
				t.Fatalf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDeleteFields(t *testing.T) {
	ts := buildTOML(t, `
[transforms.delete_fields]
enabled = true
fields = ["password", "missing", "nested.key"]
`)
	tests := []struct{ name, in, want string }{
		{"removes listed top-level keys, keeps order", `{"a":1,"password":"x","b":{"password":2},"c":3}`, `{"a":1,"b":{"password":2},"c":3}`},
		{"keys are literal, not paths", `{"nested":{"key":1},"nested.key":2}`, `{"nested":{"key":1}}`},
		{"nothing to delete", `{"a":1}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runJSON(t, ts, tt.in); got != tt.want {
				t.Fatalf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDeleteManyFields(t *testing.T) {
	ts := buildTOML(t, `
[transforms.delete_fields]
enabled = true
fields = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10"]
`)
	if got := runJSON(t, ts, `{"k0":0,"k1":1,"k5":5,"k10":10,"k11":11}`); got != `{"k0":0,"k11":11}` {
		t.Fatalf("got %s", got)
	}
}

func TestUnwrapEnvelope(t *testing.T) {
	ts := buildTOML(t, `
[transforms.unwrap_envelope]
enabled = true
field = "payload"
`)
	tests := []struct{ name, in, want string }{
		{"object value", `{"meta":1,"payload":{"id":7}}`, `{"id":7}`},
		{"array value", `{"payload":[1,2]}`, `[1,2]`},
		{"scalar value", `{"payload":"s"}`, `"s"`},
		{"null value", `{"payload":null}`, `null`},
		{"field missing: unchanged", `{"other":1}`, `{"other":1}`},
		{"not an object: unchanged", `[{"payload":1}]`, `[{"payload":1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runJSON(t, ts, tt.in); got != tt.want {
				t.Fatalf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestComputedValues(t *testing.T) {
	ts := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [
  { key = "dt", value = { computed = "date_time" } },
  { key = "ns", value = { computed = "timestamp_nanos" } },
  { key = "us", value = { computed = "timestamp_micros" } },
  { key = "ms", value = { computed = "timestamp_millis" } },
  { key = "s", value = { computed = "timestamp_seconds" } },
  { key = "v4", value = { computed = "uuid_v4" } },
  { key = "v7", value = { computed = "uuid_v7" } },
]
`)
	before := time.Now()
	m := jsonMessage(t, `{}`)
	if keep, err := transform.Run(ts, m); !keep || err != nil {
		t.Fatalf("Run = %v, %v", keep, err)
	}
	after := time.Now()
	obj := m.Payload.JSON.(*codec.OrderedMap)
	get := func(k string) any { v, _ := obj.Get(k); return v }

	dt, _ := get("dt").(string)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?\+00:00$`).MatchString(dt) {
		t.Errorf("date_time %q is not RFC 3339 with +00:00 and 0/3/6/9 fraction digits", dt)
	}
	if parsed, err := time.Parse(time.RFC3339Nano, dt); err != nil || parsed.Before(before.Truncate(time.Second)) || parsed.After(after) {
		t.Errorf("date_time %q (%v) not between %v and %v", dt, err, before, after)
	}
	stamps := []struct {
		key    string
		lo, hi int64
	}{
		{"ns", before.UnixNano(), after.UnixNano()},
		{"us", before.UnixMicro(), after.UnixMicro()},
		{"ms", before.UnixMilli(), after.UnixMilli()},
		{"s", before.Unix(), after.Unix()},
	}
	for _, s := range stamps {
		v, ok := get(s.key).(int64)
		if !ok || v < s.lo || v > s.hi {
			t.Errorf("%s = %#v, want an int64 in [%d, %d]", s.key, get(s.key), s.lo, s.hi)
		}
	}
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-([47])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for key, version := range map[string]string{"v4": "4", "v7": "7"} {
		got, _ := get(key).(string)
		if match := uuidRE.FindStringSubmatch(got); match == nil || match[1] != version {
			t.Errorf("%s = %q, want a lowercase version-%s UUID", key, got, version)
		}
	}
	v7, _ := get("v7").(string)
	ms, _ := strconv.ParseInt(v7[0:8]+v7[9:13], 16, 64)
	if ms < before.UnixMilli() || ms > after.UnixMilli()+1 {
		t.Errorf("uuid_v7 %s carries time %d ms, want about %d", v7, ms, before.UnixMilli())
	}
}

func TestUUIDv7IsStrictlyIncreasing(t *testing.T) {
	ts := buildTOML(t, `
[transforms.add_fields]
enabled = true
fields = [{ key = "id", value = { computed = "uuid_v7" } }]
`)
	prev := ""
	for i := range 5000 {
		m := jsonMessage(t, `{}`)
		if _, err := transform.Run(ts, m); err != nil {
			t.Fatal(err)
		}
		id, _ := m.Payload.JSON.(*codec.OrderedMap).Get("id")
		if s := id.(string); s <= prev {
			t.Fatalf("uuid %d %s is not greater than %s", i, s, prev)
		} else {
			prev = s
		}
	}
}

// Both TOML spellings of the fields list decode to different Go shapes
// ([]any of maps, or []map[string]any for arrays of tables); both work.
func TestFieldsAsTOMLArrayOfTables(t *testing.T) {
	ts := buildTOML(t, `
[transforms.update_fields]
enabled = true

[[transforms.update_fields.fields]]
key = "status"
value = { static = "new" }
condition = "key_not_exists"

[[transforms.update_fields.fields]]
key = "seen"
value.static = true
`)
	if got := runJSON(t, ts, `{"status":"old"}`); got != `{"status":"old","seen":true}` {
		t.Fatalf("got %s", got)
	}
}

// A config parsed with codec.ParseJSON (objects as *codec.OrderedMap) is
// accepted too, and then static objects keep their key order.
func TestBuildFromOrderedJSONConfig(t *testing.T) {
	parsed, err := codec.ParseJSON([]byte(`{"add_fields": {"enabled": true,
		"fields": [{"key": "meta", "value": {"static": {"z": 1, "a": [2.5]}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	root := parsed.(*codec.OrderedMap)
	cfg := map[string]any{}
	for _, m := range root.Members() {
		cfg[m.Key] = m.Value
	}
	ts, err := transform.Build(cfg, root.Keys())
	if err != nil {
		t.Fatal(err)
	}
	if got := runJSON(t, ts, `{}`); got != `{"meta":{"z":1,"a":[2.5]}}` {
		t.Fatalf("got %s", got)
	}
}
