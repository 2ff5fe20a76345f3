package testkit

// Plugin helpers: building the example C connector plugins and compiling small
// C test libraries.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// PluginNames are the example plugins built by BuildPlugins, as
// bin/plugins/libiggy_connector_<name>.so is named by `make plugins`.
var PluginNames = []string{"stdout_sink", "random_source", "null_sink", "fault"}

// LegacyFaultPlugin is the extra library BuildPlugins makes from fault.c with
// -DLEGACY_ABI: a source with the pre-ack ABI (iggy_source_handle).
const LegacyFaultPlugin = "libiggy_connector_fault_legacy.so"

// cflags are the Makefile's plugin flags.
var cflags = []string{"-O2", "-fPIC", "-Wall", "-Wextra", "-std=c11", "-D_GNU_SOURCE", "-shared", "-pthread"}

// PluginLibrary is the file name of example plugin name
// ("stdout_sink" -> "libiggy_connector_stdout_sink.so").
func PluginLibrary(name string) string { return "libiggy_connector_" + name + ".so" }

var pluginBuild struct {
	once sync.Once
	dir  string
	err  error
}

// BuildPlugins compiles every example plugin (and the legacy fault variant)
// with the system C compiler and returns the directory holding the libraries.
// The build runs once per test process; its output is also cached across
// processes in the temp directory, keyed by a hash of sources, compiler and
// flags, so parallel package tests share it.
func BuildPlugins(tb testing.TB) string {
	tb.Helper()
	pluginBuild.once.Do(func() { pluginBuild.dir, pluginBuild.err = buildPlugins() })
	if pluginBuild.err != nil {
		tb.Fatalf("build example plugins: %v", pluginBuild.err)
	}
	return pluginBuild.dir
}

// PluginSourceDir returns the directory of the C plugin sources and headers
// (pkg/plugin/cplugins).
func PluginSourceDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "plugin", "cplugins")
		if _, err := os.Stat(filepath.Join(dir, "iggy_connector.h")); err == nil {
			return filepath.Clean(dir), nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find plugin sources: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "pkg", "plugin", "cplugins"), nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("find plugin sources: no go.mod above " + wd)
		}
	}
}

func compiler() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

type target struct {
	lib, src string
	extra    []string
}

func buildPlugins() (string, error) {
	srcDir, err := PluginSourceDir()
	if err != nil {
		return "", err
	}
	var targets []target
	for _, n := range PluginNames {
		targets = append(targets, target{lib: PluginLibrary(n), src: n + ".c"})
	}
	targets = append(targets, target{lib: LegacyFaultPlugin, src: "fault.c", extra: []string{"-DLEGACY_ABI"}})

	key, err := buildKey(srcDir, targets)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "iggy-connector-plugins-"+key)
	if complete(dir, targets) {
		return dir, nil
	}
	// Build into a private directory and rename it into place, so concurrent
	// test processes never see half-written libraries.
	tmp, err := os.MkdirTemp(os.TempDir(), "iggy-connector-plugins-build-")
	if err != nil {
		return "", fmt.Errorf("build plugins: %w", err)
	}
	for _, t := range targets {
		args := append(append([]string{}, cflags...), t.extra...)
		args = append(args, "-o", filepath.Join(tmp, t.lib), filepath.Join(srcDir, t.src), "-lpthread")
		if out, err := exec.Command(compiler(), args...).CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("compile %s: %w\n%s", t.src, err, out)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if complete(dir, targets) { // another process won the race
			return dir, nil
		}
		return "", fmt.Errorf("build plugins: %w", err)
	}
	return dir, nil
}

// buildKey hashes everything that changes the libraries.
func buildKey(srcDir string, targets []target) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, compiler(), strings.Join(cflags, " "))
	if out, err := exec.Command(compiler(), "--version").Output(); err == nil {
		h.Write(out)
	} else {
		return "", fmt.Errorf("C compiler %q: %w", compiler(), err)
	}
	entries, err := os.ReadDir(srcDir)
	if err != nil {
		return "", fmt.Errorf("read plugin sources: %w", err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".c") && !strings.HasSuffix(e.Name(), ".h") {
			continue
		}
		f, err := os.Open(filepath.Join(srcDir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("read plugin sources: %w", err)
		}
		fmt.Fprintln(h, e.Name())
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("read plugin sources: %w", err)
		}
	}
	for _, t := range targets {
		fmt.Fprintln(h, t.lib, t.src, t.extra)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func complete(dir string, targets []target) bool {
	for _, t := range targets {
		if _, err := os.Stat(filepath.Join(dir, t.lib)); err != nil {
			return false
		}
	}
	return true
}

// CompileC compiles the C source src into a shared library in a fresh test
// directory and returns its path. name is the library file name (".so" is
// added when missing). The plugin headers (iggy_connector.h, plugin_util.h)
// are on the include path; flags are extra compiler flags such as -DNAME.
func CompileC(tb testing.TB, src string, name string, flags ...string) string {
	tb.Helper()
	srcDir, err := PluginSourceDir()
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.HasSuffix(name, ".so") {
		name += ".so"
	}
	dir := tb.TempDir()
	cfile := filepath.Join(dir, strings.TrimSuffix(name, ".so")+".c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		tb.Fatalf("write C source: %v", err)
	}
	lib := filepath.Join(dir, name)
	args := append(append([]string{}, cflags...), flags...)
	args = append(args, "-I", srcDir, "-o", lib, cfile, "-lpthread")
	if out, err := exec.Command(compiler(), args...).CombinedOutput(); err != nil {
		tb.Fatalf("compile %s: %v\n%s", name, err, out)
	}
	return lib
}

// SinkWithoutConsumeC is the C source of a sink library that exports every sink symbol but
// iggy_sink_consume, for tests of the symbol check (compile it with CompileC).
const SinkWithoutConsumeC = `
#include <stddef.h>
#include <stdint.h>
int32_t iggy_sink_open(uint32_t id, const uint8_t *c, size_t n, void *log) { return 0; }
int32_t iggy_sink_close(uint32_t id) { return 0; }
const char *iggy_sink_version(void) { return "0.0.1"; }
`
