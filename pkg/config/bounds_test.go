package config_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// nestedJSON is {"a":{"a":...{"a":1}}} with depth tables.
func nestedJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

const boundsBody = `{"enabled":true,"name":"n","path":"p","streams":[{"stream":"s","topics":["t"],"schema":"json"}],"plugin_config":%s}`

func TestConnectorDocumentBounds(t *testing.T) {
	wide := "[" + strings.Repeat("0,", config.MaxElements) + "0]"
	deepArrays := strings.Repeat("[", 3000) + strings.Repeat("]", 3000)
	cases := []struct {
		name, pluginConfig string
		wantErr            string // "" when accepted
	}{
		{"3000 levels (the issue's body)", nestedJSON(3000), "key plugin_config.a.a.a.a.a... (64 levels): nested deeper than 64 levels"},
		{"arrays nest too", `{"x":` + deepArrays + `}`, "nested deeper than 64 levels"},
		{"just inside the limit", nestedJSON(config.MaxNestingDepth - 2), ""},
		{"one level over", nestedJSON(config.MaxNestingDepth - 1), "nested deeper than 64 levels"},
		{"too many values", `{"x":` + wide + `}`, "holds more than 100000 values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Replace(boundsBody, "%s", c.pluginConfig, 1)
			_, err := config.ParseCreateBody(config.KindSink, "deep", []byte(body))
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, c.wantErr)
			}
			if !errors.Is(err, config.ErrOverLimit) || !errors.Is(err, config.ErrInvalidConnector) {
				t.Fatalf("error %v is not ErrOverLimit and ErrInvalidConnector", err)
			}
			// The same document from the other sources: a file (TOML and JSON) and an HTTP provider.
			doc := strings.Replace(body, `{"enabled"`, `{"type":"sink","key":"deep","version":1,"enabled"`, 1)
			if _, err := config.ParseConnector("file.json", []byte(doc), "json"); !errors.Is(err, config.ErrOverLimit) {
				t.Fatalf("JSON file: error = %v, want ErrOverLimit", err)
			}
			if _, err := config.ParseConnectorBody("provider", config.KindSink, []byte(doc)); !errors.Is(err, config.ErrOverLimit) {
				t.Fatalf("provider body: error = %v, want ErrOverLimit", err)
			}
		})
	}
}

func TestConnectorTOMLFileBounds(t *testing.T) {
	header := "[plugin_config" + strings.Repeat(".a", 3000) + "]\nx = 1\n"
	file := "type = \"sink\"\nkey = \"deep\"\nversion = 0\nenabled = true\nname = \"n\"\npath = \"p\"\n" +
		"[[streams]]\nstream = \"s\"\ntopics = [\"t\"]\nschema = \"json\"\n" + header
	_, err := config.ParseConnector("deep.toml", []byte(file), "toml")
	if !errors.Is(err, config.ErrOverLimit) || !strings.Contains(err.Error(), "deep.toml: key plugin_config.a.a.a.a.a") {
		t.Fatalf("error = %v, want the file, the key and the limit named", err)
	}
}

func TestConnectorEnvOverrideBounds(t *testing.T) {
	body := strings.Replace(boundsBody, "%s", `{"x":1}`, 1)
	doc := strings.Replace(body, `{"enabled"`, `{"type":"sink","key":"deep","version":1,"enabled"`, 1)
	env := []string{"IGGY_CONNECTORS_SINK_DEEP_PLUGIN_CONFIG_Y=" + strings.Repeat("[", 200) + "1" + strings.Repeat("]", 200)}
	_, err := config.ParseConnectorWith("file.json", []byte(doc), "json", config.ParseOptions{Env: env})
	if !errors.Is(err, config.ErrOverLimit) || !strings.Contains(err.Error(), "key plugin_config.y[0][0]") {
		t.Fatalf("error = %v, want the override refused naming plugin_config.y", err)
	}
}

// A document within the parse bounds can still render huge as TOML, which repeats every table's
// full path: 60 long keys deep, then many sibling tables.
func TestRenderTOMLStopsAtTheLimit(t *testing.T) {
	long := strings.Repeat("k", 4000)
	leaf := map[string]any{}
	for i := range 2000 {
		leaf["t"+strconv.Itoa(i)] = map[string]any{"v": int64(i)}
	}
	var table = leaf
	for range 60 {
		table = map[string]any{long: table}
	}
	const limit = 1 << 20
	_, err := config.RenderTOML("plugin_config", table, limit)
	if !errors.Is(err, config.ErrOverLimit) || !strings.Contains(err.Error(), "key plugin_config: its TOML rendering is larger than 1048576 bytes") {
		t.Fatalf("RenderTOML error = %v", err)
	}
	c := config.Connector{Kind: config.KindSink, Key: "big", Name: "n", Path: "p", PluginConfig: table,
		Streams: []config.StreamEntry{{Stream: "s", Topics: []string{"t"}, Schema: "json"}}}
	if _, err := c.MarshalTOMLWithin(limit); !errors.Is(err, config.ErrOverLimit) || !strings.Contains(err.Error(), `sink "big": key plugin_config`) {
		t.Fatalf("MarshalTOMLWithin error = %v", err)
	}
	// YAML writes each key once: the same table is smaller, refused under a smaller limit.
	if _, err := config.RenderYAML("plugin_config", table, limit/10); !errors.Is(err, config.ErrOverLimit) {
		t.Fatalf("RenderYAML error = %v", err)
	}
	small := map[string]any{"a": map[string]any{"b": int64(1)}}
	if out, err := config.RenderTOML("plugin_config", small, limit); err != nil || string(out) != "[a]\n  b = 1\n" {
		t.Fatalf("small table: %q, %v", out, err)
	}
}
