package config_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func parseWithEnv(t *testing.T, file string, env []string) (config.Connector, error) {
	t.Helper()
	return config.ParseConnectorWith("f.toml", []byte(file), "toml", config.ParseOptions{Env: env})
}

const envSink = `type = "sink"
key = "my-sink"
enabled = true
version = 1
name = "n"
path = "p"
[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
[plugin_config]
host = "file-host"
`

func TestConnectorEnvOverrides(t *testing.T) {
	const P = "IGGY_CONNECTORS_SINK_MY-SINK_"
	tests := []struct {
		name  string
		env   []string
		check func(c config.Connector) bool
	}{
		{"enabled", []string{P + "ENABLED=false"}, func(c config.Connector) bool { return !c.Enabled }},
		{"name keeps numeric text", []string{P + "NAME=123"}, func(c config.Connector) bool { return c.Name == "123" }},
		{"version", []string{P + "VERSION=9"}, func(c config.Connector) bool { return c.Version == 9 }},
		{"key changes identity", []string{P + "KEY=renamed"}, func(c config.Connector) bool {
			return c.Key == "renamed" && c.Streams[0].ConsumerGroup == "iggy-connect-sink-renamed"
		}},
		{"empty typed value ignored", []string{P + "PATH="}, func(c config.Connector) bool { return c.Path == "p" }},
		{"plugin config format and key collide", []string{P + "PLUGIN_CONFIG_FORMAT=yaml"}, func(c config.Connector) bool {
			return c.PluginConfigFormat == "yaml" && c.PluginConfig["format"] == "yaml"
		}},
		{"plugin config typed values", []string{P + "PLUGIN_CONFIG_DB_HOST=db", P + "PLUGIN_CONFIG_PORT=5432", P + "PLUGIN_CONFIG_RATIO=0.5",
			P + "PLUGIN_CONFIG_TLS=TRUE", P + "PLUGIN_CONFIG_HOSTS=[a, 2]"}, func(c config.Connector) bool {
			return c.PluginConfig["db_host"] == "db" && c.PluginConfig["port"] == int64(5432) && c.PluginConfig["ratio"] == 0.5 &&
				c.PluginConfig["tls"] == true && reflect.DeepEqual(c.PluginConfig["hosts"], []any{"a", int64(2)}) &&
				c.PluginConfig["host"] == "file-host"
		}},
		{"plugin config name match is case-insensitive", []string{"iggy_connectors_sink_my-sink_plugin_config_Host=env-host"},
			func(c config.Connector) bool { return c.PluginConfig["host"] == "env-host" }},
		{"plugin config empty value sets empty string", []string{P + "PLUGIN_CONFIG_HOST="}, func(c config.Connector) bool { return c.PluginConfig["host"] == "" }},
		{"streams replaced whole", []string{P + "STREAMS_0_STREAM=other", P + "STREAMS_0_TOPICS=[x, y]", P + "STREAMS_0_SCHEMA=raw",
			P + "STREAMS_0_POLL_INTERVAL=1s", P + "STREAMS_0_BATCH_LENGTH=10"}, func(c config.Connector) bool {
			s := c.Streams[0]
			return len(c.Streams) == 1 && s.Stream == "other" && slices.Equal(s.Topics, []string{"x", "y"}) && s.Schema == "raw" &&
				s.PollInterval == time.Second && s.BatchLength == 10
		}},
		{"other connectors untouched", []string{"IGGY_CONNECTORS_SINK_OTHER_ENABLED=false", "IGGY_CONNECTORS_SOURCE_MY-SINK_ENABLED=false"},
			func(c config.Connector) bool { return c.Enabled }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseWithEnv(t, envSink, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Fatalf("env %v gave %+v", tt.env, c)
			}
		})
	}
}

func TestConnectorEnvRejects(t *testing.T) {
	const P = "IGGY_CONNECTORS_SINK_MY-SINK_"
	tests := []struct {
		name, env, wantInErr string
	}{
		{"bool", P + "ENABLED=yes", P + "ENABLED"},
		{"version", P + "VERSION=v2", P + "VERSION"},
		{"topics without brackets", P + "STREAMS_0_TOPICS=x", P + "STREAMS_0_TOPICS"},
		// A partial stream index replaces the array and misses required keys.
		{"partial stream", P + "STREAMS_0_SCHEMA=raw", "streams[0].stream"},
		{"skipped index", P + "STREAMS_1_STREAM=x", "streams[0].stream"},
		{"bad plugin config format", P + "PLUGIN_CONFIG_FORMAT=xml", "plugin_config_format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWithEnv(t, envSink, []string{tt.env})
			if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("error = %v, want one naming %q", err, tt.wantInErr)
			}
		})
	}
}

func TestApplyConnectorEnvMatchesParseWithEnv(t *testing.T) {
	env := []string{"IGGY_CONNECTORS_SINK_MY-SINK_NAME=env name", "IGGY_CONNECTORS_SINK_MY-SINK_PLUGIN_CONFIG_TOKEN=s3cret"}
	want, err := parseWithEnv(t, envSink, env)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.ParseConnector("f.toml", []byte(envSink), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := config.ApplyConnectorEnv(&c, env); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("ApplyConnectorEnv:\n got %+v\nwant %+v", c, want)
	}
	before := c.Clone()
	if err := config.ApplyConnectorEnv(&c, []string{"IGGY_CONNECTORS_SINK_MY-SINK_ENABLED=maybe"}); err == nil {
		t.Fatal("bad override accepted")
	}
	if !reflect.DeepEqual(c, before) {
		t.Fatal("a failed ApplyConnectorEnv changed the connector")
	}
}

func TestConnectorEnvWarnings(t *testing.T) {
	got := config.ConnectorEnvWarnings(config.KindSink, "my-sink", []string{
		"IGGY_CONNECTORS_SINK_MY-SINK_ENABLED=true",
		"IGGY_CONNECTORS_SINK_MY-SINK_PLUGIN_CONFIG_X=1",
		"IGGY_CONNECTORS_SINK_MY-SINK_STREAMS_3_TOPICS=[a]",
		"IGGY_CONNECTORS_SINK_MY-SINK_STREAMS_3_TOPIC=a", // source-only name
		"IGGY_CONNECTORS_SINK_MY-SINK_TRANSFORMS=x",
	})
	if len(got) != 2 || !strings.Contains(got[0], "STREAMS_3_TOPIC for") || !strings.Contains(got[1], "_TRANSFORMS for") {
		t.Fatalf("warnings = %q", got)
	}
}
