package testkit_test

import (
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func TestBuildPluginsMakesLoadableLibraries(t *testing.T) {
	dir := testkit.BuildPlugins(t)
	if again := testkit.BuildPlugins(t); again != dir {
		t.Fatalf("second BuildPlugins = %q; want the cached %q", again, dir)
	}
	lib := func(name string) string { return filepath.Join(dir, testkit.PluginLibrary(name)) }
	for _, name := range []string{"stdout_sink", "null_sink", "fault"} {
		if _, err := plugin.LoadSink(lib(name)); err != nil {
			t.Errorf("%s as a sink: %v", name, err)
		}
	}
	for _, name := range []string{"random_source", "fault"} {
		src, err := plugin.LoadSource(lib(name))
		if err != nil || !src.SupportsAck() {
			t.Errorf("%s as a v2 source: %v", name, err)
		}
	}
	legacy, err := plugin.LoadSource(filepath.Join(dir, testkit.LegacyFaultPlugin))
	if err != nil || legacy.SupportsAck() {
		t.Fatalf("legacy fault source: %v (ack %v); want a loadable source without acks", err, legacy != nil && legacy.SupportsAck())
	}
}

const versionedSink = `
#include "iggy_connector.h"
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, iggy_log_cb l) { (void)id; (void)c; (void)n; (void)l; return 0; }
int32_t iggy_sink_consume(uint32_t id, const uint8_t *a, size_t an, const uint8_t *b, size_t bn, const uint8_t *m, size_t mn) {
    (void)id; (void)a; (void)an; (void)b; (void)bn; (void)m; (void)mn; return 0;
}
int32_t iggy_sink_close(uint32_t id) { (void)id; return 0; }
const char *iggy_sink_version(void) { return VERSION; }
`

func TestCompileCUsesHeadersAndFlags(t *testing.T) {
	path := testkit.CompileC(t, versionedSink, "libversioned", `-DVERSION="9.8.7"`)
	if filepath.Base(path) != "libversioned.so" {
		t.Fatalf("CompileC made %q; want libversioned.so", path)
	}
	sink, err := plugin.LoadSink(path)
	if err != nil {
		t.Fatal(err)
	}
	if sink.Version() != "9.8.7" {
		t.Fatalf("version %q; want the -D value 9.8.7", sink.Version())
	}
}
