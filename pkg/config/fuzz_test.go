package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// fuzzConnector checks that a connector document never panics the parser,
// and that whatever parses renders back to an equal connector.
func fuzzConnector(t *testing.T, data []byte, format string) {
	c, err := config.ParseConnector("fuzz", data, format)
	if err != nil {
		return
	}
	for _, out := range []string{"toml", "json"} {
		rendered, err := c.MarshalDocument(out)
		if err != nil {
			continue // e.g. a JSON null that TOML cannot hold
		}
		back, err := config.ParseConnector("rendered", rendered, out)
		if err != nil {
			t.Fatalf("rendered %s does not parse: %v\n%s", out, err, rendered)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("%s round trip changed the connector:\n got %+v\nwant %+v\n%s", out, back, c, rendered)
		}
	}
}

func addFixtureSeeds(f *testing.F, asJSON bool) {
	paths, _ := filepath.Glob("testdata/upstream/connectors/*.toml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if !asJSON {
			f.Add(data)
			continue
		}
		c, err := config.ParseConnector(p, data, "toml")
		if err != nil {
			f.Fatal(err)
		}
		doc, _ := c.MarshalDocument("json")
		f.Add(doc)
	}
}

func FuzzParseConnectorTOML(f *testing.F) {
	addFixtureSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzConnector(t, data, "toml") })
}

func FuzzParseConnectorJSON(f *testing.F) {
	addFixtureSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzConnector(t, data, "json") })
}

func FuzzLoadRuntime(f *testing.F) {
	data, err := os.ReadFile("testdata/upstream/config.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := config.ParseRuntime("fuzz", data, nil)
		if err != nil {
			return
		}
		back, err := config.LoadRuntime("", r.Environ())
		if err != nil {
			t.Fatalf("Environ of a loaded runtime does not load: %v", err)
		}
		_ = back // strings set to "" are not representable in the environment, so no equality here
	})
}

// FuzzParseConnectorBody covers what an HTTP config provider may answer.
func FuzzParseConnectorBody(f *testing.F) {
	c, err := config.ParseConnector("seed", []byte(validSink), "toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c.VersionJSON(true))
	f.Add([]byte(`{"key":"k","enabled":true,"version":1,"name":"n","path":"p","streams":[{"stream":"s","topic":"t","schema":"raw","linger_time":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.ParseConnectorBody("fuzz", config.KindSource, data)
		if err != nil {
			return
		}
		if _, err := config.ParseConnectorBody("again", config.KindSource, c.VersionJSON(false)); err != nil {
			t.Fatalf("a decoded body does not decode again: %v\n%s", err, c.VersionJSON(false))
		}
	})
}
