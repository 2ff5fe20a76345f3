package pluginpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotAllowed is wrapped by the errors of AllowList.Check: the plugin may not be loaded.
var ErrNotAllowed = errors.New("plugin not allowed")

// NotAllowedError says why a plugin path was refused; its text names the path and the allowed
// directories.
type NotAllowedError struct {
	Path   string   // the path as resolved by ResolvePath
	Dirs   []string // the allowed directories
	Reason string
}

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("plugin '%s' refused: %s; allowed plugin directories: %s (plugins.allowed_dirs, IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS)",
		e.Path, e.Reason, strings.Join(e.Dirs, ", "))
}

func (e *NotAllowedError) Unwrap() error { return ErrNotAllowed }

// AllowList is the set of directories plugins may be loaded from, at any depth. Both the
// supervisor (before it stores, activates or starts a config) and the runner (before it loads the
// library) check a plugin against it, so the check lives here once.
type AllowList struct {
	dirs []string // absolute, symlink-free where they exist, without duplicates
}

// NewAllowList makes an allow-list of dirs. Each is made absolute and has its symlinks resolved
// when it exists (a directory that does not exist yet is kept as written: it allows nothing until
// it is created as a real directory).
func NewAllowList(dirs []string) AllowList {
	var a AllowList
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = canonical(d)
		if !slices.Contains(a.dirs, d) {
			a.dirs = append(a.dirs, d)
		}
	}
	return a
}

// Dirs returns the allowed directories, in order.
func (a AllowList) Dirs() []string { return slices.Clone(a.dirs) }

// DefaultAllowedDirs is the allow-list used when none is configured: the directories of the
// plugins named by the given connector paths (resolved as ResolvePath does, symlinks followed;
// paths that do not resolve add nothing), then the plugins/ directory next to the running
// executable (its symlinks resolved too).
func DefaultAllowedDirs(pluginPaths []string) []string {
	var dirs []string
	for _, p := range pluginPaths {
		resolved, err := ResolvePath(p)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(resolved); err == nil {
			dirs = append(dirs, filepath.Dir(canonical(real)))
		}
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "plugins"))
	}
	return dirs
}

// Resolve is ResolvePath followed by Check: the symlink-free path to load for a connector's
// configured plugin path.
func (a AllowList) Resolve(configured string) (string, error) {
	path, err := ResolvePath(configured)
	if err != nil {
		return "", err
	}
	return a.Check(path)
}

// Check decides whether the plugin at path (as ResolvePath returned it) may be loaded and returns
// its absolute, symlink-free path, which is what must be loaded. Refused (a *NotAllowedError):
// a path outside every allowed directory once ".." and symlinks are resolved; anything but a
// regular file; a world-writable file; a file owned by neither root nor the running user; and a
// file under a world-writable directory without the sticky bit (anyone could swap it). A sticky
// world-writable directory such as /tmp is accepted: others cannot rename or remove its entries.
func (a AllowList) Check(path string) (string, error) { return a.check(path, os.Getuid()) }

// check is Check for a process running as uid self.
func (a AllowList) check(path string, self int) (string, error) {
	refuse := func(format string, args ...any) error {
		return &NotAllowedError{Path: path, Dirs: a.Dirs(), Reason: fmt.Sprintf(format, args...)}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", refuse("cannot resolve it: %v", err)
	}
	real = canonical(real)
	if !slices.ContainsFunc(a.dirs, func(dir string) bool { return within(dir, real) }) {
		return "", refuse("it resolves to '%s', outside every allowed directory", real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", refuse("%v", err)
	}
	if !fi.Mode().IsRegular() {
		return "", refuse("'%s' is not a regular file", real)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return "", refuse("file '%s' is world-writable (mode %s)", real, fi.Mode().Perm())
	}
	if uid, ok := ownerUID(fi); ok && uid != 0 && int64(uid) != int64(self) {
		return "", refuse("file '%s' is owned by uid %d, neither root nor the running user (uid %d)", real, uid, self)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o002 != 0 && di.Mode()&fs.ModeSticky == 0 {
			return "", refuse("directory '%s' is world-writable without the sticky bit", dir)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return real, nil
}

// within reports whether path lies inside dir (both absolute and clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// canonical makes p absolute and clean, and symlink-free when it exists.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return filepath.Clean(p)
}
