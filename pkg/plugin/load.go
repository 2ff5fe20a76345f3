package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// library is one dlopened file. Libraries are never closed: plugin threads and
// thread-local destructors can outlive any instance.
type library struct {
	path   string
	handle uintptr
}

var (
	librariesMu sync.Mutex
	libraries   = map[string]*library{} // by the path given to Load*
	sinks       = map[string]*Sink{}
	sources     = map[string]*Source{}
)

// openLibrary dlopens path once per process (callers hold librariesMu).
func openLibrary(path string) (*library, error) {
	if lib, ok := libraries[path]; ok {
		return lib, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load plugin %q: %w", path, err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("load plugin %q: is a directory: %w", path, ErrNotSharedLibrary)
	}
	// dlopen searches the system paths for a name without '/', never the
	// working directory, which is where ResolvePath found it.
	loadPath := path
	if !strings.Contains(path, "/") {
		loadPath = "./" + path
	}
	handle, err := dlopen(loadPath)
	if err != nil {
		return nil, fmt.Errorf("load plugin %q: %w: %v", path, ErrNotSharedLibrary, err)
	}
	lib := &library{path: path, handle: handle}
	libraries[path] = lib
	return lib, nil
}

// dlopen and dlsym report failures through dlerror, which is per OS thread:
// keep the goroutine on one thread across each pair of calls.
func dlopen(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func (l *library) symbol(name string) uintptr {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addr, err := purego.Dlsym(l.handle, name)
	if err != nil {
		return 0
	}
	return addr
}

// symbols resolves every name; it returns the addresses and the missing names.
func (l *library) symbols(names ...string) (map[string]uintptr, []string) {
	found := make(map[string]uintptr, len(names))
	var missing []string
	for _, n := range names {
		if addr := l.symbol(n); addr != 0 {
			found[n] = addr
		} else {
			missing = append(missing, n)
		}
	}
	return found, missing
}

func missingSymbolsError(kind, path string, missing []string) error {
	return fmt.Errorf("load %s plugin %q: %w: %s", kind, path, ErrMissingSymbols, strings.Join(missing, ", "))
}

// versionString reads a static NUL-terminated C string lossily as UTF-8.
func versionString(p *byte) string {
	if p == nil {
		return ""
	}
	const maxVersion = 4096
	n := 0
	for n < maxVersion && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return strings.ToValidUTF8(string(unsafe.Slice(p, n)), "\uFFFD")
}

// IsNotFound reports whether a Load* error means the file does not exist.
func IsNotFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// emptyBuffer backs zero-length arguments: the SDK builds Rust slices from
// the pointers, and a NULL pointer is undefined behaviour even with length 0.
var emptyBuffer = [1]byte{}

// bufferArg returns a non-NULL pointer and the length of b.
func bufferArg(b []byte) (*byte, uintptr) {
	if len(b) == 0 {
		return &emptyBuffer[0], 0
	}
	return &b[0], uintptr(len(b))
}
