package provider_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// TestLocalFollowsSymlinks lays the connectors directory out as a Kubernetes ConfigMap volume does
// (each key a symlink to ..data/<key>, ..data a symlink to a timestamped directory): every file is
// loaded, as upstream's Path::is_file follows links; a dangling link and a link to a directory are
// skipped.
func TestLocalFollowsSymlinks(t *testing.T) {
	fixtures := copyFixtures(t)
	dir := t.TempDir()
	stamp := filepath.Join(dir, "..2026_12_01_11_00_00.000000001")
	if err := os.Rename(fixtures, stamp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(stamp), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(stamp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join("..data", e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"gone.toml": "..data/gone.toml", "folder.toml": "..data"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []listed{
		{config.KindSink, "orders_archive", 3},
		{config.KindSink, "stdout", 0},
		{config.KindSource, "random", 1},
		{config.KindSource, "sensor_feed", 1},
	}
	if got := listOf(t, p); !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if broken := p.Broken(ctx); len(broken) != 0 {
		t.Fatalf("broken: %v", broken)
	}
}
