package config_test

import (
	"os"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func BenchmarkParseConnector(b *testing.B) {
	data, err := os.ReadFile("testdata/upstream/connectors/orders_archive_sink.toml")
	if err != nil {
		b.Fatal(err)
	}
	c, err := config.ParseConnector("seed", data, "toml")
	if err != nil {
		b.Fatal(err)
	}
	jsonDoc, err := c.MarshalDocument("json")
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct {
		format string
		data   []byte
	}{{"toml", data}, {"json", jsonDoc}} {
		b.Run(in.format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := config.ParseConnector("bench", in.data, in.format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadRuntime(b *testing.B) {
	env := nonDefaultRuntime().Environ()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.LoadRuntime("testdata/upstream/config.toml", env); err != nil {
			b.Fatal(err)
		}
	}
}
