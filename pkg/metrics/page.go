package metrics

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	dto "github.com/prometheus/client_model/go"
)

// ErrBadPage wraps every refusal of a stats page file: not one, another layout version, or
// another connector's.
var ErrBadPage = errors.New("bad stats page")

// pageMagic opens every stats page file.
const pageMagic = "IGGYCSP\x00"

// pageLayoutVersion is the layout of cells; a runner refuses a page of another version.
const pageLayoutVersion = 6 // 2: dead-letter counters; 3: consumer lag table; 4: dropped plugin log lines; 5: time throttled; 6: dropped tap events

// pageFileSize is the size of a page file: the cells rounded up to whole memory pages.
var pageFileSize = (int(unsafe.Sizeof(cells{})) + os.Getpagesize() - 1) / os.Getpagesize() * os.Getpagesize()

// maxPageKey bounds the connector key in the header (config allows 128 characters).
const maxPageKey = 128

// pageHeader identifies a page file. The supervisor writes it once, before any runner maps the
// file; it is read-only afterwards.
type pageHeader struct {
	magic   [8]byte
	layout  uint32
	size    uint32 // unsafe.Sizeof(cells{}) of the writer
	kind    uint32 // 1 sink, 2 source
	keyLen  uint32
	key     [maxPageKey]byte
	_unused [8]byte
}

func kindCode(kind string) uint32 {
	switch kind {
	case KindSink:
		return 1
	case KindSource:
		return 2
	}
	return 0
}

// Page is one connector's figures in a file mapped into memory (MAP_SHARED): the supervisor
// creates it, hands its path to the runner, and both map it. The runner counts into it; the
// supervisor composes /stats and /metrics from it without asking the runner, and whatever a runner
// counted stays in the file when the runner dies. Counters keep counting across runner restarts.
type Page struct {
	path      string
	key, kind string
	mem       []byte
	c         *cells
	labels    *seriesLabels
}

// CreatePage creates (or replaces) the page file at path for connector key of kind, all figures
// zero, and maps it. An existing file is removed first, so a process still mapping the old one
// cannot write into the new one.
func CreatePage(path, key, kind string) (*Page, error) {
	if kindCode(kind) == 0 {
		return nil, fmt.Errorf("stats page %s: connector %q: kind %q: %w", path, key, kind, ErrInvalidKind)
	}
	if len(key) > maxPageKey {
		return nil, fmt.Errorf("stats page %s: connector key %.20q... is longer than %d bytes", path, key, maxPageKey)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stats page %s: remove the old file: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stats page %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(pageFileSize)); err != nil {
		return nil, fmt.Errorf("stats page %s: size the file: %w", path, err)
	}
	p, err := mapPage(f, path, key, kind)
	if err != nil {
		return nil, err
	}
	h := &p.c.header
	h.layout = pageLayoutVersion
	h.size = uint32(unsafe.Sizeof(cells{}))
	h.kind = kindCode(kind)
	h.keyLen = uint32(copy(h.key[:], key))
	copy(h.magic[:], pageMagic) // last: a half-written header is no page
	return p, nil
}

// OpenPage maps the existing page file at path and checks that it is a stats page of this layout
// for connector key of kind; anything else is refused with an error wrapping ErrBadPage.
func OpenPage(path, key, kind string) (*Page, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("stats page %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stats page %s: %w", path, err)
	}
	if fi.Size() < int64(unsafe.Sizeof(cells{})) {
		return nil, fmt.Errorf("stats page %s: %w: %d bytes, a page takes %d", path, ErrBadPage, fi.Size(), unsafe.Sizeof(cells{}))
	}
	p, err := mapPage(f, path, key, kind)
	if err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Page) check() error {
	h := &p.c.header
	switch {
	case string(h.magic[:]) != pageMagic:
		return fmt.Errorf("stats page %s: %w: no stats page header (magic %q)", p.path, ErrBadPage, h.magic[:])
	case h.layout != pageLayoutVersion || h.size != uint32(unsafe.Sizeof(cells{})):
		return fmt.Errorf("stats page %s: %w: layout version %d (%d bytes); this build reads version %d (%d bytes)",
			p.path, ErrBadPage, h.layout, h.size, pageLayoutVersion, unsafe.Sizeof(cells{}))
	}
	key := string(h.key[:min(h.keyLen, maxPageKey)])
	if key != p.key || h.kind != kindCode(p.kind) {
		return fmt.Errorf("stats page %s: %w: it belongs to %s/%s, not %s/%s", p.path, ErrBadPage, kindName(h.kind), key, p.kind, p.key)
	}
	return nil
}

func kindName(code uint32) string {
	switch code {
	case 1:
		return KindSink
	case 2:
		return KindSource
	}
	return fmt.Sprintf("kind(%d)", code)
}

func mapPage(f *os.File, path, key, kind string) (*Page, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, pageFileSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("stats page %s: map: %w", path, err)
	}
	// The mapping is page-aligned, so every 64-bit word of cells is 8-byte aligned.
	return &Page{path: path, key: key, kind: kind, mem: mem, c: (*cells)(unsafe.Pointer(&mem[0])), labels: newSeriesLabels(key, kind)}, nil
}

// Close unmaps the page; the file stays. The page must not be used afterwards.
func (p *Page) Close() error {
	if p.mem == nil {
		return nil
	}
	mem := p.mem
	p.mem, p.c = nil, nil
	if err := syscall.Munmap(mem); err != nil {
		return fmt.Errorf("stats page %s: unmap: %w", p.path, err)
	}
	return nil
}

// Path is the page file's path.
func (p *Page) Path() string { return p.path }

// Families renders the connector's series that exist, exactly as the runner's own /metrics
// gathers them.
func (p *Page) Families() []*dto.MetricFamily { return p.c.families(p.labels) }

// Stats is the connector's /stats object as the page holds it: counters (created at 0 when absent
// if create is set, as a /stats read does), the status, last error and plugin version the runner
// published ("" status when none did yet), and the attached runner's pid, start and run time. Name
// is the key and enabled true; process figures are left zero.
func (p *Page) Stats(create bool) ConnectorStats { return p.c.stats(p.key, p.kind, create) }

// Status is the status the runner published, as Stats has it ("" when none did yet), without
// composing the rest of the object: the supervisor reads it for every connector on every scrape.
func (p *Page) Status() string { return p.c.readStatus() }

// HeartbeatAge is how long ago the attached runner last beat; a runner beats every HeartbeatEvery
// while its process runs, so an age well beyond that means it is stopped or starved.
func (p *Page) HeartbeatAge() time.Duration { return p.c.heartbeatAge() }

// RunnerPID is the pid of the runner that attached to the page last (0: none yet).
func (p *Page) RunnerPID() int32 { return int32(p.c.pid.Load()) }
