package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// BenchmarkLocalList measures listing 50 connectors (each with 3 versions),
// which re-reads the pointer file on every call.
func BenchmarkLocalList(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 50; i++ {
		for v := 0; v < 3; v++ {
			doc := fmt.Sprintf(`type = "sink"
key = "sink%d"
enabled = true
version = %d
name = "n"
path = "p"
[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
[plugin_config]
a = 1
`, i, v)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d_%d.toml", i, v)), []byte(doc), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := p.List(ctx)
		if err != nil || len(list) != 50 {
			b.Fatalf("List = %d, %v", len(list), err)
		}
	}
}

// BenchmarkHTTPGetVersion measures one config fetch from a local server.
func BenchmarkHTTPGetVersion(b *testing.B) {
	_, srv := newConfigAPI(b)
	p, err := provider.NewHTTP(httpSettings(srv.URL), nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := config.ParseConnector("x", []byte(minimalSink("orders", 0)), "toml")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Create(ctx, config.KindSink, "orders", c); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.GetVersion(ctx, config.KindSink, "orders", 0); err != nil {
			b.Fatal(err)
		}
	}
}
