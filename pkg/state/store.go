package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

var (
	// ErrCorrupt is returned for a slots file without a valid header or without a valid slot. A
	// kill or a torn write cannot cause it (the file is created whole by rename, and a save never
	// touches the slot holding the newest state); damage from outside can.
	ErrCorrupt = errors.New("corrupt source state file")
	// ErrClosed is returned by a Save after Close.
	ErrClosed = errors.New("source state store is closed")
)

// found is what a read of the state directory found.
type found struct {
	data []byte     // the current state; nil for none
	f    *os.File   // the slots file, when it holds the current state and was opened for writing
	hdr  fileHeader // its header; without a current slots file, the stamp of the upstream file
	cur  int        // its slot holding the current state
	seq  uint64     // that slot's sequence number
	from string     // the file holding data ("" for none)
}

// Load returns the saved state of connector key, or nil when there is none (no file, or an empty
// state). A missing dir, a read error or a corrupt slots file is an error naming the path.
func Load(dir, key string) ([]byte, error) {
	fd, err := readState(dir, key, false)
	return fd.data, err
}

// readState finds the current state: the newest valid slot of the slots file, unless the
// upstream-format file is missing there or has changed since the slots file was created.
func readState(dir, key string, forWrite bool) (found, error) {
	if err := checkKey(key); err != nil {
		return found{}, err
	}
	up, upExists, err := readUpstream(dir, key)
	if err != nil {
		return found{}, err
	}
	upstream := found{data: nonEmpty(up), hdr: fileHeader{upstream: stampOf(up, upExists)}}
	if upExists {
		upstream.from = Path(dir, key)
	}
	path := slotsPath(dir, key)
	flag := os.O_RDONLY
	if forWrite {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return upstream, nil
	}
	if err != nil {
		return found{}, fmt.Errorf("load source state %q: %w", path, err)
	}
	fd, err := readSlots(f, path)
	if err != nil || (upExists && fd.hdr.upstream != upstream.hdr.upstream) {
		f.Close()
		if err != nil {
			return found{}, err
		}
		return upstream, nil // upstream's file was written after the slots file: it is newer
	}
	if forWrite {
		fd.f = f
	} else {
		f.Close()
	}
	return fd, nil
}

