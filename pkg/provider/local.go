package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/atomicfile"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// ActiveVersionsFile is the pointer file of the local provider, inside its
// directory; hidden, so the scan skips it.
const ActiveVersionsFile = ".active_versions.toml"

// filePerm is the mode of the files this provider writes, whatever the umask: connector files
// hold plugin secrets, so only the owner reads them.
const filePerm = 0o600

// Local is the directory provider (docs/config.md §4). The directory is scanned
// once, at NewLocal; afterwards only the pointer file and the files that did
// not load are re-read, and changes go through the provider.
type Local struct {
	dir string
	env []string
	log *slog.Logger

	mu      sync.Mutex
	entries map[connectorID]map[uint64]localEntry
	broken  map[string]Broken // by file: files that did not load, retried on every call
}

type connectorID struct {
	kind config.ConnectorKind
	key  string
}

type localEntry struct {
	conn      config.Connector
	file      string // the file it came from, removed on delete
	createdAt time.Time
}

// NewLocal scans dir: every regular *.toml file directly inside it, except
// hidden files and Cargo.toml, is one connector version; env supplies the
// IGGY_CONNECTORS_<TYPE>_<KEY>_* overrides. An empty dir is an error, a
// missing one is created (and holds no connectors). A file that does not
// load is left out and kept in Broken (each naming its file and key); it is
// read again on every later call, so a fixed file comes in without a restart.
func NewLocal(dir string, env []string, log *slog.Logger) (*Local, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: Connectors configuration directory not provided (connectors.config_dir)", ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create connectors directory %s: %w", dir, err)
	}
	p := &Local{dir: dir, env: env, log: log, entries: map[connectorID]map[uint64]localEntry{}, broken: map[string]Broken{}}
	items, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read connectors directory %s: %w", dir, err)
	}
	for _, item := range items {
		name := item.Name()
		if !isFile(dir, item) || filepath.Ext(name) != ".toml" ||
			strings.HasPrefix(name, ".") || strings.EqualFold(name, "Cargo.toml") {
			continue
		}
		p.load(filepath.Join(dir, name), item)
	}
	return p, nil
}

// isFile reports whether a directory entry is a regular file, or a symlink to one, as upstream's
// Path::is_file: a Kubernetes ConfigMap volume holds every key as a symlink into ..data.
func isFile(dir string, item fs.DirEntry) bool {
	if item.Type().IsRegular() {
		return true
	}
	if item.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, item.Name()))
	return err == nil && info.Mode().IsRegular()
}

// load reads one connector file into entries, or into broken when it does not load.
func (p *Local) load(path string, item fs.DirEntry) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		p.broken[path] = brokenFile(path, nil, fmt.Errorf("%w: read connector file %s: %w", ErrInvalid, path, err))
		return false
	}
	conn, err := config.ParseConnectorWith(path, data, "toml", config.ParseOptions{Env: p.env, DeferStartChecks: true})
	if err != nil {
		p.broken[path] = brokenFile(path, data, err)
		return false
	}
	delete(p.broken, path)
	id := connectorID{conn.Kind, conn.Key}
	if p.entries[id] == nil {
		p.entries[id] = map[uint64]localEntry{}
	}
	if prev, dup := p.entries[id][conn.Version]; dup {
		p.log.Warn("duplicate connector version; the later file wins",
			"kind", conn.Kind, "key", conn.Key, "version", conn.Version, "ignored", prev.file, "used", path)
	}
	p.entries[id][conn.Version] = localEntry{conn: conn, file: path, createdAt: fileCreated(item)}
	return true
}

// retryBroken reads the files that did not load again (caller holds mu): a fixed one joins the
// entries, a removed one is forgotten.
func (p *Local) retryBroken() {
	for _, path := range slices.Sorted(maps.Keys(p.broken)) {
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			delete(p.broken, path)
			continue
		}
		if err == nil && p.load(path, fs.FileInfoToDirEntry(info)) {
			p.log.Info("connector file loads now", "file", path)
		}
	}
}

// Broken lists the files that do not load (read again first), sorted as List.
func (p *Local) Broken(ctx context.Context) []Broken {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	out := slices.Collect(maps.Values(p.broken))
	sortBroken(out)
	return out
}

// brokenError is the load error of a connector that has no version that loads but a file that
// does not; nil when there is none.
func (p *Local) brokenError(id connectorID) error {
	for _, path := range slices.Sorted(maps.Keys(p.broken)) {
		if b := p.broken[path]; b.Kind == id.kind && b.Key == id.key {
			return b.Err
		}
	}
	return nil
}

func fileCreated(item fs.DirEntry) time.Time {
	info, err := item.Info()
	if err != nil {
		return time.Now()
	}
	return info.ModTime()
}

