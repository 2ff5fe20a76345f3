// Package state persists a source connector's state: the opaque bytes its plugin hands over with a
// batch, handed back at the next open (docs/plugin-abi.md §4.4, docs/pipeline.md §2.7).
//
// Two files may hold it, both in the state directory:
//
//   - source_<key>.slots, written while a connector runs: a preallocated file with two checksummed
//     slots, each save overwriting the older slot in place with one fdatasync (layout in slots.go).
//     A kill or a torn write at any byte leaves the other slot, the last durable state.
//   - source_<key>.state, upstream's format (the raw state bytes), read when no slots file holds a
//     newer state and written by Close, so a cleanly stopped connector leaves the file upstream's
//     runtime reads.
//
// That is the file backend, upstream's. With [state] backend = "iggy" the state lives in Iggy
// instead: a topic per source (source_<key>) in the state stream, one message per save, the
// newest read at open; a runner then needs no volume. Both sit behind Backend, so a runner and
// the offsets API read the state the same way.
//
// Files: state.go (paths, keys and upstream's file format), slots.go (the slots file layout),
// store.go (Load, and the Store a running source saves through), admin.go (reading, replacing and
// deleting the state of a source that is not running: the supervisor's offsets routes), backend.go (the Backend and
// Saver interfaces, FileBackend), iggy.go (IggyBackend: state topics and migration from a file).
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ErrInvalidKey is returned for a connector key that cannot name a file.
var ErrInvalidKey = errors.New("invalid connector key for a state file")

// tmpSuffix marks the temporary file written before a rename.
const tmpSuffix = ".tmp"

// Path returns upstream's state file of source connector key in dir.
func Path(dir, key string) string {
	return filepath.Join(dir, "source_"+key+".state")
}

// slotsPath returns the slots file of source connector key in dir.
func slotsPath(dir, key string) string {
	return filepath.Join(dir, "source_"+key+slotsSuffix)
}

// checkKey refuses keys that would place the file outside dir.
func checkKey(key string) error {
	if key == "" || strings.ContainsAny(key, `/\`+"\x00") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return nil
}

// readUpstream returns the bytes of the upstream-format file and whether it exists. A missing dir,
// or any read error, is an error naming the path. A leftover temporary file is ignored.
func readUpstream(dir, key string) ([]byte, bool, error) {
	path := Path(dir, key)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		info, dirErr := os.Stat(dir)
		if dirErr != nil {
			return nil, false, fmt.Errorf("load source state %q: state directory: %w", path, dirErr)
		}
		if !info.IsDir() {
			return nil, false, fmt.Errorf("load source state %q: state path %q is not a directory", path, dir)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("load source state %q: %w", path, err)
	}
	return data, true, nil
}

// saveLocks serializes writes of the same upstream file within the process, since they share one
// temporary file.
var saveLocks sync.Map // path -> *sync.Mutex

// writeUpstream atomically replaces the upstream-format file with data, as upstream saves: write
// <file>.tmp (mode 0600), sync, rename, sync the directory. On failure the temporary file is
// removed and the previous file is left as it was.
func writeUpstream(dir, key string, data []byte) error {
	path := Path(dir, key)
	lock, _ := saveLocks.LoadOrStore(path, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	if err := replaceFile(dir, path, data); err != nil {
		return fmt.Errorf("save source state %q: %w", path, err)
	}
	return nil
}

// replaceFileKeepOpen writes data to path+".tmp", syncs it, renames it over path and syncs dir. It
// returns the renamed file, open for reading and writing.
func replaceFileKeepOpen(dir, path string, data []byte) (*os.File, error) {
	tmp := path + tmpSuffix
	f, err := writeSynced(tmp, data)
	if err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// replaceFile is replaceFileKeepOpen for a file nobody writes afterwards.
func replaceFile(dir, path string, data []byte) error {
	f, err := replaceFileKeepOpen(dir, path, data)
	if err != nil {
		return err
	}
	return f.Close()
}

func writeSynced(path string, data []byte) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	// A leftover temporary file keeps its old mode through O_CREATE.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := fdatasync(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fdatasync flushes f's data and the metadata needed to read it back (its size), not its times.
func fdatasync(f *os.File) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var syncErr error
	if err := conn.Control(func(fd uintptr) {
		for {
			syncErr = syscall.Fdatasync(int(fd))
			if syncErr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if syncErr != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), syncErr)
	}
	return nil
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync state directory %q: %w", dir, err)
	}
	return nil
}
