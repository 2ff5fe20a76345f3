// Package state persists a source connector's state: the opaque bytes its
// plugin hands over with a batch, kept in <dir>/source_<key>.state and
// handed back at the next open (ffi-abi.md §4.4, pipeline.md §2.7).
//
// Save is atomic: the bytes go to <file>.tmp (mode 0600), are synced, and
// the temporary file is renamed over the real one before the directory is
// synced, so a crash leaves either the old state or the new one, never a
// truncated file.
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrInvalidKey is returned for a connector key that cannot name a file.
var ErrInvalidKey = errors.New("invalid connector key for a state file")

// tmpSuffix marks the temporary file a Save writes before the rename.
const tmpSuffix = ".tmp"

// Path returns the state file of source connector key in dir.
func Path(dir, key string) string {
	return filepath.Join(dir, "source_"+key+".state")
}

// checkKey refuses keys that would place the file outside dir.
func checkKey(key string) error {
	if key == "" || strings.ContainsAny(key, `/\`+"\x00") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return nil
}

// Load returns the saved state of connector key, or nil when the file is
// missing or empty. A missing dir, or any read error, is an error naming
// the path. A leftover temporary file from an interrupted Save is ignored.
func Load(dir, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	path := Path(dir, key)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		info, dirErr := os.Stat(dir)
		if dirErr != nil {
			return nil, fmt.Errorf("load source state %q: state directory: %w", path, dirErr)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("load source state %q: state path %q is not a directory", path, dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load source state %q: %w", path, err)
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// saveLocks serializes Saves of the same file within the process, since
// they share one temporary file.
var saveLocks sync.Map // path -> *sync.Mutex

// Save atomically replaces the state of connector key with data. Saving
// empty data leaves a file that Load reports as no state. On failure the
// temporary file is removed and the previous state is left as it was.
func Save(dir, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	path := Path(dir, key)
	lock, _ := saveLocks.LoadOrStore(path, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()

	tmp := path + tmpSuffix
	if err := writeSynced(tmp, data); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("save source state %q: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("save source state %q: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("save source state %q: %w", path, err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	// A leftover temporary file keeps its old mode through O_CREATE.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes the rename durable.
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
