package config_test

import (
	"errors"
	"fmt"
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

// idleKey is one of the sink stream's idle-polling keys (ours, docs/pipeline.md §1.7): its name,
// environment suffix, default, and where the parsed entry keeps it.
type idleKey struct {
	name, env string
	def       time.Duration
	value     func(*config.StreamEntry) *time.Duration
	declared  func(*config.StreamEntry) **string
}

var idleKeys = []idleKey{
	{"idle_poll_max", "IDLE_POLL_MAX", config.DefaultIdlePollMax,
		func(s *config.StreamEntry) *time.Duration { return &s.IdlePollMax },
		func(s *config.StreamEntry) **string { return &s.Declared.IdlePollMax }},
	{"idle_after", "IDLE_AFTER", config.DefaultIdleAfter,
		func(s *config.StreamEntry) *time.Duration { return &s.IdleAfter },
		func(s *config.StreamEntry) **string { return &s.Declared.IdleAfter }},
}

// overIdleKeys runs test once per idle key.
func overIdleKeys(t *testing.T, test func(t *testing.T, k idleKey)) {
	for _, k := range idleKeys {
		t.Run(k.name, func(t *testing.T) { test(t, k) })
	}
}

func TestIdleKeyValues(t *testing.T) {
	overIdleKeys(t, func(t *testing.T, k idleKey) {
		with := func(value string) string { return sinkWith(fmt.Sprintf("%s = %q", k.name, value)) }
		env := func(value string) string { return "IGGY_CONNECTORS_SINK_STDOUT_STREAMS_0_" + k.env + "=" + value }
		tests := []struct {
			name     string
			file     string
			env      []string
			want     time.Duration
			declared *string
		}{
			{"absent: the default", validSink, nil, k.def, nil},
			{"a duration", with("1s"), nil, time.Second, ptr("1s")},
			{"humantime items", with("1m 30s"), nil, 90 * time.Second, ptr("1m 30s")},
			{"0", with("0"), nil, 0, ptr("0")},
			{"none", with("none"), nil, 0, ptr("none")},
			{"disabled", with("disabled"), nil, 0, ptr("disabled")},
			{"env override", validSink, envStream(env("2s")), 2 * time.Second, ptr("2s")},
			{"env stream without it: the default", with("1s"), envStream(), k.def, nil},
			{"env override replaces the file's", with("1s"), envStream(env("0")), 0, ptr("0")},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := config.ParseConnectorWith("f.toml", []byte(tt.file), "toml", config.ParseOptions{Env: tt.env})
				if err != nil {
					t.Fatal(err)
				}
				s := &c.Streams[0]
				if *k.value(s) != tt.want || !reflect.DeepEqual(*k.declared(s), tt.declared) {
					t.Fatalf("%s = %v (declared %v), want %v (declared %v)", k.name, *k.value(s), *k.declared(s), tt.want, tt.declared)
				}
			})
		}
	})
}

func TestIdleKeyRejects(t *testing.T) {
	overIdleKeys(t, func(t *testing.T, k idleKey) {
		tests := []struct {
			name, data, format string
			wantInErr          []string
		}{
			{"no unit", sinkWith(k.name + ` = "250"`), "toml", []string{"f.toml", "streams[0]." + k.name, "unit"}},
			{"not a duration", sinkWith(k.name + ` = "soon"`), "toml", []string{"streams[0]." + k.name, "soon"}},
			{"a number", sinkWith(k.name + ` = 250`), "toml", []string{"streams[0]." + k.name, "string"}},
			{"second stream, json", `{"type":"sink","key":"k","enabled":true,"version":0,"name":"n","path":"p","streams":[` +
				`{"stream":"s","topics":["t"],"schema":"json"},{"stream":"s","topics":["u"],"schema":"json","` + k.name + `":"-1s"}]}`,
				"json", []string{"streams[1]." + k.name}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := config.ParseConnector("f.toml", []byte(tt.data), tt.format)
				if !errors.Is(err, config.ErrInvalidConnector) {
					t.Fatalf("error = %v, want ErrInvalidConnector", err)
				}
				if field, _ := config.ErrorField(err.Error()); !strings.HasSuffix(field, "."+k.name) {
					t.Errorf("ErrorField(%q) = %q, want the %s field", err, field, k.name)
				}
				for _, part := range tt.wantInErr {
					if !strings.Contains(err.Error(), part) {
						t.Fatalf("error %q does not mention %q", err, part)
					}
				}
			})
		}
	})
}

// A bad value in a file loaded with DeferStartChecks (as poll_interval) fails the connector's
// start, naming the connector, the stream and the key.
func TestIdleKeyCheckedAtStart(t *testing.T) {
	overIdleKeys(t, func(t *testing.T, k idleKey) {
		c, err := config.ParseConnectorWith("f.toml", []byte(sinkWith(k.name+` = "soon"`)), "toml", config.ParseOptions{DeferStartChecks: true})
		if err != nil {
			t.Fatal(err)
		}
		err = c.CheckStart()
		field := "streams[0]." + k.name
		if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), `sink "stdout": `+field) {
			t.Fatalf("CheckStart = %v, want an error naming sink \"stdout\" and %s", err, field)
		}
		if got, _ := config.ErrorField(err.Error()); got != field {
			t.Fatalf("ErrorField(%q) = %q, want %s (the validate route's field)", err, got, field)
		}
	})
}

// The keys are ours: absent, no rendering mentions them (upstream's shapes stay as they are);
// written, every rendering carries them and reads back to the same connector, the HTTP
// provider's create body included.
func TestIdleKeyRendering(t *testing.T) {
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
	overIdleKeys(t, func(t *testing.T, k idleKey) {
		absent := parseFixture(t, "orders_archive_sink.toml")
		for name, data := range renderings(t, absent) {
			if strings.Contains(string(data), k.name) {
				t.Errorf("%s rendering of a config without %s mentions it:\n%s", name, k.name, data)
			}
		}

		set := parseFixture(t, "orders_archive_sink.toml")
		*k.declared(&set.Streams[0]), *k.value(&set.Streams[0]) = ptr("1s"), time.Second
		for name, data := range renderings(t, set) {
			if !strings.Contains(string(data), k.name) || !strings.Contains(string(data), `"1s"`) {
				t.Errorf("%s rendering lacks %s = \"1s\":\n%s", name, k.name, data)
			}
		}
		readBack := func(what string, got *config.StreamEntry) {
			t.Helper()
			if *k.value(got) != time.Second || *k.declared(got) == nil || **k.declared(got) != "1s" || got.PollInterval != set.Streams[0].PollInterval {
				t.Fatalf("%s read back %s %v (declared %v), want 1s", what, k.name, *k.value(got), *k.declared(got))
			}
		}
		for _, format := range []string{"toml", "json"} {
			data, _ := set.MarshalDocument(format)
			back, err := config.ParseConnector("rendered", data, format)
			if err != nil {
				t.Fatalf("%s: re-parse: %v\n%s", format, err, data)
			}
			readBack(format+" round trip", &back.Streams[0])
		}
		body, err := config.ParseCreateBody(config.KindSink, "orders_archive", set.CreateBodyJSON())
		if err != nil {
			t.Fatal(err)
		}
		readBack("create body", &body.Streams[0])
	})
}
