package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Current returns the saved state of source connector key exactly as Load (and so the next start)
// reads it, and when it was written: the modification time of the file holding it. Both are zero
// when there is no state.
func Current(dir, key string) ([]byte, time.Time, error) {
	fd, err := readState(dir, key, false)
	if err != nil || fd.data == nil {
		return nil, time.Time{}, err
	}
	info, err := os.Stat(fd.from)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("load source state %q: %w", fd.from, err)
	}
	return fd.data, info.ModTime(), nil
}

// Replace makes data the saved state of a source that is not running (an operator's rewrite):
// upstream's file is replaced atomically and the slots file removed, so the next start loads data.
// Empty data is Delete. Nothing may be saving the connector's state meanwhile.
func Replace(dir, key string, data []byte) error {
	if len(data) == 0 {
		return Delete(dir, key)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if len(data) > maxStateLen {
		return fmt.Errorf("save source state %q: %d bytes exceed the limit of %d", Path(dir, key), len(data), maxStateLen)
	}
	if err := writeUpstream(dir, key, data); err != nil {
		return err
	}
	return removeSynced(dir, slotsPath(dir, key))
}

// Delete removes the saved state of a source that is not running: its next start begins without
// state.
func Delete(dir, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := removeSynced(dir, slotsPath(dir, key)); err != nil {
		return err
	}
	return removeSynced(dir, Path(dir, key))
}

// removeSynced removes path (a missing file is fine) and makes the removal durable.
func removeSynced(dir, path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove source state %q: %w", path, err)
	}
	return syncDir(dir)
}
