package pluginpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolvePathFindsExistingFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	touch(t, filepath.Join(dir, "target", "release", "libplain.so"))
	touch(t, filepath.Join(dir, "libx.so.1.so"))
	touch(t, filepath.Join(dir, "libmac.dylib"))
	touch(t, filepath.Join(dir, "libwin.dll"))
	touch(t, filepath.Join(dir, "libcwd.so"))
	if err := os.Symlink(filepath.Join(dir, "libplain.target"), filepath.Join(dir, "liblink.so")); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, "libplain.target"))

	tests := []struct {
		name, in, want string
	}{
		{"extension added", "target/release/libplain", "target/release/libplain.so"},
		{"extension kept", "target/release/libplain.so", "target/release/libplain.so"},
		{"version suffix is not an extension", "libx.so.1", "libx.so.1.so"},
		{"dylib kept on linux", "libmac.dylib", "libmac.dylib"},
		{"dll kept on linux", "libwin.dll", "libwin.dll"},
		{"absolute existing path", filepath.Join(dir, "libcwd"), filepath.Join(dir, "libcwd.so")},
		{"symlink followed", "liblink.so", "liblink.so"},
		{"directory part dropped when searching", "no/such/dir/libcwd", filepath.Join(dir, "libcwd.so")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pluginpath.ResolvePath(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ResolvePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestResolvePathAbsoluteMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libnothing")
	_, err := pluginpath.ResolvePath(missing)
	want := "Invalid configuration: Plugin library not found at '" + missing + ".so'. Ensure the shared library file exists at this path."
	if err == nil || err.Error() != want || !errors.Is(err, pluginpath.ErrPluginNotFound) {
		t.Fatalf("ResolvePath(%q) error = %v; want %q wrapping ErrPluginNotFound", missing, err, want)
	}
}

func TestResolvePathRelativeMissingListsEverySearchedPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = pluginpath.ResolvePath("plugins/libnothing_here")
	want := strings.Join([]string{
		"Invalid configuration: Plugin library not found. Searched paths:",
		"  - plugins/libnothing_here.so",
		"  - " + filepath.Join(filepath.Dir(exe), "libnothing_here.so"),
		"  - " + filepath.Join(dir, "libnothing_here.so"),
		"  - /usr/lib/libnothing_here.so",
		"  - /usr/lib64/libnothing_here.so",
		"  - /lib/libnothing_here.so",
		"  - /lib64/libnothing_here.so",
		"  - /usr/local/lib/libnothing_here.so",
		"  - /usr/local/lib64/libnothing_here.so",
		"Ensure the shared library (.so/.dylib/.dll) is built and placed in one of these locations.",
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("error =\n%v\nwant\n%s", err, want)
	}
	var re *pluginpath.ResolveError
	if !errors.As(err, &re) || len(re.Searched) != 9 || !errors.Is(err, pluginpath.ErrPluginNotFound) {
		t.Fatalf("error %#v: want a *ResolveError with 9 searched paths wrapping ErrPluginNotFound", err)
	}
}