// Dir is the directory the provider reads and writes.
func (p *Local) Dir() string { return p.dir }

// activeVersions is the content of the pointer file.
type activeVersions struct {
	Sinks   map[string]uint64 `toml:"sinks"`
	Sources map[string]uint64 `toml:"sources"`
}

func (a *activeVersions) table(kind config.ConnectorKind) map[string]uint64 {
	if kind == config.KindSink {
		if a.Sinks == nil {
			a.Sinks = map[string]uint64{}
		}
		return a.Sinks
	}
	if a.Sources == nil {
		a.Sources = map[string]uint64{}
	}
	return a.Sources
}

// readPointers re-reads the pointer file; a missing, unreadable or
// malformed file counts as empty (logged), as upstream does.
func (p *Local) readPointers() activeVersions {
	var a activeVersions
	path := filepath.Join(p.dir, ActiveVersionsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a
	}
	if err != nil {
		p.log.Warn("cannot read active versions file; treating it as empty", "file", path, "error", err)
		return a
	}
	if _, err := toml.Decode(string(data), &a); err != nil {
		p.log.Warn("cannot parse active versions file; treating it as empty", "file", path, "error", err)
		return activeVersions{}
	}
	return a
}

func (p *Local) writePointers(a activeVersions) error {
	var buf bytes.Buffer
	out := map[string]map[string]uint64{"sinks": a.Sinks, "sources": a.Sources}
	if out["sinks"] == nil {
		out["sinks"] = map[string]uint64{}
	}
	if out["sources"] == nil {
		out["sources"] = map[string]uint64{}
	}
	if err := toml.NewEncoder(&buf).Encode(out); err != nil {
		return fmt.Errorf("encode active versions: %w", err)
	}
	return atomicfile.Write(filepath.Join(p.dir, ActiveVersionsFile), buf.Bytes(), filePerm)
}

// active picks the active version of one connector: the pointer's if it has
// one (ok false if that version does not exist), else the highest.
func (p *Local) active(id connectorID, pointers activeVersions) (localEntry, bool) {
	versions := p.entries[id]
	if len(versions) == 0 {
		return localEntry{}, false
	}
	if v, ok := pointers.table(id.kind)[id.key]; ok {
		e, exists := versions[v]
		return e, exists
	}
	return versions[slices.Max(slices.Collect(maps.Keys(versions)))], true
}

// List returns the active version of every connector. A connector whose
// pointer names a missing version is left out, as upstream does.
func (p *Local) List(ctx context.Context) ([]config.Connector, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	pointers := p.readPointers()
	ids := slices.Collect(maps.Keys(p.entries))
	slices.SortFunc(ids, compareIDs)
	out := make([]config.Connector, 0, len(ids))
	for _, id := range ids {
		e, ok := p.active(id, pointers)
		if !ok {
			if len(p.entries[id]) > 0 {
				p.log.Warn("active version does not exist; connector left out",
					"kind", id.kind, "key", id.key, "version", pointers.table(id.kind)[id.key])
			}
			continue
		}
		out = append(out, e.conn.Clone())
	}
	return out, nil
}

func compareIDs(a, b connectorID) int {
	if a.kind != b.kind {
		if a.kind == config.KindSink {
			return -1
		}
		return 1
	}
	return strings.Compare(a.key, b.key)
}

// Get returns the active version (pointer, else highest). A key with no
// version that loads but a file that does not gets that file's error.
func (p *Local) Get(ctx context.Context, kind config.ConnectorKind, key string) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	id := connectorID{kind, key}
	pointers := p.readPointers()
	e, ok := p.active(id, pointers)
	if !ok {
		if err := p.brokenError(id); err != nil {
			return config.Connector{}, err
		}
		return config.Connector{}, notFound(kind, key, pointers.table(kind)[key])
	}
	return e.conn.Clone(), nil
}

// Versions returns every version of key, ascending.
func (p *Local) Versions(ctx context.Context, kind config.ConnectorKind, key string) ([]config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	versions := p.entries[connectorID{kind, key}]
	out := make([]config.Connector, 0, len(versions))
	for _, v := range slices.Sorted(maps.Keys(versions)) {
		out = append(out, versions[v].conn.Clone())
	}
	return out, nil
}

// GetVersion returns one version.
func (p *Local) GetVersion(ctx context.Context, kind config.ConnectorKind, key string, version uint64) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	e, ok := p.entries[connectorID{kind, key}][version]
	if !ok {
		return config.Connector{}, notFound(kind, key, version)
	}
	return e.conn.Clone(), nil
}

// CreatedAt reports when a version's file was written (its modification
// time for scanned files).
func (p *Local) CreatedAt(kind config.ConnectorKind, key string, version uint64) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[connectorID{kind, key}][version]
	return e.createdAt, ok
}

