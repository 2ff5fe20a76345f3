package plugin_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const onlySinkOpen = `
#include "iggy_connector.h"
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, iggy_log_cb l) {
    (void)id; (void)c; (void)n; (void)l; return 0;
}
`

const sourceWithoutBatchResult = `
#include "iggy_connector.h"
int32_t iggy_source_open(uint32_t id, const uint8_t *c, size_t n, const uint8_t *s, size_t sn, iggy_log_cb l) {
    (void)id; (void)c; (void)n; (void)s; (void)sn; (void)l; return 0;
}
int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb cb) { (void)id; (void)cb; return 0; }
int32_t iggy_source_close(uint32_t id) { (void)id; return 0; }
const char *iggy_source_version(void) { return "1.0.0"; }
`

func TestLoadRefusesWhatIsNotAPlugin(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "libgarbage.so")
	if err := os.WriteFile(garbage, []byte("this is not an ELF shared object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "libempty.so")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	onlyOpen := testkit.CompileC(t, onlySinkOpen, "libonly_open")
	noBatchResult := testkit.CompileC(t, sourceWithoutBatchResult, "libno_batch_result")
	missing := filepath.Join(dir, "libmissing.so")

	tests := []struct {
		name     string
		load     func(string) error
		path     string
		sentinel error
		mentions []string
	}{
		{"garbage file", loadSinkErr, garbage, plugin.ErrNotSharedLibrary, nil},
		{"empty file", loadSourceErr, empty, plugin.ErrNotSharedLibrary, nil},
		{"directory", loadSinkErr, dir, plugin.ErrNotSharedLibrary, nil},
		{"missing file", loadSinkErr, missing, fs.ErrNotExist, nil},
		{"sink lacking three symbols", loadSinkErr, onlyOpen, plugin.ErrMissingSymbols,
			[]string{"iggy_sink_consume, iggy_sink_close, iggy_sink_version"}},
		{"not a source at all", loadSourceErr, onlyOpen, plugin.ErrMissingSymbols,
			[]string{"iggy_source_open, iggy_source_handle_v2, iggy_source_batch_result, iggy_source_close, iggy_source_version"}},
		{"v2 source without batch result", loadSourceErr, noBatchResult, plugin.ErrMissingSymbols,
			[]string{": iggy_source_batch_result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load(tt.path)
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("load %s = %v; want an error wrapping %v", tt.path, err, tt.sentinel)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Fatalf("error %q does not name the library path", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Fatalf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func loadSinkErr(path string) error {
	_, err := plugin.LoadSink(path)
	return err
}

func loadSourceErr(path string) error {
	_, err := plugin.LoadSource(path)
	return err
}

// A resolved bare file name (found in the working directory) must load from
// there, although dlopen alone would only search the system paths.
func TestLoadBareFileNameFromWorkingDirectory(t *testing.T) {
	lib := examplePlugin(t, "null_sink")
	dir := t.TempDir()
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	const name = "libiggy_connector_null_sink_copy.so"
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	resolved, err := pluginpath.ResolvePath("libiggy_connector_null_sink_copy")
	if err != nil || resolved != name {
		t.Fatalf("ResolvePath = %q, %v; want the bare name %q", resolved, err, name)
	}
	sink, err := plugin.LoadSink(resolved)
	if err != nil {
		t.Fatalf("LoadSink(%q): %v", resolved, err)
	}
	if sink.Path() != name || sink.Version() != "0.1.0" {
		t.Fatalf("loaded %q version %q; want %q version 0.1.0", sink.Path(), sink.Version(), name)
	}
}

func TestLoadOncePerPath(t *testing.T) {
	path := examplePlugin(t, "fault")
	a, errA := plugin.LoadSink(path)
	b, errB := plugin.LoadSink(path)
	src, errC := plugin.LoadSource(path)
	if errA != nil || errB != nil || errC != nil {
		t.Fatalf("loads: %v, %v, %v", errA, errB, errC)
	}
	if a != b {
		t.Fatal("LoadSink twice for one path gave two handles; want the cached one")
	}
	if src.Path() != path || !src.SupportsAck() || src.Version() != "0.1.0-fault" {
		t.Fatalf("fault source: path %q ack %v version %q", src.Path(), src.SupportsAck(), src.Version())
	}
}
