package pluginpath

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Sentinels wrapped by ResolvePath's errors.
var (
	// ErrPluginNotFound: no candidate file exists.
	ErrPluginNotFound = errors.New("plugin library not found")
	// ErrInvalidPath: the path has no file name.
	ErrInvalidPath = errors.New("invalid plugin path")
)

// systemLibDirs are searched after the executable's directory and the working
// directory, on every OS, as upstream does.
var systemLibDirs = []string{"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/local/lib64"}

// ResolveError is a path resolution failure. Its text is upstream's, starting
// with "Invalid configuration: "; it wraps ErrPluginNotFound or ErrInvalidPath.
type ResolveError struct {
	Path     string   // the configured path with the library extension added
	Searched []string // candidates tried, in order (empty for an absolute path)
	text     string
	kind     error
}

func (e *ResolveError) Error() string { return "Invalid configuration: " + e.text }
func (e *ResolveError) Unwrap() error { return e.kind }

// ResolvePath turns a connector's configured plugin path into the path to
// load, exactly as upstream (docs/plugin-abi.md §6): add the OS library extension
// unless the path already ends in .so, .dylib or .dll; use the path as is if
// it exists; otherwise, for a relative path, look for its file name in the
// executable's directory, the working directory and the system library
// directories. The result is not made absolute; LoadSink and LoadSource take
// care that a bare file name is loaded from the working directory.
func ResolvePath(path string) (string, error) {
	withExt := path
	switch fileExtension(path) {
	case "so", "dylib", "dll":
	default:
		withExt = path + "." + osLibraryExtension()
	}
	if exists(withExt) {
		return withExt, nil
	}
	if filepath.IsAbs(withExt) {
		return "", &ResolveError{Path: withExt, kind: ErrPluginNotFound,
			text: "Plugin library not found at '" + withExt + "'. Ensure the shared library file exists at this path."}
	}
	name, ok := fileName(withExt)
	if !ok {
		return "", &ResolveError{Path: withExt, kind: ErrInvalidPath, text: "Invalid plugin path: '" + withExt + "'"}
	}
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	if cwd, err := os.Getwd(); err == nil {
		dirs = append(dirs, cwd)
	}
	dirs = append(dirs, systemLibDirs...)
	searched := []string{withExt}
	for _, dir := range dirs {
		full := filepath.Join(dir, name)
		if exists(full) {
			return full, nil
		}
		searched = append(searched, full)
	}
	var b strings.Builder
	b.WriteString("Plugin library not found. Searched paths:\n")
	for i, p := range searched {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  - " + p)
	}
	b.WriteString("\nEnsure the shared library (.so/.dylib/.dll) is built and placed in one of these locations.")
	return "", &ResolveError{Path: withExt, Searched: searched, kind: ErrPluginNotFound, text: b.String()}
}

func osLibraryExtension() string {
	switch runtime.GOOS {
	case "darwin", "ios":
		return "dylib"
	case "windows":
		return "dll"
	default:
		return "so"
	}
}

// exists follows symlinks and treats any stat failure as absence, like Rust's
// Path::exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fileName mirrors Rust's Path::file_name: the last normal component, ignoring
// trailing separators and "." components; none for "", "/" or a trailing "..".
func fileName(path string) (string, bool) {
	for {
		path = strings.TrimRight(path, "/")
		switch {
		case path == "" || path == ".":
			return "", false
		case strings.HasSuffix(path, "/."):
			path = path[:len(path)-2]
			continue
		}
		base := path[strings.LastIndexByte(path, '/')+1:]
		if base == ".." || base == "." {
			return "", false
		}
		return base, true
	}
}

// fileExtension mirrors Rust's Path::extension: the text after the last '.'
// of the file name, unless that '.' is its first character (or the name is "..").
func fileExtension(path string) string {
	name, ok := fileName(path)
	if !ok {
		return ""
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return ""
	}
	return name[i+1:]
}