// Create writes c as the next version of key to <dir>/<kind>_<key>_<version>.toml
// (one more than the highest version held, or 0). The config is checked
// completely first, the way it will be read back (including env overrides
// and durations), so a rejected config leaves no trace. What is kept and
// returned is the config as given: as upstream, env overrides apply only to
// files the provider loads, so they come into play when the directory is
// scanned again.
func (p *Local) Create(ctx context.Context, kind config.ConnectorKind, key string, c config.Connector) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	if c.Kind != "" && c.Kind != kind {
		return config.Connector{}, fmt.Errorf("%w: a %s config cannot be stored as %s %q", ErrInvalid, c.Kind, kind, key)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	id := connectorID{kind, key}
	c = c.Clone()
	c.Kind, c.Key, c.Version = kind, key, 0
	if versions := p.entries[id]; len(versions) > 0 {
		c.Version = slices.Max(slices.Collect(maps.Keys(versions))) + 1
	}
	data, err := c.MarshalTOML()
	if err != nil {
		return config.Connector{}, err
	}
	path := p.freeFileName(kind, key, c.Version)
	stored, err := config.ParseConnectorWith(path, data, "toml", config.ParseOptions{Env: p.env})
	if err != nil {
		return config.Connector{}, err
	}
	if err := stored.CheckStart(); err != nil {
		return config.Connector{}, err
	}
	if stored.Kind != kind || stored.Key != key || stored.Version != c.Version {
		return config.Connector{}, fmt.Errorf("%w: %s %q: environment overrides change the key or version of a new config", ErrInvalid, kind, key)
	}
	if stored, err = config.ParseConnector(path, data, "toml"); err != nil {
		return config.Connector{}, err
	}
	if err := atomicfile.Write(path, data, filePerm); err != nil {
		return config.Connector{}, fmt.Errorf("store %s %q version %d: %w", kind, key, c.Version, err)
	}
	if p.entries[id] == nil {
		p.entries[id] = map[uint64]localEntry{}
	}
	p.entries[id][c.Version] = localEntry{conn: stored, file: path, createdAt: time.Now()}
	return stored.Clone(), nil
}

// freeFileName is <dir>/<kind>_<key>_<version>.toml unless that file
// exists (it may hold another connector: file names are not identities),
// in which case a numbered variant is used, so no stored file is overwritten.
func (p *Local) freeFileName(kind config.ConnectorKind, key string, version uint64) string {
	base := fmt.Sprintf("%s_%s_%d", kind, key, version)
	path := filepath.Join(p.dir, base+".toml")
	for n := 1; ; n++ {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return path
		}
		path = filepath.Join(p.dir, fmt.Sprintf("%s-%d.toml", base, n))
	}
}

// SetActive rewrites the pointer file so key's active version is version.
func (p *Local) SetActive(ctx context.Context, kind config.ConnectorKind, key string, version uint64) error {
	if err := checkKindKey(kind, key); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retryBroken()
	if _, ok := p.entries[connectorID{kind, key}][version]; !ok {
		return notFound(kind, key, version)
	}
	pointers := p.readPointers()
	pointers.table(kind)[key] = version
	if err := p.writePointers(pointers); err != nil {
		return fmt.Errorf("activate %s %q version %d: %w", kind, key, version, err)
	}
	return nil
}

// Delete removes a version's file (the file it was loaded from) and updates
// the pointer: dropped when no version remains, moved to the highest
// remaining version when it pointed at the deleted one. Without a version
// the pointer's version is deleted; no pointer is ErrNotFound (version 0),
// as upstream reports it.
func (p *Local) Delete(ctx context.Context, kind config.ConnectorKind, key string, version *uint64) error {
	if err := checkKindKey(kind, key); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id := connectorID{kind, key}
	pointers := p.readPointers()
	pointed, hasPointer := pointers.table(kind)[key]
	var target uint64
	switch {
	case version != nil:
		target = *version
	case hasPointer:
		target = pointed
	default:
		return notFound(kind, key, 0)
	}
	e, ok := p.entries[id][target]
	if !ok {
		return notFound(kind, key, target)
	}
	if err := os.Remove(e.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s %q version %d: %w", kind, key, target, err)
	}
	delete(p.entries[id], target)
	if len(p.entries[id]) == 0 {
		delete(p.entries, id)
		delete(pointers.table(kind), key)
	} else if hasPointer && pointed == target {
		pointers.table(kind)[key] = slices.Max(slices.Collect(maps.Keys(p.entries[id])))
	}
	if err := p.writePointers(pointers); err != nil {
		return fmt.Errorf("delete %s %q version %d: update active versions: %w", kind, key, target, err)
	}
	return nil
}

var _ Provider = (*Local)(nil)
