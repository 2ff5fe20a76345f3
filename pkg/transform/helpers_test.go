package transform_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// fromTOML decodes the body of a connector file's [transforms] section the
// way the config package does (BurntSushi/toml into map[string]any) and
// returns the table with its keys in file order.
func fromTOML(t testing.TB, doc string) (map[string]any, []string) {
	t.Helper()
	var file struct {
		Transforms map[string]any `toml:"transforms"`
	}
	md, err := toml.Decode(doc, &file)
	if err != nil {
		t.Fatalf("decode TOML: %v", err)
	}
	var order []string
	for _, key := range md.Keys() {
		if len(key) == 2 && key[0] == "transforms" {
			order = append(order, key[1])
		}
	}
	return file.Transforms, order
}

// fromJSON decodes a [transforms] object from a JSON connector config, with
// UseNumber as the config package should.
func fromJSON(t testing.TB, doc string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("decode JSON: %v", err)
	}
	return cfg
}

func buildTOML(t testing.TB, doc string) []transform.Transform {
	t.Helper()
	cfg, order := fromTOML(t, doc)
	ts, err := transform.Build(cfg, order)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return ts
}

// jsonMessage returns a sink-side message whose payload is the parsed JSON.
func jsonMessage(t testing.TB, payload string) *codec.Message {
	t.Helper()
	v, err := codec.ParseJSON([]byte(payload))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", payload, err)
	}
	return &codec.Message{Payload: codec.JSONPayload(v)}
}

// runJSON runs ts on payload and returns the resulting payload as JSON text.
func runJSON(t testing.TB, ts []transform.Transform, payload string) string {
	t.Helper()
	m := jsonMessage(t, payload)
	keep, err := transform.Run(ts, m)
	if err != nil || !keep {
		t.Fatalf("Run = %v, %v; want kept without error", keep, err)
	}
	out, err := codec.PayloadToFFI(m.Payload)
	if err != nil {
		t.Fatalf("PayloadToFFI: %v", err)
	}
	return string(out)
}

func names(ts []transform.Transform) []string {
	out := make([]string, len(ts))
	for i, tr := range ts {
		out[i] = tr.Name()
	}
	return out
}
