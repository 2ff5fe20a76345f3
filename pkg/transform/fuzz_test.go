package transform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// FuzzBuild: connector configs come from files and the HTTP API. Build never
// panics on any decoded table (JSON or TOML); it either returns an error
// wrapping one of its sentinels or transforms that run on sample messages
// without panicking and without failing.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"add_fields":{"enabled":true,"fields":[{"key":"a","value":{"static":{"x":[1,2.5,null]}}}]}}`), false)
	f.Add([]byte(`{"filter_fields":{"enabled":true,"keep_fields":["a"],"patterns":[{"key_pattern":{"regex":"^b"},"value_pattern":{"between":[1,2]}}]}}`), false)
	f.Add([]byte(`{"update_fields":{"enabled":true,"fields":[{"key":"a","value":{"computed":"uuid_v7"},"condition":"key_exists"}]},"unwrap_envelope":{"enabled":true,"field":"a"}}`), false)
	f.Add([]byte(`{"delete_fields":{"enabled":true,"fields":["a"]},"proto_convert":{"enabled":false}}`), false)
	f.Add([]byte("[transforms.filter_fields]\nenabled = true\npatterns = [{ value_pattern = \"is_null\" }, { value_pattern = { greater_than = 1 } }]\n"), true)
	f.Add([]byte("[transforms.add_fields]\nenabled = true\n[[transforms.add_fields.fields]]\nkey = \"t\"\nvalue = { static = 1979-05-27T07:32:00Z }\n"), true)
	samples := []string{`{"a":{"a":1},"b":1.5,"c":"s","d":null}`, `[1]`, `"a"`, `{}`}
	f.Fuzz(func(t *testing.T, data []byte, isTOML bool) {
		var cfg map[string]any
		var order []string
		if isTOML {
			var file struct {
				Transforms map[string]any `toml:"transforms"`
			}
			md, err := toml.Decode(string(data), &file)
			if err != nil {
				return
			}
			cfg = file.Transforms
			for _, key := range md.Keys() {
				if len(key) == 2 && key[0] == "transforms" {
					order = append(order, key[1])
				}
			}
		} else {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if dec.Decode(&cfg) != nil {
				return
			}
		}
		ts, err := transform.Build(cfg, order)
		if err != nil {
			if !errors.Is(err, transform.ErrInvalidConfig) && !errors.Is(err, transform.ErrUnknownTransform) &&
				!errors.Is(err, transform.ErrNotSupported) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		for _, s := range samples {
			v, _ := codec.ParseJSON([]byte(s))
			m := &codec.Message{Payload: codec.JSONPayload(v)}
			if keep, err := transform.Run(ts, m); !keep || err != nil {
				t.Fatalf("built-in transforms dropped or failed: %v, %v", keep, err)
			}
			if _, err := codec.PayloadToFFI(m.Payload); err != nil {
				t.Fatalf("transformed payload cannot be encoded: %v", err)
			}
		}
	})
}
