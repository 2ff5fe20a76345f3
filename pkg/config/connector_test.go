package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func parseFixture(t *testing.T, name string) config.Connector {
	t.Helper()
	path := filepath.Join("testdata/upstream/connectors", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.ParseConnector(path, data, "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func TestParseConnectorSinkExample(t *testing.T) {
	c := parseFixture(t, "orders_archive_sink.toml")
	if c.Kind != config.KindSink || c.Key != "orders_archive" || !c.Enabled || c.Version != 3 ||
		c.Name != "Orders archive" || c.Path != "/opt/iggy/connectors/libiggy_connector_postgres_sink" ||
		c.PluginConfigFormat != "json" || c.Verbose || c.Benchmark {
		t.Fatalf("envelope: %+v", c)
	}
	if want := []string{"delete_fields", "add_fields", "filter_fields"}; !slices.Equal(c.TransformOrder, want) {
		t.Fatalf("transform order %v, want file order %v", c.TransformOrder, want)
	}
	s := c.Streams[0]
	want := config.StreamEntry{
		Stream: "shop", Topics: []string{"orders_created", "orders_paid"}, Schema: "json",
		BatchLength: 250, PollInterval: 20 * time.Millisecond, IdlePollMax: config.DefaultIdlePollMax, IdleAfter: config.DefaultIdleAfter, ConsumerGroup: "orders-archive",
		OffsetCommit: config.OffsetCommitAfterConsuming,
		Declared:     config.StreamDeclared{BatchLength: ptr(uint32(250)), PollInterval: ptr("20ms"), ConsumerGroup: ptr("orders-archive")},
	}
	s.Options = nil
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("stream:\n got %+v\nwant %+v", s, want)
	}
	fields := c.Transforms["add_fields"].(map[string]any)["fields"].([]any)
	if got := fields[1].(map[string]any)["value"].(map[string]any)["computed"]; got != "timestamp_millis" {
		t.Fatalf("nested transform value = %v", got)
	}
	if string(c.PluginConfigJSON()) != `{"connection_string":"postgres://archiver@db.internal:5432/shop","target_table":"orders_archive"}` {
		t.Fatalf("plugin config JSON = %s", c.PluginConfigJSON())
	}
}

func TestParseConnectorSourceDefaults(t *testing.T) {
	c := parseFixture(t, "random_source_v1.toml")
	s := c.Streams[0]
	if c.Kind != config.KindSource || c.Version != 1 || s.Topic != "example_topic" || s.LingerTime != 5*time.Millisecond ||
		s.BatchLength != 1000 || s.ConsumerGroup != "" || s.Topics != nil {
		t.Fatalf("source: %+v stream %+v", c, s)
	}
	if got := string(c.PluginConfigJSON()); got != `{"interval":"1000ms","max_count":1000000,"messages_range":[1,5],"payload_size":200}` {
		t.Fatalf("plugin config JSON = %s", got)
	}
	bare, err := config.ParseConnector("bare", []byte(`type = "sink"
key = "k"
enabled = false
version = 0
name = "n"
path = "p"
[[streams]]
stream = "s"
topics = ["t"]
schema = "raw"
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	bs := bare.Streams[0]
	if bs.BatchLength != 1000 || bs.PollInterval != 5*time.Millisecond || bs.ConsumerGroup != "iggy-connect-sink-k" ||
		bs.OffsetCommit != "after_consuming" || bare.PluginConfig != nil || string(bare.PluginConfigJSON()) != "null" {
		t.Fatalf("sink defaults: %+v", bs)
	}
}

func TestEveryFixtureRoundTrips(t *testing.T) {
	entries, err := os.ReadDir("testdata/upstream/connectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, format := range []string{"toml", "json"} {
			t.Run(e.Name()+"/"+format, func(t *testing.T) {
				c := parseFixture(t, e.Name())
				data, err := c.MarshalDocument(format)
				if err != nil {
					t.Fatal(err)
				}
				back, err := config.ParseConnector("rendered", data, format)
				if err != nil {
					t.Fatalf("re-parse:\n%s\n%v", data, err)
				}
				if !reflect.DeepEqual(back, c) {
					t.Fatalf("round trip changed the connector:\n got %+v\nwant %+v\n%s", back, c, data)
				}
			})
		}
	}
}

// The version object example of docs/config.md §6.2, for the §3.5 sink file
// reduced to its delete_fields transform.
func TestVersionJSONMatchesSpecShape(t *testing.T) {
	c := parseFixture(t, "orders_archive_sink.toml")
	c.Streams[0].Topics = []string{"orders_created"}
	c.Transforms = map[string]any{"delete_fields": c.Transforms["delete_fields"]}
	c.TransformOrder = []string{"delete_fields"}
	delete(c.PluginConfig, "connection_string")
	want := `{
	  "key": "orders_archive", "enabled": true, "version": 3, "name": "Orders archive",
	  "path": "/opt/iggy/connectors/libiggy_connector_postgres_sink",
	  "transforms": { "delete_fields": { "enabled": true, "fields": ["card_number", "cvv"] } },
	  "streams": [ { "stream": "shop", "topics": ["orders_created"], "schema": "json",
	                 "avro_schema_json": null, "avro_schema_path": null, "batch_length": 250,
	                 "poll_interval": "20ms", "consumer_group": "orders-archive" } ],
	  "plugin_config_format": "json",
	  "plugin_config": { "target_table": "orders_archive" },
	  "verbose": false, "benchmark": false,
	  "active": true
	}`
	var got, expected any
	if err := json.Unmarshal(c.VersionJSON(true), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &expected); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, expected) {
		t.Fatalf("version object:\n got %s\nwant %s", c.VersionJSON(true), want)
	}
	if !strings.HasPrefix(string(c.VersionJSON(true)), `{"key":"orders_archive","enabled":true,"version":3,`) {
		t.Fatalf("field order differs from upstream's: %s", c.VersionJSON(true))
	}
}

func TestCreateBodyJSONHasEveryFieldAndNoIdentity(t *testing.T) {
	c := parseFixture(t, "random_source_v0.toml")
	var body map[string]any
	if err := json.Unmarshal(c.CreateBodyJSON(), &body); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range body {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{"benchmark", "enabled", "name", "path", "plugin_config", "plugin_config_format", "streams", "transforms", "verbose"}
	if !slices.Equal(keys, want) {
		t.Fatalf("create body keys %v, want %v", keys, want)
	}
	stream := body["streams"].([]any)[0].(map[string]any)
	if _, ok := stream["linger_time"]; !ok || stream["avro_schema_json"] != nil {
		t.Fatalf("source stream object %v", stream)
	}
	back, err := config.ParseCreateBody(config.KindSource, "random", c.CreateBodyJSON())
	if err != nil {
		t.Fatal(err)
	}
	back.Version = c.Version
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("ParseCreateBody(CreateBodyJSON()):\n got %+v\nwant %+v", back, c)
	}
}

const validSink = `type = "sink"
key = "stdout"
enabled = true
version = 0
name = "n"
path = "p"
[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
`

func TestParseConnectorRejects(t *testing.T) {
	tests := []struct {
		name      string
		data      string
		format    string
		wantInErr []string
	}{
		{"syntax", "type = ", "toml", []string{"f.toml", "parsing TOML"}},
		{"missing type", strings.Replace(validSink, `type = "sink"`, "", 1), "toml", []string{"f.toml", "key type"}},
		{"unknown type", strings.Replace(validSink, `"sink"`, `"Sink"`, 1), "toml", []string{"f.toml", "key type", "Sink"}},
		{"missing key", strings.Replace(validSink, `key = "stdout"`, "", 1), "toml", []string{"f.toml", "key key"}},
		{"bad key chars", strings.Replace(validSink, `"stdout"`, `"../etc"`, 1), "toml", []string{"f.toml", "../etc"}},
		{"missing enabled", strings.Replace(validSink, "enabled = true", "", 1), "toml", []string{"f.toml", "key enabled", "missing"}},
		{"version negative", strings.Replace(validSink, "version = 0", "version = -1", 1), "toml", []string{"key version", "unsigned"}},
		{"version as string", strings.Replace(validSink, "version = 0", `version = "1"`, 1), "toml", []string{"key version"}},
		{"missing streams", strings.Split(validSink, "[[streams]]")[0], "toml", []string{"key streams", "missing"}},
		{"sink stream without topics", strings.Replace(validSink, `topics = ["t"]`, "", 1), "toml", []string{"key streams[0].topics"}},
		{"source stream with topics only", strings.Replace(validSink, `"sink"`, `"source"`, 1), "toml", []string{"key streams[0].topic"}},
		{"unknown schema", strings.Replace(validSink, `schema = "json"`, `schema = "JSON"`, 1), "toml", []string{"key streams[0].schema", "JSON"}},
		{"bad batch length", strings.Replace(validSink, `schema = "json"`, "schema = \"json\"\nbatch_length = 5000000000", 1), "toml", []string{"streams[0].batch_length"}},
		{"bad poll interval", strings.Replace(validSink, `schema = "json"`, "schema = \"json\"\npoll_interval = \"5\"", 1), "toml", []string{"streams[0].poll_interval", "unit"}},
		{"bad offset commit", strings.Replace(validSink, `schema = "json"`, "schema = \"json\"\noffset_commit = \"never\"", 1), "toml", []string{"streams[0].offset_commit"}},
		{"bad plugin config format", validSink + "\n", "toml", nil}, // replaced below
		{"unknown transform", validSink + "[transforms.rename_fields]\nenabled = true\n", "toml", []string{"transforms.rename_fields", "unknown transform"}},
		{"transforms array", strings.Replace(validSink, "[[streams]]", "[[transforms]]\nname = \"x\"\n[[streams]]", 1), "toml", []string{"key transforms", "table"}},
		{"plugin config not a table", strings.Replace(validSink, "[[streams]]", "plugin_config = 5\n[[streams]]", 1), "toml", []string{"key plugin_config"}},
		{"json syntax", `{"type":`, "json", []string{"f.toml", "malformed JSON"}},
		{"json array", `[]`, "json", []string{"expected a JSON object"}},
		{"json trailing data", `{} {}`, "json", []string{"after the top-level value"}},
		{"json null required", `{"type":"sink","key":"k","enabled":null,"version":0,"name":"n","path":"p","streams":[]}`, "json", []string{"key enabled"}},
		{"unknown format", validSink, "yaml", []string{"yaml"}},
	}
	tests[15] = struct {
		name      string
		data      string
		format    string
		wantInErr []string
	}{"bad plugin config format", strings.Replace(validSink, "[[streams]]", "plugin_config_format = \"xml\"\n[[streams]]", 1), "toml", []string{"key plugin_config_format", "xml"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.ParseConnector("f.toml", []byte(tt.data), tt.format)
			if !errors.Is(err, config.ErrInvalidConnector) {
				t.Fatalf("error = %v, want ErrInvalidConnector", err)
			}
			for _, part := range tt.wantInErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

func TestParseConnectorAcceptsWhatUpstreamAccepts(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		check func(c config.Connector) bool
	}{
		{"empty streams", strings.Split(validSink, "[[streams]]")[0] + "streams = []\n", func(c config.Connector) bool { return len(c.Streams) == 0 }},
		{"unknown keys ignored", strings.Replace(validSink, "[[streams]]", "config_format = \"json\"\nbatch_size = 5\n[[streams]]", 1), func(c config.Connector) bool { return c.Key == "stdout" }},
		{"disabled transform body unchecked", validSink + "[transforms.unwrap_envelope]\nenabled = false\n", func(c config.Connector) bool { return slices.Equal(c.TransformOrder, []string{"unwrap_envelope"}) }},
		{"plugin config any values", validSink + "[plugin_config]\nnested = { a = [1, 2.5, \"x\"] }\nwhen = 1979-05-27T07:32:00Z\n",
			func(c config.Connector) bool {
				return string(c.PluginConfigJSON()) == `{"nested":{"a":[1,2.5,"x"]},"when":"1979-05-27T07:32:00Z"}`
			}},
		{"sink and source keys in one namespace each", strings.Replace(validSink, "[[streams]]", "[[streams]]\nlinger_time = \"nonsense\"", 1), func(c config.Connector) bool { return c.Streams[0].LingerTime == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.ParseConnector("f.toml", []byte(tt.data), "toml")
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Fatalf("unexpected result %+v", c)
			}
		})
	}
}

func TestDeferStartChecks(t *testing.T) {
	data := []byte(strings.Replace(validSink, `schema = "json"`, "schema = \"json\"\npoll_interval = \"soon\"", 1))
	c, err := config.ParseConnectorWith("f.toml", data, "toml", config.ParseOptions{DeferStartChecks: true})
	if err != nil {
		t.Fatalf("deferred parse: %v", err)
	}
	err = c.CheckStart()
	if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), "Invalid poll interval") {
		t.Fatalf("CheckStart = %v, want Invalid poll interval", err)
	}
	src, err := config.ParseConnector("s", []byte(strings.Split(strings.Replace(validSink, `"sink"`, `"source"`, 1), "[[streams]]")[0]+"streams = []\n"), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.CheckStart(); err == nil || !strings.Contains(err.Error(), "No streams configured for source") {
		t.Fatalf("CheckStart of a source without streams = %v", err)
	}
}

func TestValidKey(t *testing.T) {
	for _, key := range []string{"stdout", "orders_archive", "my-sink", "a.b", "A1", strings.Repeat("k", 128)} {
		if err := config.ValidKey(key); err != nil {
			t.Errorf("ValidKey(%q) = %v", key, err)
		}
	}
	for _, key := range []string{"", "-x", ".hidden", "..", "a/b", "a b", "a%2f", "ключ", strings.Repeat("k", 129), "a\x00"} {
		if err := config.ValidKey(key); !errors.Is(err, config.ErrInvalidConnector) {
			t.Errorf("ValidKey(%q) = %v, want ErrInvalidConnector", key, err)
		}
	}
}

func TestMarshalTOMLRejectsNull(t *testing.T) {
	c, err := config.ParseCreateBody(config.KindSink, "k", []byte(`{"enabled":true,"name":"n","path":"p","streams":[],"plugin_config":{"a":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MarshalTOML(); !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), "plugin_config.a") {
		t.Fatalf("MarshalTOML = %v, want an error naming plugin_config.a", err)
	}
}

func TestParseCreateBody(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		body    string
		wantErr string
	}{
		{"minimal", "k", `{"enabled":true,"name":"n","path":"p","streams":[]}`, ""},
		{"nulls for optionals", "k", `{"enabled":true,"name":"n","path":"p","streams":[],"transforms":null,"plugin_config":null,"plugin_config_format":null,"verbose":null}`, ""},
		{"missing name", "k", `{"enabled":true,"path":"p","streams":[]}`, "key name"},
		{"missing streams", "k", `{"enabled":true,"name":"n","path":"p"}`, "key streams"},
		{"bad key", "a/b", `{"enabled":true,"name":"n","path":"p","streams":[]}`, "a/b"},
		{"bad duration", "k", `{"enabled":true,"name":"n","path":"p","streams":[{"stream":"s","topics":["t"],"schema":"json","poll_interval":"fast"}]}`, "poll_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.ParseCreateBody(config.KindSink, tt.key, []byte(tt.body))
			if tt.wantErr == "" {
				if err != nil || c.Key != tt.key || c.Kind != config.KindSink {
					t.Fatalf("ParseCreateBody = %+v, %v", c, err)
				}
				return
			}
			if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseConnectorBody(t *testing.T) {
	body := []byte(`{"key":"k","enabled":true,"version":4,"name":"n","path":"p","active":true,
		"transforms":{"update_fields":{"enabled":true},"add_fields":{"enabled":true}},
		"streams":[{"stream":"s","topic":"t","schema":"text","linger_time":"bad"}]}`)
	c, err := config.ParseConnectorBody("resp", config.KindSource, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != config.KindSource || c.Version != 4 || !slices.Equal(c.TransformOrder, []string{"update_fields", "add_fields"}) {
		t.Fatalf("decoded %+v", c)
	}
	if _, err := config.ParseConnectorBody("resp", config.KindSink, []byte(`{"type":"source","key":"k"}`)); !errors.Is(err, config.ErrInvalidConnector) {
		t.Fatalf("type mismatch accepted: %v", err)
	}
}

func TestDetectFormat(t *testing.T) {
	c := parseFixture(t, "stdout_sink.toml")
	for _, format := range []string{"toml", "json"} {
		data, err := c.MarshalDocument(format)
		if err != nil {
			t.Fatal(err)
		}
		if got := config.DetectFormat(append([]byte("\n  "), data...)); got != format {
			t.Errorf("DetectFormat of a %s document = %s", format, got)
		}
	}
}

// Found by fuzzing: stream keys this package does not read (or that belong
// to the other kind) survive rendering in both document formats.
func TestUnknownStreamKeysSurviveRendering(t *testing.T) {
	src := strings.Replace(strings.Replace(validSink, `"sink"`, `"source"`, 1), `topics = ["t"]`, "topic = \"t\"\npoll_interval = \"1s\"\nlinge_time = 5", 1)
	c, err := config.ParseConnector("f.toml", []byte(src), "toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"toml", "json"} {
		data, err := c.MarshalDocument(format)
		if err != nil {
			t.Fatal(err)
		}
		back, err := config.ParseConnector("rendered", data, format)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Streams[0].Options, c.Streams[0].Options) {
			t.Fatalf("%s: options %v, want %v", format, back.Streams[0].Options, c.Streams[0].Options)
		}
	}
}