// readSlots parses an open slots file.
func readSlots(f *os.File, path string) (found, error) {
	var page [fileHeaderLen]byte
	if _, err := f.ReadAt(page[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return found{}, fmt.Errorf("load source state %q: %w", path, err)
	}
	hdr, ok := parseFileHeader(page[:])
	if !ok {
		return found{}, fmt.Errorf("load source state %q: %w: no valid header", path, ErrCorrupt)
	}
	info, err := f.Stat()
	if err != nil {
		return found{}, fmt.Errorf("load source state %q: %w", path, err)
	}
	body := make([]byte, max(0, min(info.Size(), hdr.fileSize())-pageSize))
	if n, err := f.ReadAt(body, pageSize); err != nil && !errors.Is(err, io.EOF) {
		return found{}, fmt.Errorf("load source state %q: %w", path, err)
	} else {
		body = body[:n]
	}
	var slots [2][]byte
	for i := range slots {
		from := min(i*hdr.slotSize, len(body))
		slots[i] = body[from:min(from+hdr.slotSize, len(body))]
	}
	cur, seq, data := newestSlot(slots)
	if cur < 0 {
		return found{}, fmt.Errorf("load source state %q: %w: neither slot holds a valid state", path, ErrCorrupt)
	}
	return found{data: nonEmpty(data), hdr: hdr, cur: cur, seq: seq, from: path}, nil
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Store saves the state of one running source connector. Its first save creates the slots file;
// later saves overwrite one slot in place. Close writes the last state in upstream's format.
type Store struct {
	mu       sync.Mutex
	dir, key string
	f        *os.File   // the slots file, once it holds the current state
	hdr      fileHeader // the slots file's header (before the first save: just the upstream stamp)
	cur      int        // the slot holding the newest durable state
	seq      uint64     // its sequence number
	latest   []byte     // the newest durable state, for Close
	buf      []byte     // one slot's bytes, reused by every save
	closed   bool
}

// Open returns the store of connector key in dir and the state saved there (nil for none), as Load.
func Open(dir, key string) (*Store, []byte, error) {
	fd, err := readState(dir, key, true)
	if err != nil {
		return nil, nil, err
	}
	s := &Store{dir: dir, key: key, f: fd.f, hdr: fd.hdr, cur: fd.cur, seq: fd.seq, latest: append([]byte(nil), fd.data...)}
	return s, fd.data, nil
}

// Save makes data the saved state; when it returns nil the state survives a crash of the process
// or the machine. On failure the previous state stays. Saving empty data saves "no state".
func (s *Store) Save(data []byte) error {
	if len(data) > maxStateLen {
		return fmt.Errorf("save source state %q: %d bytes exceed the limit of %d", slotsPath(s.dir, s.key), len(data), maxStateLen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("save source state %q: %w", slotsPath(s.dir, s.key), ErrClosed)
	}
	var err error
	if s.f == nil || slotHeaderLen+len(data) > s.hdr.slotSize || unlinked(s.f) {
		err = s.rebuild(data)
	} else {
		err = s.writeSlot(data)
	}
	if err != nil {
		// What the failed write left is unknown (a failed fdatasync may drop dirty pages, a failed
		// rename sync may leave the new file in place): the next save writes a whole new file.
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
		return fmt.Errorf("save source state %q: %w", slotsPath(s.dir, s.key), err)
	}
	s.latest = append(s.latest[:0], data...)
	return nil
}

// Latest returns a copy of the newest saved state (nil for none): what a plugin reopened by the same
// process gets, as a new process would get it from Open.
func (s *Store) Latest() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nonEmpty(append([]byte(nil), s.latest...))
}

// unlinked reports whether f's name was removed (someone deleted the state file while the
// connector ran): a save then writes a new file, as upstream's save would, rather than into a file
// no one will read.
func unlinked(f *os.File) bool {
	conn, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st syscall.Stat_t
	var statErr error
	if err := conn.Control(func(fd uintptr) { statErr = syscall.Fstat(int(fd), &st) }); err != nil || statErr != nil {
		return false
	}
	return st.Nlink == 0
}

// writeSlot overwrites the slot that does not hold the newest state and syncs it.
func (s *Store) writeSlot(data []byte) error {
	target, seq := 1-s.cur, s.seq+1
	s.buf = encodeSlot(s.buf[:0], seq, data)
	if _, err := s.f.WriteAt(s.buf, s.hdr.slotOffset(target)); err != nil {
		return err
	}
	if err := fdatasync(s.f); err != nil {
		return err
	}
	s.cur, s.seq = target, seq
	return nil
}

// rebuild creates the slots file whole, with data in slot 0, and renames it over the old one: at
// the first save, and when data outgrows a slot.
func (s *Store) rebuild(data []byte) error {
	current := 0
	if s.f != nil {
		current = s.hdr.slotSize
	}
	hdr := fileHeader{slotSize: slotSizeFor(len(data), current), upstream: s.hdr.upstream}
	file := make([]byte, hdr.fileSize())
	hdr.encode(file[:pageSize])
	seq := s.seq + 1
	copy(file[pageSize:], encodeSlot(nil, seq, data))
	f, err := replaceFileKeepOpen(s.dir, slotsPath(s.dir, s.key), file)
	if err != nil {
		return err
	}
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.hdr, s.cur, s.seq = f, hdr, 0, seq
	return nil
}

// Close ends the store. When the slots file holds the state, Close writes that state to upstream's
// file (atomically, as upstream saves) and removes the slots file, so a stopped connector leaves
// upstream's format behind. A crash in between leaves both files holding the same state.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.f == nil {
		return nil
	}
	defer s.f.Close()
	if err := writeUpstream(s.dir, s.key, s.latest); err != nil {
		return err
	}
	path := slotsPath(s.dir, s.key)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove source state %q after writing %q: %w", path, Path(s.dir, s.key), err)
	}
	return nil
}
