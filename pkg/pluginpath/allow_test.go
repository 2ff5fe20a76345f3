package pluginpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
)

// allowFixture is a directory tree: allowed/ (the allow-list), outside/ (not in it), each holding
// one plugin file, and the list over allowed/.
type allowFixture struct {
	root, allowed, outside string
	list                   pluginpath.AllowList
}

func newAllowFixture(t *testing.T) allowFixture {
	t.Helper()
	root := t.TempDir()
	f := allowFixture{root: root, allowed: filepath.Join(root, "allowed"), outside: filepath.Join(root, "outside")}
	touch(t, filepath.Join(f.allowed, "libgood.so"))
	touch(t, filepath.Join(f.allowed, "nested", "libdeep.so"))
	touch(t, filepath.Join(f.outside, "libevil.so"))
	f.list = pluginpath.NewAllowList([]string{f.allowed})
	return f
}

func TestAllowListChecksTheResolvedPath(t *testing.T) {
	f := newAllowFixture(t)
	if err := os.Symlink(filepath.Join(f.outside, "libevil.so"), filepath.Join(f.allowed, "libescape.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.allowed, "libgood.so"), filepath.Join(f.outside, "libpointer.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, filepath.Join(f.allowed, "subdir-link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		want       string // the symlink-free path to load; "" means refused
	}{
		{"a file in an allowed dir", filepath.Join(f.allowed, "libgood"), filepath.Join(f.allowed, "libgood.so")},
		{"a file below an allowed dir", filepath.Join(f.allowed, "nested", "libdeep.so"), filepath.Join(f.allowed, "nested", "libdeep.so")},
		{"traversal with ..", filepath.Join(f.allowed, "..", "outside", "libevil.so"), ""},
		{"traversal written inside the allowed prefix", f.allowed + "/nested/../../outside/libevil", ""},
		{"a symlink pointing outside", filepath.Join(f.allowed, "libescape.so"), ""},
		{"a symlinked directory pointing outside", filepath.Join(f.allowed, "subdir-link", "libevil.so"), ""},
		{"a symlink from outside to an allowed file", filepath.Join(f.outside, "libpointer.so"), filepath.Join(f.allowed, "libgood.so")},
		{"a file outside", filepath.Join(f.outside, "libevil.so"), ""},
		{"a sibling sharing the prefix", f.allowed + "-not/libx.so", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "a sibling sharing the prefix" {
				touch(t, c.path)
			}
			got, err := f.list.Resolve(c.path)
			if c.want != "" {
				if err != nil || got != c.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", c.path, got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q; want a refusal", c.path, got)
			}
			if !errors.Is(err, pluginpath.ErrNotAllowed) {
				t.Fatalf("error %v does not wrap ErrNotAllowed", err)
			}
			for _, want := range []string{"outside every allowed directory", f.allowed, "plugins.allowed_dirs"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

func TestAllowListRefusesWritableByOthers(t *testing.T) {
	f := newAllowFixture(t)
	writable := filepath.Join(f.allowed, "libshared.so")
	touch(t, writable)
	if err := os.Chmod(writable, 0o666); err != nil {
		t.Fatal(err)
	}
	openDir := filepath.Join(f.allowed, "open")
	touch(t, filepath.Join(openDir, "libinopen.so"))
	if err := os.Chmod(openDir, 0o777); err != nil {
		t.Fatal(err)
	}
	stickyDir := filepath.Join(f.allowed, "sticky")
	touch(t, filepath.Join(stickyDir, "libinsticky.so"))
	if err := os.Chmod(stickyDir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, reason string // reason "" means allowed
	}{
		{"a world-writable file", writable, "is world-writable (mode -rw-rw-rw-)"},
		{"a file in a world-writable directory", filepath.Join(openDir, "libinopen.so"), "directory '" + openDir + "' is world-writable without the sticky bit"},
		{"a file in a sticky world-writable directory", filepath.Join(stickyDir, "libinsticky.so"), ""},
		{"a directory", filepath.Join(f.allowed, "nested"), "is not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.list.Check(c.path)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("Check(%q): %v; want it allowed", c.path, err)
				}
				return
			}
			if !errors.Is(err, pluginpath.ErrNotAllowed) || !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), c.path) {
				t.Fatalf("Check(%q) = %v; want a refusal naming the path and %q", c.path, err, c.reason)
			}
		})
	}
}

// The default list: the directories of the plugins the startup configs name (symlinks resolved,
// unresolvable paths skipped), then plugins/ next to the executable.
func TestDefaultAllowedDirs(t *testing.T) {
	f := newAllowFixture(t)
	link := filepath.Join(f.root, "linked")
	if err := os.Symlink(f.outside, link); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	got := pluginpath.DefaultAllowedDirs([]string{
		filepath.Join(f.allowed, "libgood"),
		filepath.Join(link, "libevil.so"),
		filepath.Join(f.root, "missing", "libnothing"),
	})
	want := []string{f.allowed, f.outside, filepath.Join(filepath.Dir(exe), "plugins")}
	if !slices.Equal(got, want) {
		t.Fatalf("DefaultAllowedDirs = %q; want %q", got, want)
	}
	list := pluginpath.NewAllowList(got)
	if _, err := list.Resolve(filepath.Join(f.allowed, "nested", "libdeep")); err != nil {
		t.Errorf("a plugin below a default directory: %v", err)
	}
	other := filepath.Join(f.root, "other", "libother.so")
	touch(t, other)
	if _, err := list.Resolve(other); !errors.Is(err, pluginpath.ErrNotAllowed) {
		t.Errorf("a plugin in a directory no startup config names: %v; want refused", err)
	}
}

func TestNewAllowListNormalisesDirs(t *testing.T) {
	f := newAllowFixture(t)
	link := filepath.Join(f.root, "via-link")
	if err := os.Symlink(f.allowed, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(f.root)
	list := pluginpath.NewAllowList([]string{"allowed", link, f.allowed + "/", "", filepath.Join(f.root, "later")})
	want := []string{f.allowed, filepath.Join(f.root, "later")}
	if got := list.Dirs(); !slices.Equal(got, want) {
		t.Fatalf("Dirs = %q; want %q", got, want)
	}
}
