package logging

import (
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Entry is one record kept by a Ring: its JSON and what the logs routes filter and merge on.
type Entry struct {
	Seq   uint64     // 1 for the first record the ring took, counting on
	Time  string     // the record's time (RecordTimeLayout, so entries sort as text)
	Level slog.Level // the record's level, as its word reads (RecordLevel)
	JSON  []byte     // the record, one line
}

// maxRecordBytes bounds one record in a ring: a longer message is cut and its fields left out
// (noted in the "truncated" field), so one huge line cannot push out every other record.
const maxRecordBytes = 16 << 10

// Ring keeps a connector's last log records in memory, bounded in records and in bytes (of
// their JSON): the oldest go first. Followers wait on Changed and read After the last sequence
// number they saw, so a slow follower never holds the logger up.
type Ring struct {
	mu         sync.Mutex
	maxRecords int
	maxBytes   int
	buf        []Entry // circular: n entries from head on; grows up to maxRecords
	head       int     // index of the oldest entry
	n          int
	bytes      int
	seq        uint64
	changed    chan struct{} // closed at the next Add; nil until someone waits
}

// NewRing returns a ring of at most records records and bytes bytes; either 0 keeps nothing.
func NewRing(records, bytes int) *Ring {
	return &Ring{maxRecords: max(records, 0), maxBytes: max(bytes, 0)}
}

// Add keeps rec, dropping the oldest records until both bounds hold.
func (r *Ring) Add(rec Record) {
	if r.maxRecords == 0 || r.maxBytes == 0 {
		return
	}
	b := rec.JSON()
	if len(b) > min(maxRecordBytes, r.maxBytes) {
		rec.Message = cutUTF8(rec.Message, min(maxRecordBytes, r.maxBytes)/2)
		rec.Fields = map[string]any{"truncated": true}
		if b = rec.JSON(); len(b) > r.maxBytes {
			return
		}
	}
	level, _ := ParseRecordLevel(rec.Level)
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n > 0 && (r.n >= r.maxRecords || r.bytes+len(b) > r.maxBytes) {
		r.dropOldest()
	}
	r.seq++
	e := Entry{Seq: r.seq, Time: rec.Time, Level: level, JSON: b}
	if r.n == len(r.buf) { // full slice, below maxRecords: grow, oldest first
		grown := make([]Entry, r.n, min(max(2*r.n, 16), r.maxRecords))
		for i := range r.n {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = append(grown, e), 0
	} else {
		r.buf[(r.head+r.n)%len(r.buf)] = e
	}
	r.n++
	r.bytes += len(b)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *Ring) dropOldest() {
	e := &r.buf[r.head]
	r.bytes -= len(e.JSON)
	*e = Entry{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

// ordered calls f on the entries oldest first until it returns false; r.mu is held.
func (r *Ring) ordered(f func(e *Entry) bool) {
	for i := range r.n {
		if !f(&r.buf[(r.head+i)%len(r.buf)]) {
			return
		}
	}
}

// Tail returns the last n records at minLevel or above, oldest first (n <= 0: all of them).
func (r *Ring) Tail(n int, minLevel slog.Level) []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Entry
	r.ordered(func(e *Entry) bool {
		if e.Level >= minLevel {
			out = append(out, *e)
		}
		return true
	})
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// After returns the records after sequence number seq at minLevel or above, oldest first, and
// the ring's last sequence number (what to pass next time).
func (r *Ring) After(seq uint64, minLevel slog.Level) ([]Entry, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Entry
	r.ordered(func(e *Entry) bool {
		if e.Seq > seq && e.Level >= minLevel {
			out = append(out, *e)
		}
		return true
	})
	return out, r.seq
}

// Changed is closed when the next record is added.
func (r *Ring) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Size is the number of records held and their bytes.
func (r *Ring) Size() (records, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, r.bytes
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// RingHandler is a slog.Handler that keeps every record it is handed in a Ring. It filters
// nothing: put it among a Handler's Also handlers, so the ring holds exactly what the process
// logs, whatever the filter is at the moment.
type RingHandler struct {
	ring    *Ring
	origin  string
	target  string
	secrets config.SecretKeys
	attrs   []slog.Attr // from WithAttrs, nested under the groups open then
	groups  []string
}

// NewRingHandler keeps records in ring as origin (OriginRunner, OriginSupervisor), with target
// for records that name none; secrets masks field values as NewRecord does.
func NewRingHandler(ring *Ring, origin, target string, secrets config.SecretKeys) *RingHandler {
	return &RingHandler{ring: ring, origin: origin, target: target, secrets: secrets}
}

// Enabled is always true: the handler in front decides.
func (h *RingHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps the record.
func (h *RingHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := make([]slog.Attr, 0, len(h.attrs)+r.NumAttrs())
	attrs = append(attrs, h.attrs...)
	var own []slog.Attr
	r.Attrs(func(a slog.Attr) bool { own = append(own, a); return true })
	attrs = append(attrs, nest(h.groups, own)...)
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	h.ring.Add(NewRecord(t, r.Level, r.Message, attrs, h.origin, h.target, h.secrets))
	return nil
}

// WithAttrs returns a handler whose records carry attrs.
func (h *RingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), nest(h.groups, attrs)...)
	return &c
}

// WithGroup returns a handler that nests later attributes under name.
func (h *RingHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// nest wraps attrs in the open groups, innermost last.
func nest(groups []string, attrs []slog.Attr) []slog.Attr {
	if len(attrs) == 0 {
		return nil
	}
	for i := len(groups) - 1; i >= 0; i-- {
		attrs = []slog.Attr{{Key: groups[i], Value: slog.GroupValue(attrs...)}}
	}
	return attrs
}
