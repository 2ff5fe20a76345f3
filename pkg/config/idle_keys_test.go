package config_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// sinkWith is validSink with extra stream keys.
func sinkWith(streamKeys string) string {
	return strings.Replace(validSink, `schema = "json"`, "schema = \"json\"\n"+streamKeys, 1)
}

// envStream is an env override of stream 0 (which replaces the file's entry whole, as upstream) plus more.
func envStream(more ...string) []string {
	return append([]string{"IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_STREAM=s", "IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_TOPICS=[t]",
		"IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_SCHEMA=json"}, more...)
}

func TestIdlePollMaxValues(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      []string
		want     time.Duration
		declared *string
	}{
		{"absent: the default", validSink, nil, config.DefaultIdlePollMax, nil},
		{"a duration", sinkWith(`idle_poll_max = "1s"`), nil, time.Second, ptr("1s")},
		{"humantime items", sinkWith(`idle_poll_max = "1m 30s"`), nil, 90 * time.Second, ptr("1m 30s")},
		{"0 restores the fixed interval", sinkWith(`idle_poll_max = "0"`), nil, 0, ptr("0")},
		{"none restores the fixed interval", sinkWith(`idle_poll_max = "none"`), nil, 0, ptr("none")},
		{"disabled restores the fixed interval", sinkWith(`idle_poll_max = "disabled"`), nil, 0, ptr("disabled")},
		{"env override", validSink, envStream("IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_IDLE_POLL_MAX=2s"), 2 * time.Second, ptr("2s")},
		{"env stream without it: the default", sinkWith(`idle_poll_max = "1s"`), envStream(), config.DefaultIdlePollMax, nil},
		{"env override replaces the file's", sinkWith(`idle_poll_max = "1s"`),
			envStream("IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_IDLE_POLL_MAX=0"), 0, ptr("0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.ParseConnectorWith("f.toml", []byte(tt.file), "toml", config.ParseOptions{Env: tt.env})
			if err != nil {
				t.Fatal(err)
			}
			s := c.Streams[0]
			if s.IdlePollMax != tt.want || !reflect.DeepEqual(s.Declared.IdlePollMax, tt.declared) {
				t.Fatalf("idle_poll_max = %v (declared %v), want %v (declared %v)", s.IdlePollMax, s.Declared.IdlePollMax, tt.want, tt.declared)
			}
		})
	}
}

func TestIdlePollMaxRejects(t *testing.T) {
	tests := []struct {
		name, data, format string
		wantInErr          []string
	}{
		{"no unit", sinkWith(`idle_poll_max = "250"`), "toml", []string{"f.toml", "streams[0].idle_poll_max", "unit"}},
		{"not a duration", sinkWith(`idle_poll_max = "soon"`), "toml", []string{"streams[0].idle_poll_max", "soon"}},
		{"a number", sinkWith(`idle_poll_max = 250`), "toml", []string{"streams[0].idle_poll_max", "string"}},
		{"second stream, json", `{"type":"sink","key":"k","enabled":true,"version":0,"name":"n","path":"p","streams":[` +
			`{"stream":"s","topics":["t"],"schema":"json"},{"stream":"s","topics":["u"],"schema":"json","idle_poll_max":"-1s"}]}`,
			"json", []string{"streams[1].idle_poll_max"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.ParseConnector("f.toml", []byte(tt.data), tt.format)
			if !errors.Is(err, config.ErrInvalidConnector) {
				t.Fatalf("error = %v, want ErrInvalidConnector", err)
			}
			if field, _ := config.ErrorField(err.Error()); !strings.HasSuffix(field, ".idle_poll_max") {
				t.Errorf("ErrorField(%q) = %q, want the idle_poll_max field", err, field)
			}
			for _, part := range tt.wantInErr {
				if !strings.Contains(err.Error(), part) {
					t.Fatalf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

// A bad idle_poll_max in a file loaded with DeferStartChecks (as poll_interval) fails the
// connector's start, naming the connector, the stream and the key.
func TestIdlePollMaxCheckedAtStart(t *testing.T) {
	c, err := config.ParseConnectorWith("f.toml", []byte(sinkWith(`idle_poll_max = "soon"`)), "toml", config.ParseOptions{DeferStartChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckStart()
	if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), `sink "stdout": streams[0].idle_poll_max`) {
		t.Fatalf("CheckStart = %v, want an error naming sink \"stdout\" and streams[0].idle_poll_max", err)
	}
	if field, _ := config.ErrorField(err.Error()); field != "streams[0].idle_poll_max" {
		t.Fatalf("ErrorField(%q) = %q, want streams[0].idle_poll_max (the validate route's field)", err, field)
	}
}

// The key is ours: absent, no rendering mentions it (upstream's shapes stay as they are); written,
// every rendering carries it and reads back to the same connector.
func TestIdlePollMaxRendering(t *testing.T) {
	renderings := func(t *testing.T, c config.Connector) map[string][]byte {
		t.Helper()
		out := map[string][]byte{"version": c.VersionJSON(true), "create body": c.CreateBodyJSON()}
		for _, format := range []string{"toml", "json"} {
			data, err := c.MarshalDocument(format)
			if err != nil {
				t.Fatal(err)
			}
			out[format] = data
		}
		return out
	}
	absent := parseFixture(t, "orders_archive_sink.toml")
	for name, data := range renderings(t, absent) {
		if strings.Contains(string(data), "idle_poll_max") {
			t.Errorf("%s rendering of a config without idle_poll_max mentions it:\n%s", name, data)
		}
	}

	set := parseFixture(t, "orders_archive_sink.toml")
	set.Streams[0].Declared.IdlePollMax, set.Streams[0].IdlePollMax = ptr("1s"), time.Second
	for name, data := range renderings(t, set) {
		if !strings.Contains(string(data), `idle_poll_max`) || !strings.Contains(string(data), `"1s"`) {
			t.Errorf("%s rendering lacks idle_poll_max = \"1s\":\n%s", name, data)
		}
	}
	for _, format := range []string{"toml", "json"} {
		data, _ := set.MarshalDocument(format)
		back, err := config.ParseConnector("rendered", data, format)
		if err != nil {
			t.Fatalf("%s: re-parse: %v\n%s", format, err, data)
		}
		got := back.Streams[0]
		if got.IdlePollMax != time.Second || got.Declared.IdlePollMax == nil || *got.Declared.IdlePollMax != "1s" || got.PollInterval != set.Streams[0].PollInterval {
			t.Fatalf("%s round trip: idle_poll_max %v (declared %v), want 1s", format, got.IdlePollMax, got.Declared.IdlePollMax)
		}
	}
	body, err := config.ParseCreateBody(config.KindSink, "orders_archive", set.CreateBodyJSON())
	if err != nil {
		t.Fatal(err)
	}
	if got := body.Streams[0]; got.IdlePollMax != time.Second || got.Declared.IdlePollMax == nil || *got.Declared.IdlePollMax != "1s" {
		t.Fatalf("create body read back idle_poll_max %v (declared %v)", got.IdlePollMax, got.Declared.IdlePollMax)
	}
}
